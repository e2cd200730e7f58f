"""The determinized Monte Carlo search shared by the strong example bots (balloon_strong,
boom_strong): each candidate action is played out in the same sampled states (common random
numbers), and scored by the seat's score margin; the best mean margin wins.

A search is deterministic given its rng: the number of determinizations is fixed, and the
wall-clock `deadline` (a `time.monotonic()` instant, see _engine_view.move_deadline) only stops
it early on a machine much slower than expected; the candidates are then compared over the
determinizations done so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from arena.games import State


def margin(before: Sequence[int], after: Sequence[int], seat: int) -> float:
    """This seat's gain minus the mean of the other seats' gains."""
    gains = [a - b for a, b in zip(after, before)]
    mine = gains.pop(seat)
    return mine - sum(gains) / len(gains)


def best_by_simulation(
    candidates: Sequence[Any],
    seat: int,
    simulations: int,
    deadline: float | None,
    sample: Callable[[], State],
    play_out: Callable[[State], None],
    before: Sequence[int] | None = None,
) -> Any:
    """The candidate with the best mean margin over `simulations` determinizations: each
    drawn by `sample()`, cloned for every candidate, which `seat` plays before `play_out`
    plays the state on to the search's horizon. The margin is counted from `before` (default:
    the sampled state's scores). Ties go to the earlier candidate."""
    values = [0.0] * len(candidates)
    for done in range(simulations):
        if deadline is not None and done > 0 and time.monotonic() > deadline:
            break
        sampled = sample()
        start = sampled.scores() if before is None else before
        for i, action in enumerate(candidates):
            state = sampled.clone()
            state.apply_action(seat, action)
            play_out(state)
            values[i] += margin(start, state.scores(), seat)
    best = max(range(len(candidates)), key=lambda i: (values[i], -i))
    return candidates[best]
