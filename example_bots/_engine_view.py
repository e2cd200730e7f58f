"""The bridge between the SDK and the rules engines, shared by the example bots that think in
engine terms (the heuristic and strong bots).

It owns, in one place:
- turning an SDK observation (frozen dataclasses with `Card` objects) back into the engine's own
  observation (card ids), and SDK actions into engine actions, so that a bot's policy is a pure
  function of engine values that tests can call in-process, without gRPC;
- `PolicyBot`, the thin SDK class around such a policy (`policy_bot` makes one): it converts,
  hands the policy the match's rng and a deadline, and maps the engine action it picks back to
  the SDK's legal one.

A policy is `choose(game, observation, legal_actions, rng, deadline) -> action`, all in engine
terms: `game` is the match's engine game (player count and variant options, for simulation);
`deadline` is a `time.monotonic()` instant after which a search must stop (None: no wall-clock
cut-off, so the policy is a pure function of its arguments and the rng).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

from arena.games import Game, make_game
from arena.games import balloon as balloon_engine
from arena.games import boom as boom_engine
from arena_sdk import (
    BalloonAction,
    BalloonObservation,
    BoomAction,
    BoomObservation,
    Bot,
    Match,
)

Policy = Callable[[Game, Any, Sequence[Any], random.Random, "float | None"], Any]

# Share of the time left for a move that a search may use: the rest covers the reply's way back
# and the gap between the referee starting its clock and the SDK receiving the request.
DEADLINE_SHARE = 0.5
DEADLINE_MARGIN_S = 0.05


def _ids(cards: Sequence[Any]) -> tuple[int, ...]:
    return tuple(c.id for c in cards)


def _boom_cards(cards: Sequence[Any], ruse: bool) -> tuple[int, ...]:
    """Boom's engine encoding of cards played or revealed: sorted card ids, RUSE last."""
    ids = tuple(sorted(c.id for c in cards))
    return ids + (boom_engine.RUSE,) if ruse else ids


# Per SDK observation type: the engine's observation type, and the fields that differ, those
# that hold cards (the SDK's `Card` objects, the engine's card ids), each with its conversion.
# Every other field has the same name and value on both sides.
_ENGINE_VIEW: dict[type, tuple[type, dict[str, Callable[[Any], Any]]]] = {
    BalloonObservation: (
        balloon_engine.BalloonObservation,
        {
            "hand": _ids,
            "face_up": _ids,
            "table": lambda table: tuple(
                balloon_engine.Played(p.seat, p.card.id, p.turn) for p in table
            ),
        },
    ),
    BoomObservation: (
        boom_engine.BoomObservation,
        {
            "hand": _ids,
            "revealed": lambda revealed: tuple(_boom_cards(r.cards, r.ruse) for r in revealed),
            "paradise": lambda paradise: tuple(
                tuple(boom_engine.ParadiseCard(p.card.id, p.face_up) for p in pile)
                for pile in paradise
            ),
            "discarded": _ids,
        },
    ),
}


def engine_observation(obs: Any) -> Any:
    """The engine's own observation of what the SDK observation `obs` shows."""
    view = _ENGINE_VIEW.get(type(obs))
    if view is None:
        raise TypeError(f"no engine view for an observation of type {type(obs).__name__}")
    engine_type, card_fields = view
    values = {}
    for f in fields(engine_type):
        value = getattr(obs, f.name)
        convert = card_fields.get(f.name)
        values[f.name] = value if convert is None else convert(value)
    return engine_type(**values)


def engine_action(action: Any) -> Any:
    """The engine's encoding of an SDK action: Balloon an int (card id or DROP_OUT), Boom a
    sorted tuple of card ids with RUSE last."""
    if isinstance(action, BalloonAction):
        return balloon_engine.DROP_OUT if action.drop_out else action.play.id
    if isinstance(action, BoomAction):
        return _boom_cards(action.cards, action.ruse)
    raise TypeError(f"no engine encoding for an action of type {type(action).__name__}")


def move_deadline(match: Match) -> float:
    """The monotonic instant by which a search for this move should have answered."""
    left = match.clock.remaining()
    budget = min(left * DEADLINE_SHARE, left - DEADLINE_MARGIN_S)
    return time.monotonic() + max(0.0, budget)


class PolicyBot(Bot):
    """An SDK bot whose decisions are made by a pure engine-level policy (see the module doc)."""

    #: The game this bot plays; act() refuses another (a clear error beats a wrong move).
    game: str = ""

    #: The policy, in engine terms: a plain function (a staticmethod here).
    policy: Policy

    def act(self, observation, legal_actions, match: Match):
        if match.game != self.game:
            raise ValueError(f"{self.name} plays {self.game}, not {match.game}")
        by_engine = {engine_action(a): a for a in legal_actions}
        choice = self.policy(
            match_game(match),
            engine_observation(observation),
            tuple(by_engine),
            match.rng,
            move_deadline(match),
        )
        return by_engine[choice]


def policy_bot(
    policy: Policy,
    *,
    name: str,
    game: str,
    quick: bool = False,
    max_concurrent: int = Bot.max_concurrent,
) -> PolicyBot:
    """The SDK bot that plays `policy` in `game`: each engine-level example bot is one. An SDK
    bot declares its name, quick and max_concurrent on its class, so this makes the class."""
    attrs = {
        "name": name,
        "game": game,
        "quick": quick,
        "max_concurrent": max_concurrent,
        "policy": staticmethod(policy),
    }
    return type(PolicyBot.__name__, (PolicyBot,), attrs)()


_games: dict[tuple[str, int, tuple[tuple[str, Any], ...]], Game] = {}


def match_game(match: Match) -> Game:
    """The engine game of `match` (games are immutable, so one per configuration is shared)."""
    key = (match.game, match.num_players, tuple(sorted(match.options.items())))
    game = _games.get(key)
    if game is None:
        game = _games[key] = make_game(match.game, match.num_players, **match.options)
    return game
