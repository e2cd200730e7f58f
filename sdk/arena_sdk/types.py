"""What a bot sees and says: cards, observations, actions, matches, results and rejections.

Plain frozen dataclasses, no protobuf (arena_sdk.wire translates). The observation classes
mirror the rules engines' own (arena.games.balloon, arena.games.boom): the same field names, in the
same order, but with `Card` objects where the engines hold card ids, so a bot can read colours and
values without a lookup table. Every `Card` keeps its `id`, which is the engine's card id, so a bot
that simulates with the engines can go back with `card.id`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One card. `id` is its identity within the game's deck (Boom has cards of equal colour and
    value, so compare cards, not colours and values); cards order by id."""

    id: int
    colour: str
    value: int

    def __str__(self) -> str:
        return f"{self.colour} {self.value}"


# ------------------------------------------------------------------------------ Balloon Challenge


@dataclass(frozen=True, slots=True)
class Played:
    """A card on the Balloon Challenge table: who played it, in which turn (row, 1-based)."""

    seat: int
    card: Card
    turn: int


@dataclass(frozen=True, slots=True)
class BalloonObservation:
    """What one seat may see in Balloon Challenge (seat == -1: a spectator, with an empty hand)."""

    seat: int
    num_players: int
    round: int  # 1..5
    turn: int  # the row being played, 1-based
    start_seat: int
    to_act: int  # seat to act now, -1 when the match is over
    hand: tuple[Card, ...]  # own cards, sorted
    hand_sizes: tuple[int, ...]
    face_up: tuple[Card, ...]  # the two-player start of the balloon
    table: tuple[Played, ...]  # cards played this round, in order
    dropped_out: tuple[int, ...]  # turn in which each seat dropped out this round, 0 = still in
    chips: tuple[int, ...]  # chips each seat holds this round
    chips_in_middle: int
    first_drop_out_chip: bool  # the set-aside chip is still there
    totals: tuple[int, ...]  # scores of the finished rounds


@dataclass(frozen=True, slots=True)
class BalloonAction:
    """A Balloon Challenge move: play one card from the hand, or drop out of the round.

    `BalloonAction(play=card)` or `BalloonAction(drop_out=True)`; exactly one of the two.
    """

    play: Card | None = None
    drop_out: bool = False

    def __post_init__(self) -> None:
        if (self.play is None) == (not self.drop_out):
            raise ValueError(
                "a BalloonAction either plays a card or drops out: give play=card or "
                f"drop_out=True, not play={self.play!r}, drop_out={self.drop_out!r}"
            )

    def __str__(self) -> str:
        return "drop out" if self.drop_out else f"play {self.play}"


# ------------------------------------------------------------------------------ Boom: Runaway


@dataclass(frozen=True, slots=True)
class Revealed:
    """The cards one seat has revealed in the current Boom round; `ruse`: its ruse card too."""

    cards: tuple[Card, ...]
    ruse: bool


@dataclass(frozen=True, slots=True)
class ParadiseCard:
    """A card in a seat's Boom paradise; a face-down one shows only to its owner."""

    card: Card
    face_up: bool


@dataclass(frozen=True, slots=True)
class BoomObservation:
    """What one seat may see in Boom: Runaway (seat == -1: a spectator, with an empty hand)."""

    seat: int
    num_players: int
    game_number: int  # 1-based; above 1 only in longer play (a series)
    round: int  # 1-based within the game
    step: int  # 1 = first escape, 2 = second escape, 0 = match over
    guard: int  # index of the revealed guard card
    guard_limits: tuple[int, ...]  # per colour
    guards_left: int  # guard cards left in the deck before a reshuffle
    guards_used: tuple[int, ...]  # guard cards revealed since the last shuffle, current one last
    to_play: int  # how many cards this seat plays in this step (0: none now)
    hand: tuple[Card, ...]  # own bomb cards, sorted
    has_ruse: bool  # own ruse card in hand
    hand_sizes: tuple[int, ...]  # bomb cards in each seat's hand
    acted: tuple[bool, ...]  # who has already chosen in this step
    revealed: tuple[Revealed, ...]  # per seat, this round
    paradise: tuple[tuple[ParadiseCard, ...], ...]  # per seat
    discarded: tuple[Card, ...]  # cards discarded face up (advanced game)
    scores: tuple[int, ...]  # this game's scores so far
    series_totals: tuple[int, ...]  # totals of the finished games of the series


@dataclass(frozen=True, slots=True)
class BoomAction:
    """A Boom step: the bomb cards played (kept sorted by id, so an action built by hand equals
    the legal one with the same cards) and whether the seat's own ruse card is among them."""

    cards: tuple[Card, ...] = ()
    ruse: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "cards", tuple(sorted(self.cards)))

    def __str__(self) -> str:
        parts = [str(card) for card in self.cards] + (["ruse"] if self.ruse else [])
        return "play " + (", ".join(parts) if parts else "nothing")


Observation = BalloonObservation | BoomObservation
Action = BalloonAction | BoomAction


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
    game: str  # "balloon" or "boom"
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
