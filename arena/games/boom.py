"""Boom: Runaway: the rules engine (see docs/rules/boom.md). SKELETON: to be implemented.

Bomb cards are ints 0..49: colour COLOURS[id // 10], value VALUES[id % 10]. RUSE (50) stands
for a seat's own ruse card. An action is a sorted tuple of the card ids a seat plays in the
current step.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ParadiseCard:
    card: int
    face_up: bool


@dataclass(frozen=True, slots=True)
class BoomObservation:
    """What one seat may see (seat == -1: a spectator, with an empty hand)."""

    seat: int
    num_players: int
    game_number: int  # 1-based; above 1 only in longer play (a series)
    round: int  # 1-based within the game
    step: int  # 1 = first escape, 2 = second escape, 0 = match over
    guard: int  # index into GUARDS of the revealed guard card
    guard_limits: tuple[int, ...]  # per colour, in COLOURS order
    guards_left: int  # guard cards left in the deck before a reshuffle
    guards_used: tuple[int, ...]  # guard cards revealed since the last shuffle, current one last
    to_play: int  # how many cards this seat plays in this step (0: none now)
    hand: tuple[int, ...]  # own bomb cards, sorted
    has_ruse: bool  # own ruse card in hand
    hand_sizes: tuple[int, ...]  # bomb cards in each seat's hand
    acted: tuple[bool, ...]  # who has already chosen in this step (face-down cards on the table)
    revealed: tuple[tuple[int, ...], ...]  # cards each seat has revealed this round (RUSE = 50)
    paradise: tuple[tuple[ParadiseCard, ...], ...]  # per seat
    discarded: tuple[int, ...]  # cards discarded face up (advanced game)
    scores: tuple[int, ...]  # this game's scores so far
    series_totals: tuple[int, ...]  # totals of the finished games of the series
