"""What a bot sees and says: cards, observations, actions, matches, results and rejections.

Plain frozen dataclasses, no protobuf (arena_sdk.wire translates); each game's own are in its
module of arena_sdk.games, re-exported here. The observation classes mirror the rules engines'
own (arena.games.balloon, arena.games.boom): the same field names, in the same order, but with
`Card` objects where the engines hold card ids, so a bot can read colours and values without a
lookup table. Every `Card` keeps its `id`, which is the engine's card id, so a bot
that simulates with the engines can go back with `card.id`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One card. `id` is its identity within the game's deck (Boom has cards of equal colour and
    value, so compare cards, not colours and values); cards order by id."""

    id: int
    colour: str
    value: int

    def __str__(self) -> str:
        return f"{self.colour} {self.value}"


# ------------------------------------------------------------------------------ the games

# Each game's own types are in its module of arena_sdk.games, and re-exported here.
from .games.balloon import BalloonAction, BalloonObservation, Played  # noqa: E402, F401
from .games.boom import BoomAction, BoomObservation, ParadiseCard, Revealed  # noqa: E402, F401

# The observations and actions of the games the SDK ships (a game registered from outside has
# its own: arena_sdk.games).
Observation: TypeAlias = "BalloonObservation | BoomObservation"
Action: TypeAlias = "BalloonAction | BoomAction"


# ------------------------------------------------------------------------------ matches


@dataclass(frozen=True, slots=True)
class Limits:
    """The match's time rules: a deadline per move, plus a bank for the whole match drawn on
    when a move overruns; after `max_strikes` faults the seat is played by the default policy."""

    move_ms: int
    time_bank_ms: int
    max_strikes: int


@dataclass(slots=True)
class MoveClock:
    """The clock of the move a bot is deciding now, measured from when the SDK received the
    request. The referee's clock started a little earlier (when it sent the request), so keep a
    margin of a few milliseconds."""

    move_ms: int = 0
    time_bank_ms: int = 0
    received_at: float = 0.0  # time.monotonic() when the request arrived

    def elapsed(self) -> float:
        """Seconds since the request arrived."""
        return time.monotonic() - self.received_at

    def remaining(self, use_bank: bool = False) -> float:
        """Seconds left before this move's deadline (plus what is left of the time bank if
        `use_bank`); negative once it has passed."""
        budget_ms = self.move_ms + (self.time_bank_ms if use_bank else 0)
        return budget_ms / 1000 - self.elapsed()


@dataclass(frozen=True, eq=False)
class Match:
    """One match the bot plays a seat of, from MatchStart to MatchEnd.

    `options` holds the game's variant options by name (Boom: advanced, ruse, series; Balloon:
    none), so `arena.games.make_game(match.game, match.num_players, **match.options)` builds
    the same game for simulation. `rng` is seeded from `bot_seed`: a bot that draws all its
    randomness from it plays the same way when the match is replayed. `clock` is the clock of the
    move being decided (updated before each act()).
    """

    match_id: str
    game: str  # "balloon", "boom" (arena_sdk.games)
    num_players: int
    options: Mapping[str, bool]
    seat: int
    seat_names: tuple[str, ...]
    limits: Limits
    bot_seed: int
    rng: random.Random = field(init=False, repr=False)
    clock: MoveClock = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rng", random.Random(self.bot_seed))
        object.__setattr__(self, "clock", MoveClock())


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How a match ended, for every seat: `scores` and `ranks` (0 = best, equal scores share a
    rank) are indexed by seat; `reason` is "completed" or why it ended otherwise;
    `final_observation` is the last thing this seat saw, hands revealed (None if not sent)."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    reason: str
    final_observation: Observation | None


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why the referee did not accept one of the bot's replies (or got none in time).

    `fault` is one of "timeout", "illegal_action", "unknown_request", "disconnect", "crash",
    "malformed" (as in arena.results); `played_instead` is the default action the referee
    played for the seat, if it did.
    """

    request_id: int
    fault: str
    detail: str
    played_instead: Action | None
