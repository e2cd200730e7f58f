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
from typing import Any, Callable, Iterable, Protocol, Sequence, cast

from arena import replay as replay_mod
from arena.games import ConfigError, game_from_config, game_kit
from arena.games.base import Event

# How a frame names a card: an int is a card id, looked up in the game's card_legend(); a list
# [id, tag] is a card id with a note (who played it, "revealed", ...); a list [text, colour] is
# a literal card (a guard limit, say). Ids keep a 200-move replay's frames small.
Card = list[str]  # [text, colour]: colour names a CSS class


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


class GameFrames(Protocol):
    """What a game's frames module (GameKit.frames, e.g. arena/games/boom/frames.py) has."""

    def public(self, obs: Any, names: Sequence[str], game: Any) -> dict[str, Any]:
        """The public picture: {"info", "table", "seats", "to_act"} (build_frames says more)."""
        ...

    def hand(self, obs: Any) -> list[Any]: ...

    def event(self, ev: Event, names: Sequence[str]) -> str | None: ...

    def legend(self) -> dict[int, Card]: ...


_GENERIC = (_generic_public, _generic_hand, _generic_event, _generic_legend)


def _renderers(game: str) -> tuple[Callable, Callable, Callable, Callable]:
    """(public picture, hand, event text, card legend) of `game`: its frames module's, or plain
    ones for a game that has none (or that this Arena does not know)."""
    try:
        kit = game_kit(game)
    except ConfigError:
        return _GENERIC
    if kit.frames is None:
        return _GENERIC
    module = cast(GameFrames, kit.load("frames"))
    return module.public, module.hand, module.event, module.legend


def card_legend(game: str) -> dict[int, Card]:
    """Card id -> [text, colour] for the cards that frames of `game` name by id."""
    return _renderers(game)[3]()


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
    public, hand, event, _legend = _renderers(game.name)
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
