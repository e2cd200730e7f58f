"""Replay frames: a stored (or live, partial) replay re-run through its engine and turned into
plain, display-ready JSON for the replay viewer.

A frame is the match after one more move (frame 0: the deal, before any move). Each frame holds
the public picture (info lines, the table, each seat's public facts), the events the move caused,
in words, and, unless `with_hands` is off, every seat's hand: the viewer shows a seat's view as
the public picture plus that seat's hand and its own move in full. The public view never shows a
move's action, only the events it caused, since in Boom the cards are chosen face down.

Per-game rendering lives here (one function pair per game); an unknown game falls back to a
generic rendering of the observation's fields, so a new engine shows something at once.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Sequence

from arena import replay as replay_mod
from arena.games import game_from_config
from arena.games.base import Event

# How a frame names a card: an int is a card id, looked up in the game's card_legend(); a list
# [id, tag] is a card id with a note (who played it, "revealed", ...); a list [text, colour] is
# a literal card (a guard limit, say). Ids keep a 200-move replay's frames small.
Card = list[str]  # [text, colour]: colour names a CSS class


# ----------------------------------------------------------------------------------- balloon


def _balloon_legend() -> dict[int, Card]:
    from arena.games import balloon

    return {i: [f"{c.colour} {c.value}", c.colour] for i, c in enumerate(balloon.CARDS)}


def _balloon_public(obs: Any, names: Sequence[str], game: Any) -> dict[str, Any]:
    size = len(obs.table) + len(obs.face_up)
    to_act = names[obs.to_act] if 0 <= obs.to_act < len(names) else "nobody (match over)"
    info = [
        ["round", f"{obs.round} of 5"],
        ["turn", str(obs.turn)],
        ["balloon size", str(size)],
        ["chips in the middle", str(obs.chips_in_middle)],
        ["first drop-out chip", "still there" if obs.first_drop_out_chip else "taken"],
        ["to act", to_act],
    ]
    # The balloon first, its size being what every volume is measured against (rules:
    # "Size and volume"); then the rows, one per turn, as the cards lie on the table.
    table: list[dict[str, Any]] = [
        {"label": "balloon size", "cards": [], "kind": "balloon", "value": size}
    ]
    if obs.face_up:
        table.append({"label": "face up", "cards": list(obs.face_up)})
    rows: dict[int, list[Any]] = {}
    for p in obs.table:
        rows.setdefault(p.turn, []).append([p.card, names[p.seat]])
    for turn in sorted(rows):
        table.append({"label": f"row {turn}", "cards": rows[turn]})
    seats = []
    for s in range(obs.num_players):
        out = obs.dropped_out[s]
        seats.append(
            {
                "stats": [
                    ["total", str(obs.totals[s])],
                    ["chips", str(obs.chips[s])],
                    ["cards in hand", str(obs.hand_sizes[s])],
                    ["status", f"out in turn {out}" if out else "in"],
                ],
                "cards": [],
            }
        )
    return {
        "info": info,
        "table": table,
        "seats": seats,
        "to_act": [obs.to_act] if obs.to_act >= 0 else [],
    }


def _balloon_hand(obs: Any) -> list[int]:
    return list(obs.hand)


def _balloon_event(ev: Event, names: Sequence[str]) -> str | None:
    from arena.games import balloon

    d = ev.data or {}
    who = names[ev.seat] if 0 <= ev.seat < len(names) else "table"
    if ev.kind == "play":
        chips = (
            f", takes {d['chips']} chip" + ("s" if d["chips"] != 1 else "")
            if d.get("chips")
            else ""
        )
        return f"{who} plays {balloon.card_name(d['card'])} in row {d['turn']}{chips}"
    if ev.kind == "drop_out":
        chips = d.get("chips", 0)
        return f"{who} drops out in turn {d['turn']}" + (f", takes {chips} chips" if chips else "")
    if ev.kind == "round_start":
        return (
            f"round {d['round']} starts: {names[d['start_seat']]} starts, "
            f"{d['chips_in_middle']} chips in the middle"
        )
    if ev.kind == "round_end":
        parts = [
            f"{names[s]} volume {v}, scores {d['round_scores'][s]}"
            for s, v in enumerate(d["volumes"])
        ]
        hands = "; ".join(
            f"{names[s]} held {', '.join(balloon.card_name(c) for c in h) or '-'}"
            for s, h in enumerate(d["hands"])
        )
        return f"round {d['round']} ends, balloon size {d['size']}: {'; '.join(parts)}. {hands}"
    if ev.kind == "match_end":
        return "match over: " + ", ".join(f"{names[s]} {t}" for s, t in enumerate(d["totals"]))
    if ev.kind == "sampled":
        return None  # determinization bookkeeping, not something that happened at the table
    return None


# -------------------------------------------------------------------------------------- boom


def _boom_legend() -> dict[int, Card]:
    from arena.games import boom

    legend = {
        c: [f"{boom.COLOURS[c // 10]} {boom.VALUES[c % 10]}", boom.COLOURS[c // 10]]
        for c in range(boom.NUM_CARDS)
    }
    legend[boom.RUSE] = ["ruse", "ruse"]
    return legend


def _boom_name(card: int) -> str:
    from arena.games import boom

    return "ruse" if card == boom.RUSE else f"{boom.COLOURS[card // 10]} {boom.VALUES[card % 10]}"


def _boom_public(obs: Any, names: Sequence[str], game: Any) -> dict[str, Any]:
    from arena.games import boom

    step = {0: "match over", 1: "first escape", 2: "second escape"}.get(obs.step, str(obs.step))
    info = [
        ["game", str(obs.game_number)],
        ["round", str(obs.round)],
        ["step", step],
        [
            "guard",
            f"#{obs.guard + 1}: "
            + ", ".join(f"{c} {lim}" for c, lim in zip(boom.COLOURS, obs.guard_limits)),
        ],
        ["guards left", str(obs.guards_left)],
    ]
    # The guard card as it lies on the table: its number and a limit per colour, left to right.
    table = [
        {
            "label": f"guard #{obs.guard + 1}",
            "kind": "guard",
            "value": obs.guard + 1,
            "cards": [[f"{c} {lim}", c] for c, lim in zip(boom.COLOURS, obs.guard_limits)],
        }
    ]
    if obs.discarded:
        table.append({"label": "discarded face up", "cards": list(obs.discarded)})
    seats = []
    for s in range(obs.num_players):
        stats = [
            ["score", str(obs.scores[s])],
            ["cards in hand", str(obs.hand_sizes[s])],
            ["this step", "chosen" if obs.acted[s] else "choosing"],
        ]
        if game.series:
            stats.insert(1, ["series total (finished games)", str(obs.series_totals[s])])
        shown: list[Any] = [[c, "revealed"] for c in obs.revealed[s]]
        shown += [
            [p.card, "paradise" if p.face_up else "paradise, face down"] for p in obs.paradise[s]
        ]
        seats.append({"stats": stats, "cards": shown})
    to_act = [s for s in range(obs.num_players) if obs.step and not obs.acted[s]]
    return {"info": info, "table": table, "seats": seats, "to_act": to_act}


def _boom_hand(obs: Any) -> list[int]:
    from arena.games import boom

    return [*obs.hand, boom.RUSE] if obs.has_ruse else list(obs.hand)


def _boom_event(ev: Event, names: Sequence[str]) -> str | None:
    from arena.games import boom

    d = ev.data or {}
    who = names[ev.seat] if 0 <= ev.seat < len(names) else "table"

    def cards(cs: Iterable[int]) -> str:
        return ", ".join(_boom_name(c) for c in cs) or "nothing"

    if ev.kind == "guard":
        limits = ", ".join(f"{c} {lim}" for c, lim in zip(boom.COLOURS, d["limits"]))
        again = " (guards reshuffled)" if d.get("reshuffled") else ""
        return f"round {d['round']}: guard #{d['guard'] + 1} revealed{again}: {limits}"
    if ev.kind == "reveal":
        which = "first" if d["step"] == 1 else "second"
        return f"{which} escape revealed: " + "; ".join(
            f"{names[s]} {cards(cs)}" for s, cs in enumerate(d["cards"])
        )
    if ev.kind == "escape":
        side = "face up" if d["face_up"] else "face down"
        return (
            f"{who}'s {d['colour']} cards escape to paradise {side} ({cards(d['cards'])}), "
            f"+{d['points']}"
        )
    if ev.kind == "take_back":
        return f"{who} takes back {d['colour']} ({cards(d['cards'])})"
    if ev.kind == "ruse_return":
        return f"{who} takes back the ruse card"
    if ev.kind == "fewest_cards_bonus":
        return f"{who} holds the fewest cards ({d['cards_left']}): +{d['points']}"
    if ev.kind == "game_start":
        return f"game {d['game']} dealt: " + ", ".join(
            f"{names[s]} {n} cards" for s, n in enumerate(d["hand_sizes"])
        )
    if ev.kind == "game_end":
        end = " (stalemate)" if d.get("stalemate") else ""
        return f"game {d['game']} over{end}: " + ", ".join(
            f"{names[s]} {p}" for s, p in enumerate(d["scores"])
        )
    if ev.kind == "series_end":
        return "series over: " + ", ".join(f"{names[s]} {t}" for s, t in enumerate(d["totals"]))
    return None


# ----------------------------------------------------------------------------------- generic


def _generic_public(obs: Any, names: Sequence[str], game: Any) -> dict[str, Any]:
    is_instance = dataclasses.is_dataclass(obs) and not isinstance(obs, type)
    fields = dataclasses.asdict(obs) if is_instance else dict(vars(obs))
    fields.pop("hand", None)
    info = [[k, str(v)] for k, v in fields.items()]
    return {
        "info": info,
        "table": [],
        "seats": [{"stats": [], "cards": []} for _ in names],
        "to_act": [],
    }


def _generic_hand(obs: Any) -> list[Any]:
    return [[str(c), ""] for c in getattr(obs, "hand", ())]


def _generic_legend() -> dict[int, Card]:
    return {}


def _generic_event(ev: Event, names: Sequence[str]) -> str | None:
    who = names[ev.seat] if 0 <= ev.seat < len(names) else "table"
    data = ", ".join(f"{k} {v}" for k, v in (ev.data or {}).items())
    return f"{ev.kind} ({who})" + (f": {data}" if data else "")


# game -> (public picture, hand, event text, card legend)
_RENDERERS: dict[str, tuple[Callable, Callable, Callable, Callable]] = {
    "balloon": (_balloon_public, _balloon_hand, _balloon_event, _balloon_legend),
    "boom": (_boom_public, _boom_hand, _boom_event, _boom_legend),
}
_GENERIC = (_generic_public, _generic_hand, _generic_event, _generic_legend)


def card_legend(game: str) -> dict[int, Card]:
    """Card id -> [text, colour] for the cards that frames of `game` name by id."""
    return _RENDERERS.get(game, _GENERIC)[3]()


def _event_text(render: Callable, ev: Event, names: Sequence[str]) -> str | None:
    try:
        return render(ev, names)
    except (KeyError, IndexError, TypeError):
        # An event shape this renderer does not know (a newer engine): say it plainly.
        return _generic_event(ev, names)


# ------------------------------------------------------------------------------------ frames


def _action(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def build_frames(
    doc: dict[str, Any], *, with_hands: bool = True, since: int = 0
) -> list[dict[str, Any]]:
    """The frames of a replay document (arena.replay's format; `moves` may be a live match's
    moves so far), from frame `since` on. Raises replay.ReplayError if it does not re-run.

    Each frame: {"n", "move": {seat, text, default, ms} or None, "events": [str], "info",
    "table", "seats", "scores", "to_act", and "hands" (per seat, a list of cards) when
    `with_hands`}. `move.text` is left out when hands are (a live match's spectators must not
    see face-down choices)."""
    doc = replay_mod.check(doc)
    names = [str(n) for n in doc["seat_names"]]
    try:
        # By the rules of the engine version it was played with (a live match's: the current).
        game = game_from_config(doc["config"], doc.get("engine_version"))
    except Exception as err:  # ConfigError, KeyError, TypeError: a config this Arena cannot build
        raise replay_mod.ReplayError(f"the replay's configuration is not playable: {err}") from None
    public, hand, event, _legend = _RENDERERS.get(game.name, _GENERIC)
    k = game.num_players
    if len(names) != k:
        raise replay_mod.ReplayError(f"the replay names {len(names)} seats but its game has {k}")

    def frame(n: int, state: Any, move: dict | None, events: Iterable[Event]) -> dict[str, Any]:
        out = public(state.public_observation(), names, game)
        out["scores"] = list(state.scores())  # the engine's match totals so far
        out["n"] = n
        out["move"] = move
        out["events"] = [t for t in (_event_text(event, e, names) for e in events) if t]
        if with_hands:
            out["hands"] = [hand(state.observation(s)) for s in range(k)]
        return out

    frames: list[dict[str, Any]] = []
    start = game.new_match(doc["seed"])
    if since <= 0:
        frames.append(frame(0, start, None, start.events))
    for step in replay_mod.rerun(doc):
        n = step.index + 1
        if n < since:
            continue
        move: dict[str, Any] = {
            "seat": step.seat,
            "default": step.default,
            "ms": round(float(step.elapsed_ms), 1),
        }
        if with_hands:
            move["text"] = game.action_to_string(_action(step.action))
        frames.append(frame(n, step.state, move, step.events))
    return frames
