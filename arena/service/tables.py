"""Choosing the next table of a continuous ladder (pure: no I/O, no clock of its own).

The least-played idle bot always sits at the next table, so no bot starves; bots that already
played more than `share_cap` times the mean are left out while others are available, so no bot
takes more than its share; the other seats go to the bots that make the most informative table:
the highest TrueSkill match quality (close ratings teach the most) plus a bonus for uncertain
ratings (high sigma), so new bots settle quickly.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Sequence

import trueskill

# How many candidate tables are scored at most; beyond that a seeded sample is scored.
MAX_TABLES_SCORED = 400


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    mu: float
    sigma: float
    matches: int  # played in this ladder (including those in progress)
    busy: bool  # playing now: cannot take another seat
    last_played: float  # when it last got a seat (or joined): older waits first


def choose_table(
    candidates: Sequence[Candidate],
    k: int,
    env: trueskill.TrueSkill,
    rng: random.Random,
    share_cap: float = 1.5,
    sigma_weight: float = 0.5,
) -> tuple[str, ...] | None:
    """The bots of the next table, in a random seat order, or None if fewer than k are idle."""
    idle = [c for c in candidates if not c.busy]
    if len(idle) < k:
        return None
    mean = sum(c.matches for c in candidates) / len(candidates)
    cap = share_cap * mean + 1
    by_need = sorted(idle, key=lambda c: (c.matches, c.last_played, c.name))
    eligible = [c for c in by_need if c.matches <= cap]
    if len(eligible) < k:  # never stall: fill with the least played
        eligible = by_need[:k]
    anchor, rest = eligible[0], eligible[1:]
    combos = list(itertools.islice(itertools.combinations(rest, k - 1), MAX_TABLES_SCORED * 4))
    if len(combos) > MAX_TABLES_SCORED:
        combos = rng.sample(combos, MAX_TABLES_SCORED)

    def score(group: tuple[Candidate, ...]) -> float:
        table = (anchor, *group)
        quality = env.quality([(env.create_rating(c.mu, c.sigma),) for c in table])
        uncertainty = sum(c.sigma for c in table) / (len(table) * env.sigma)
        return quality + sigma_weight * uncertainty

    best = max(combos, key=lambda g: (score(g), [c.name for c in g]))
    seats = [anchor.name, *(c.name for c in best)]
    rng.shuffle(seats)
    return tuple(seats)


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """A bot whose last `window` matches include `limit` or more with a fault is suspended."""

    window: int = 10
    limit: int = 5

    def verdict(self, recent_faulted: Sequence[bool]) -> str | None:
        recent = list(recent_faulted)[-self.window :]
        faulted = sum(recent)
        if faulted >= self.limit:
            return (
                f"faulted in {faulted} of its last {len(recent)} matches; fix the bot, "
                "then ask an organiser to reinstate it (arena bot reinstate)"
            )
        return None
