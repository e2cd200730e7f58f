"""A competition's phase machine, pure: what the clock moves it to, whether uploads are open, and
whether its finals go on, stop settled, or stop at their budget.

    open -> frozen -> finals -> published

open: uploads are verified and play the open ladder. frozen (at `freeze_at`, or by `arena
competition advance`): no more uploads; the entrants (each bot's newest version that passed)
are stored. finals (at `finals_at`, or advanced): a fresh duplicate round-robin among the
entrants, a round at a time, until `finals_verdict` says stop. published: the standings and the
archive, immutable. Each step is stored by arena.store (competitions.py), idempotently: a step
taken twice, or again after a kill -9, changes nothing the second time.
"""

from __future__ import annotations

from typing import Sequence

from arena.ratings import adjacent_settled
from arena.store.competitions import FINALS, FROZEN, OPEN, PHASES, PUBLISHED

SETTLED = "settled"  # every adjacent pair of the final order settled at the confidence
BUDGET = "budget"  # the next round would pass the finals' budget of matches

__all__ = ["BUDGET", "FINALS", "FROZEN", "OPEN", "PHASES", "PUBLISHED", "SETTLED"]


def next_phase(phase: str) -> str | None:
    """The phase after `phase` (None after published)."""
    i = PHASES.index(phase)
    return PHASES[i + 1] if i + 1 < len(PHASES) else None


def due(phase: str, freeze_at: float, finals_at: float, now: float) -> str | None:
    """The phase the clock moves the competition to now (one step at a time), or None. Published
    follows from the finals' end (finals_verdict), never from the clock."""
    if phase == OPEN and now >= freeze_at:
        return FROZEN
    if phase == FROZEN and now >= finals_at:
        return FINALS
    return None


def uploads_open(phase: str, freeze_at: float, now: float) -> bool:
    """Whether a bot of the competition may upload now: while open and before the freeze time
    (the freeze itself may wait for versions still being verified)."""
    return phase == OPEN and now < freeze_at


def finals_verdict(
    p_next: Sequence[float], confidence: float, played: int, round_matches: int, budget: int
) -> str | None:
    """After a whole round of the finals: SETTLED when every adjacent pair of the order is
    settled at `confidence` (`p_next[i]`: P(rank i better than rank i+1)), BUDGET when another
    round of `round_matches` would take the `played` matches past `budget`; None: play one."""
    if all(adjacent_settled(p_next, confidence)):
        return SETTLED
    if played + round_matches > budget:
        return BUDGET
    return None
