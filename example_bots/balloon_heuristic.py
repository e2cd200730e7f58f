"""A Balloon Challenge bot that plays by a few rules of thumb (no search).

The idea: a round scores the volume left in hand if it fits the balloon (volume <= size), plus
chips. So the bot guesses the balloon's final size (the cards on the table plus about one more
card from every other seat still in), drops out as soon as its volume fits that guess, takes an
early drop-out when its chips are worth more than what it could still hope to keep, and
otherwise plays the card that brings its volume down to the guess with the least waste: a card
that takes the third-card chip if one is there, else the smallest card that makes the volume
fit, else its highest card. Zero-value cards are free size, so when its volume only just fits
and dropping out now earns no more chips than dropping out next turn, it plays one first.

Run by the launcher (ARENA_ADDRESS and ARENA_TOKEN set), or by hand:
    python example_bots/balloon_heuristic.py --address HOST:PORT --token TOKEN
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from _engine_view import policy_bot

from arena.games import Game
from arena.games.balloon import (
    BLACK_INDEX,
    CARD_COLOUR,
    CARD_VALUE,
    CHIP_POINTS_BY_ROUND,
    DROP_OUT,
    THIRD_CARD_POSITION,
    BalloonObservation,
    early_drop_out_chips,
)
from arena_sdk import run

# Cards each other seat still in is expected to add to the balloon after this decision.
OTHERS_MORE_CARDS = 1.0
# Take an early drop-out when its chips are worth at least this share of the volume the bot
# could keep by playing on (measured against random and against itself: 0.6 .. 1.3 all beat
# random by far; 1.0 did best against the other settings).
EARLY_DROP_SHARE = 1.0


def active_others(obs: BalloonObservation) -> int:
    return sum(
        1
        for s in range(obs.num_players)
        if s != obs.seat and obs.dropped_out[s] == 0 and obs.hand_sizes[s] > 0
    )


def expected_size(obs: BalloonObservation) -> float:
    """The balloon's size at the end of the round as this seat guesses it, if it stops now."""
    return len(obs.face_up) + len(obs.table) + OTHERS_MORE_CARDS * active_others(obs)


def kept_volume(obs: BalloonObservation, volume: int, target: float) -> int:
    """The volume this seat keeps if it plays its highest cards until its volume fits."""
    others_per_turn = target - len(obs.face_up) - len(obs.table)
    for k, value in enumerate(sorted((CARD_VALUE[c] for c in obs.hand), reverse=True), 1):
        volume -= value
        if volume <= target + k * (1 + others_per_turn):
            return volume
    return 0


def colour_counts(obs: BalloonObservation) -> list[int]:
    counts = [0] * (BLACK_INDEX + 1)
    for c in obs.face_up:
        counts[CARD_COLOUR[c]] += 1
    for p in obs.table:
        counts[CARD_COLOUR[p.card]] += 1
    return counts


def choose(
    game: Game,
    obs: BalloonObservation,
    legal_actions: Sequence[int],
    rng: random.Random,
    deadline: float | None = None,
) -> int:
    """The heuristic's move (engine terms). Deterministic: `game`, `rng` and `deadline` are
    unused but keep the policy signature every example bot shares."""
    hand = obs.hand
    if not hand:
        return DROP_OUT
    volume = sum(CARD_VALUE[c] for c in hand)
    target = expected_size(obs)
    drop_chips = min(early_drop_out_chips(obs.turn), obs.chips_in_middle)
    drop_chips += 1 if obs.first_drop_out_chip else 0
    chip_points = CHIP_POINTS_BY_ROUND[obs.round - 1]
    zeros = [c for c in hand if CARD_VALUE[c] == 0]

    if volume <= target:
        # Safe. A zero card adds size for free when waiting a turn costs no chips.
        if (
            zeros
            and drop_chips
            == early_drop_out_chips(obs.turn + 1) + (1 if obs.first_drop_out_chip else 0)
            and volume > target - 1
        ):
            return zeros[0]
        return DROP_OUT

    # Playing on: a greedy plan (highest cards first, the others adding cards as we go) says
    # how much volume the bot could keep; an early drop-out's chips may be worth more.
    if drop_chips * chip_points >= EARLY_DROP_SHARE * kept_volume(obs, volume, target):
        return DROP_OUT

    counts = colour_counts(obs)
    third = [
        c
        for c in hand
        if CARD_COLOUR[c] != BLACK_INDEX
        and counts[CARD_COLOUR[c]] == THIRD_CARD_POSITION - 1
        and obs.chips_in_middle > 0
    ]
    # How much the volume must drop with this play for it to fit, if the bot drops out on its
    # next turn: its own card and another round of the others' cards add to the size.
    gap = volume - (target + 1 + OTHERS_MORE_CARDS * active_others(obs))
    if third:
        # The chip is worth more than a point or two of volume: take it with the card that
        # best closes the gap.
        return min(third, key=lambda c: (abs(CARD_VALUE[c] - gap), c))
    fitting = [c for c in hand if CARD_VALUE[c] >= gap]
    if fitting:
        return min(fitting, key=lambda c: (CARD_VALUE[c], c))
    return max(hand, key=lambda c: (CARD_VALUE[c], -c))


# Well under a millisecond a move (docs/bots.md): quick, no thread hop.
BOT = policy_bot(choose, name="balloon-heuristic", game="balloon", quick=True)


if __name__ == "__main__":
    run(BOT)
