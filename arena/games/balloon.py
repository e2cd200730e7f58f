"""Balloon Challenge: the rules engine (see docs/rules/balloon.md). SKELETON: to be implemented.

Cards are ints 0..49, index into CARDS. Actions are ints: a card id plays that card; DROP_OUT
drops out of the round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class Card(NamedTuple):
    colour: str
    value: int


@dataclass(frozen=True, slots=True)
class Played:
    """A card on the table: who played it, in which turn (row, 1-based)."""

    seat: int
    card: int
    turn: int


@dataclass(frozen=True, slots=True)
class BalloonObservation:
    """What one seat may see (seat == -1: a spectator, with an empty hand)."""

    seat: int
    num_players: int
    round: int  # 1..5
    turn: int  # the row being played, 1-based
    start_seat: int
    to_act: int  # seat to act now, -1 when the match is over
    hand: tuple[int, ...]  # own cards, sorted
    hand_sizes: tuple[int, ...]
    face_up: tuple[int, ...]  # the two-player start of the balloon
    table: tuple[Played, ...]  # cards played this round, in order
    dropped_out: tuple[int, ...]  # turn in which each seat dropped out this round, 0 = still in
    chips: tuple[int, ...]  # chips each seat holds this round
    chips_in_middle: int
    first_drop_out_chip: bool  # the set-aside chip is still there
    totals: tuple[int, ...]  # scores of the finished rounds
