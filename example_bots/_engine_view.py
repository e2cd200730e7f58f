"""The bridge between the SDK and the rules engines, shared by the example bots that think in
engine terms (the heuristic and strong bots).

It owns, in one place:
- turning an SDK observation (frozen dataclasses with `Card` objects) back into the engine's own
  observation (card ids), and SDK actions into engine actions, so that a bot's policy is a pure
  function of engine values that tests can call in-process, without gRPC;
- `PolicyBot`, the thin SDK class around such a policy: it converts, hands the policy the
  match's rng and a deadline, and maps the engine action it picks back to the SDK's legal one.

A policy is `choose(game, observation, legal_actions, rng, deadline) -> action`, all in engine
terms: `game` is the match's engine game (player count and variant options, for simulation);
`deadline` is a `time.monotonic()` instant after which a search must stop (None: no wall-clock
cut-off, so the policy is a pure function of its arguments and the rng).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
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


def balloon_observation(obs: BalloonObservation) -> balloon_engine.BalloonObservation:
    return balloon_engine.BalloonObservation(
        seat=obs.seat,
        num_players=obs.num_players,
        round=obs.round,
        turn=obs.turn,
        start_seat=obs.start_seat,
        to_act=obs.to_act,
        hand=tuple(c.id for c in obs.hand),
        hand_sizes=tuple(obs.hand_sizes),
        face_up=tuple(c.id for c in obs.face_up),
        table=tuple(balloon_engine.Played(p.seat, p.card.id, p.turn) for p in obs.table),
        dropped_out=tuple(obs.dropped_out),
        chips=tuple(obs.chips),
        chips_in_middle=obs.chips_in_middle,
        first_drop_out_chip=obs.first_drop_out_chip,
        totals=tuple(obs.totals),
    )


def _boom_revealed(cards: Sequence[Any], ruse: bool) -> tuple[int, ...]:
    ids = tuple(sorted(c.id for c in cards))
    return ids + (boom_engine.RUSE,) if ruse else ids


def boom_observation(obs: BoomObservation) -> boom_engine.BoomObservation:
    return boom_engine.BoomObservation(
        seat=obs.seat,
        num_players=obs.num_players,
        game_number=obs.game_number,
        round=obs.round,
        step=obs.step,
        guard=obs.guard,
        guard_limits=tuple(obs.guard_limits),
        guards_left=obs.guards_left,
        guards_used=tuple(obs.guards_used),
        to_play=obs.to_play,
        hand=tuple(c.id for c in obs.hand),
        has_ruse=obs.has_ruse,
        hand_sizes=tuple(obs.hand_sizes),
        acted=tuple(obs.acted),
        revealed=tuple(_boom_revealed(r.cards, r.ruse) for r in obs.revealed),
        paradise=tuple(
            tuple(boom_engine.ParadiseCard(p.card.id, p.face_up) for p in pile)
            for pile in obs.paradise
        ),
        discarded=tuple(c.id for c in obs.discarded),
        scores=tuple(obs.scores),
        series_totals=tuple(obs.series_totals),
    )


def engine_observation(obs: Any) -> Any:
    if isinstance(obs, BalloonObservation):
        return balloon_observation(obs)
    if isinstance(obs, BoomObservation):
        return boom_observation(obs)
    raise TypeError(f"no engine view for an observation of type {type(obs).__name__}")


def engine_action(action: Any) -> Any:
    """The engine's encoding of an SDK action: Balloon an int (card id or DROP_OUT), Boom a
    sorted tuple of card ids with RUSE last."""
    if isinstance(action, BalloonAction):
        return balloon_engine.DROP_OUT if action.drop_out else action.play.id
    if isinstance(action, BoomAction):
        ids = tuple(sorted(c.id for c in action.cards))
        return ids + (boom_engine.RUSE,) if action.ruse else ids
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


_games: dict[tuple[str, int, tuple[tuple[str, Any], ...]], Game] = {}


def match_game(match: Match) -> Game:
    """The engine game of `match` (games are immutable, so one per configuration is shared)."""
    key = (match.game, match.num_players, tuple(sorted(match.options.items())))
    game = _games.get(key)
    if game is None:
        game = _games[key] = make_game(match.game, match.num_players, **match.options)
    return game
