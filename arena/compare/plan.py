"""The matches of a comparison: pure, so a resumed run computes the same list.

Deal j of a comparison of NEW against BASE has its own seed and its own lineup of k-1 opponents
(drawn from the opponents given, k-1 distinct ones: a bot has one seat at a table). Its table is
(CANDIDATE, opponent 1, ..., opponent k-1), played in all k rotations (`schedule.rotate`) so the
candidate sits in every seat once, and each rotation is played twice: with NEW in the candidate's
seat, then with BASE. All 2k matches share the deal's seed, so the cards are the same, and an
opponent in a given seat gets the same `bot_seed` in NEW's match and in BASE's: whatever luck the
deal and the opponents bring, both versions get it. The deal's observation (sprt.py) is NEW's
summed score over its k matches minus BASE's, over k.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Generic, Iterator, Sequence, TypeVar, cast

from arena.schedule import SEED_BOUND, rotate

B = TypeVar("B")
NEW = "new"
BASE = "base"
SIDES = (NEW, BASE)
CANDIDATE = object()  # the candidate's place at a table, before a side fills it


@dataclass(frozen=True, slots=True)
class PairedMatch(Generic[B]):
    """One match of a comparison: `index` is its place in the comparison's order, `deal` the
    observation it belongs to, `side` which version sits in `candidate_seat`."""

    index: int
    deal: int
    rotation: int
    side: str
    candidate_seat: int
    seed: int
    seats: tuple[B, ...]


def deal_lineup(seed: int, deal: int, opponents: Sequence[B], k: int) -> tuple[int, tuple[B, ...]]:
    """The deal's seed and its k-1 opponents, in table order."""
    rng = random.Random(f"compare/{seed}/{deal}")
    deal_seed = rng.randrange(SEED_BOUND)
    return deal_seed, tuple(rng.sample(list(opponents), k - 1))


def deal_matches(
    new: B, base: B, opponents: Sequence[B], k: int, seed: int, deal: int
) -> list[PairedMatch[B]]:
    """The 2k matches of one deal, NEW's and BASE's of each rotation side by side."""
    if k < 2:
        raise ValueError(f"a comparison needs tables of at least 2 seats, not {k}")
    if len(opponents) < k - 1 or len(set(opponents)) != len(opponents):
        raise ValueError(
            f"a comparison at tables of {k} needs at least {k - 1} distinct "
            f"opponents, not {len(opponents)}"
        )
    deal_seed, lineup = deal_lineup(seed, deal, opponents, k)
    table = (CANDIDATE, *lineup)
    out: list[PairedMatch[B]] = []
    for rotation in range(k):
        seating = rotate(table, rotation)
        candidate_seat = seating.index(CANDIDATE)
        for side, bot in ((NEW, new), (BASE, base)):
            seats = cast("tuple[B, ...]", tuple(bot if s is CANDIDATE else s for s in seating))
            out.append(
                PairedMatch(
                    deal * 2 * k + len(out), deal, rotation, side, candidate_seat, deal_seed, seats
                )
            )
    return out


def paired_matches(
    new: B, base: B, opponents: Sequence[B], k: int, seed: int
) -> Iterator[PairedMatch[B]]:
    """Every match of the comparison in order, deal after deal, without end (the test stops it)."""
    deal = 0
    while True:
        yield from deal_matches(new, base, opponents, k, seed, deal)
        deal += 1


def observation(k: int, new_scores: Sequence[float], base_scores: Sequence[float]) -> float:
    """A deal's observation: NEW's mean gain per match over BASE, from the candidate seat's score
    in each of the deal's k matches per side."""
    if len(new_scores) != k or len(base_scores) != k:
        raise ValueError(
            f"a deal's observation needs {k} scores per side, "
            f"not {len(new_scores)} and {len(base_scores)}"
        )
    return (sum(new_scores) - sum(base_scores)) / k
