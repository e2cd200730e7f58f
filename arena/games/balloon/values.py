"""Balloon Challenge's public values: a card on the table (Played) and what one seat sees
(BalloonObservation), mirrored by the protobuf protocol (keep their fields in step with
arena.proto). Their own module, run as it is: the compiled build of the engine (engine.py,
arena/games/engines.py) and the plain one build the same classes, and a frozen dataclass
compiled by mypyc is slower to build than this one."""

from __future__ import annotations

from dataclasses import dataclass


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
