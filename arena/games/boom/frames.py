"""Boom: Runaway in the web's replay viewer: a frame's public picture of the table, a seat's
hand, an event's text and the card legend (the functions arena/web/frames.py's GameFrames
names)."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from arena.games import boom
from arena.games.base import Event

Card = list[str]  # [text, colour]: colour names a CSS class


def legend() -> dict[int, Card]:
    legend = {
        c: [f"{boom.COLOURS[c // 10]} {boom.VALUES[c % 10]}", boom.COLOURS[c // 10]]
        for c in range(boom.NUM_CARDS)
    }
    legend[boom.RUSE] = ["ruse", "ruse"]
    return legend


def card_name(card: int) -> str:
    return "ruse" if card == boom.RUSE else f"{boom.COLOURS[card // 10]} {boom.VALUES[card % 10]}"


def public(obs: Any, names: Sequence[str], game: Any) -> dict[str, Any]:
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


def hand(obs: Any) -> list[int]:
    return [*obs.hand, boom.RUSE] if obs.has_ruse else list(obs.hand)


def event(ev: Event, names: Sequence[str]) -> str | None:
    d = ev.data or {}
    who = names[ev.seat] if 0 <= ev.seat < len(names) else "table"

    def cards(cs: Iterable[int]) -> str:
        return ", ".join(card_name(c) for c in cs) or "nothing"

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
