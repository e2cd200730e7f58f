"""Margin ratings (rating mode "margins"): each duplicate set rated by its bots' score margins.

TrueSkill rates a set by its bots' order alone: a set whose bots end 0.1 and 20 points apart tells
it the same. The margin model rates the margins themselves:

- Each bot has a skill in points a match (its mean score over the field's, up to a constant), a
  Gaussian prior N(0, PRIOR_SD^2), the bots independent.
- A result (a duplicate set, or one match) is observed as its bots' mean scores a match, written
  as each bot's margin over the table's last seat, with Gaussian noise independent for each bot's
  mean: margins = H skills + e, e ~ N(0, v (I + 11')) for the k - 1 margins.
- The posterior over all of a ladder's bots is kept exactly, as a mean vector and a full
  covariance, and updated by one Kalman step per result. Results that share a bot couple the
  other bots' estimates, so an update moves every bot's covariance, not only the table's; that is
  why the model is stored whole (the store's `margin_models`) and P(better) is that of the two
  bots' difference, covariance included (p_better). Keeping only each bot's own variance (what a
  per-bot mean and sigma holds, as TrueSkill's) lost part of the gain in the bench.
- The noise variance v, per number of matches a result sums (a set of k matches, a single match),
  is estimated from the innovations so far: a prior of NOISE_PRIOR_VARIANCE worth
  NOISE_PRIOR_WEIGHT results, each result adding its normalised squared innovation. The
  innovation's spread from the skills' own uncertainty is counted as noise too, which only slows
  the first updates (subtracting it let the first sets drive the estimate to its floor, and the
  posterior froze on them; docs/benchmarks.md).
- A seat that faulted in a match counts that match's lowest score at the table, if its own was
  higher: a fault never pays (as in the rank modes, where it ranks last).

The leaderboard value is mu - 3 sigma (in points), as TrueSkill's conservative rating.

Measured by `scripts/bench.py rating` (docs/benchmarks.md#rating): on the suite's pools of known
order it needs 0.19 and 0.12 of plain TrueSkill's matches on Balloon's close pools, 0.56 on its wide
ones, and fewer than TrueSkill's set mode on every Boom pool; its "settled" calls at 0.95 were right
99.3% to 100% of the time, unwidened, and its finals stop on every Balloon pool.

Pure Python (no numpy): a ladder's bots are tens, a table's margins at most a handful; an update
costs O(n^2 k) for n bots.
"""

from __future__ import annotations

import json
import math
from array import array
from typing import Hashable, Iterable, Sequence

from arena.ratings import SkillRating

PRIOR_SD = 10.0  # points a match: vague beside both games' neighbour gaps (about 1 to 3)
NOISE_PRIOR_VARIANCE = 25.0  # a noise sd of 5 points a match ...
NOISE_PRIOR_WEIGHT = 2.0  # ... worth two results
NOISE_FLOOR = 1.0  # the estimate never falls below this variance


def fault_adjusted(scores: Sequence[float], faulted: Iterable[int]) -> list[float]:
    """A match's scores as the margin model counts them: each faulted seat at most the lowest
    score at the table."""
    adjusted = [float(s) for s in scores]
    lowest = min(adjusted)
    for seat in faulted:
        adjusted[seat] = min(adjusted[seat], lowest)
    return adjusted


class MarginModel:
    """The posterior over a ladder's bots' skills (see the module docstring). Bots are keys
    (the store's bot ids); `join` adds one at the prior."""

    __slots__ = ("bots", "mean", "cov", "noise", "_index")

    def __init__(self, bots: Iterable[Hashable] = ()):
        self.bots: list[Hashable] = []
        self.mean: list[float] = []
        self.cov: list[list[float]] = []
        # matches a result sums -> [sum of its sample variances, weight]
        self.noise: dict[int, list[float]] = {}
        self._index: dict[Hashable, int] = {}
        for bot in bots:
            self.join(bot)

    def join(self, bot: Hashable) -> bool:
        """Add a bot at the prior; False if it is already in."""
        if bot in self._index:
            return False
        self._index[bot] = len(self.bots)
        self.bots.append(bot)
        self.mean.append(0.0)
        for row in self.cov:
            row.append(0.0)
        self.cov.append([0.0] * (len(self.bots) - 1) + [PRIOR_SD**2])
        return True

    def rating(self, bot: Hashable) -> SkillRating:
        i = self._index[bot]
        return SkillRating(self.mean[i], math.sqrt(max(self.cov[i][i], 0.0)))

    def ratings(self) -> dict[Hashable, SkillRating]:
        return {bot: self.rating(bot) for bot in self.bots}

    def noise_variance(self, matches: int) -> float:
        total, weight = self.noise.get(
            matches, (NOISE_PRIOR_VARIANCE * NOISE_PRIOR_WEIGHT, NOISE_PRIOR_WEIGHT)
        )
        return max(total / weight, NOISE_FLOOR)

    def observe(self, matches: Sequence[tuple[Sequence[Hashable], Sequence[float]]]) -> None:
        """Rate one result: the matches of one duplicate set (or one match), each as (bot per
        seat, score per seat, faults already counted: fault_adjusted), all among the same bots."""
        if not matches:
            raise ValueError("a result needs at least one match")
        table = list(matches[0][0])
        if len(set(table)) != len(table) or len(table) < 2:
            raise ValueError(f"a rated table needs two or more distinct bots, not {table}")
        totals = {bot: 0.0 for bot in table}
        for seats, scores in matches:
            if len(seats) != len(table) or set(seats) != set(table):
                raise ValueError(f"a set's matches seat the same bots: {list(seats)} vs {table}")
            for bot, score in zip(seats, scores, strict=True):
                totals[bot] += score
        for bot in table:
            self.join(bot)
        m, k = len(matches), len(table)
        rows = [self._index[b] for b in table[:-1]]
        last = self._index[table[-1]]
        n = len(self.bots)
        cov, mean = self.cov, self.mean
        # cov_h = cov H' (n x (k-1)): column r is cov[:, rows[r]] - cov[:, last]
        cov_h = [[cov[i][r] - cov[i][last] for r in rows] for i in range(n)]
        variance = self.noise_variance(m)
        # A = H cov H' + v (I + 11')
        a = [
            [
                cov_h[r][s] - cov_h[last][s] + variance * (2.0 if ri == s else 1.0)
                for s in range(k - 1)
            ]
            for ri, r in enumerate(rows)
        ]
        residual = [
            (totals[b] - totals[table[-1]]) / m - (mean[r] - mean[last])
            for b, r in zip(table[:-1], rows)
        ]
        a_inv = _inverse(a)
        gain = [
            [sum(row[t] * a_inv[t][s] for t in range(k - 1)) for s in range(k - 1)] for row in cov_h
        ]
        for i in range(n):
            mean[i] += sum(g * e for g, e in zip(gain[i], residual))
        for i in range(n):
            gi, ci = gain[i], cov[i]
            for j in range(n):
                ci[j] -= sum(g * h for g, h in zip(gi, cov_h[j]))
        for i in range(n):  # symmetric by construction; kept so against rounding
            for j in range(i):
                cov[i][j] = cov[j][i] = 0.5 * (cov[i][j] + cov[j][i])
        # The normalised squared innovation: e' (I + 11')^-1 e / (k - 1), where
        # (I + 11')^-1 = I - 11' / k.
        total = sum(residual)
        sample = (sum(e * e for e in residual) - total * total / k) / (k - 1)
        noise = self.noise.setdefault(
            m, [NOISE_PRIOR_VARIANCE * NOISE_PRIOR_WEIGHT, NOISE_PRIOR_WEIGHT]
        )
        noise[0] += sample
        noise[1] += 1.0

    def p_better(self, upper: Hashable, lower: Hashable, widen: float = 1.0) -> float:
        """P(upper's skill > lower's) under the posterior: the difference's spread includes the
        two bots' covariance; widened by `widen` (1: as it is)."""
        i, j = self._index[upper], self._index[lower]
        c = self.cov
        spread = math.sqrt(max(c[i][i] + c[j][j] - 2.0 * c[i][j], 0.0)) * widen
        gap = self.mean[i] - self.mean[j]
        if spread == 0.0:
            return 1.0 if gap > 0 else 0.0 if gap < 0 else 0.5
        return 0.5 * math.erfc(-gap / (spread * math.sqrt(2.0)))

    def p_next(self, order: Sequence[Hashable], widen: float = 1.0) -> list[float]:
        """For a leaderboard (bots best first), P(each is better than the one just below)."""
        return [self.p_better(a, b, widen) for a, b in zip(order, order[1:])]

    # ------------------------------------------------------------- stored form

    def dumps(self) -> bytes:
        """The model as bytes: a JSON header line (bots, means, noise), then the covariance's
        upper triangle as little-endian doubles."""
        header = json.dumps(
            {
                "bots": self.bots,
                "mean": self.mean,
                "noise": {str(m): v for m, v in self.noise.items()},
            },
            separators=(",", ":"),
        ).encode()
        n = len(self.bots)
        upper = array("d", (self.cov[i][j] for i in range(n) for j in range(i, n)))
        if upper.itemsize != 8:
            raise RuntimeError("this platform's doubles are not 8 bytes")
        return header + b"\n" + _little_endian(upper).tobytes()

    @classmethod
    def loads(cls, data: bytes) -> "MarginModel":
        header, _, body = data.partition(b"\n")
        state = json.loads(header)
        n = len(state["bots"])
        upper = array("d")
        upper.frombytes(body)
        upper = _little_endian(upper)
        if len(upper) != n * (n + 1) // 2 or len(state["mean"]) != n:
            raise ValueError(f"a stored margin model of {n} bots holds {len(upper)} covariances")
        model = cls()
        model.bots = list(state["bots"])
        model._index = {b: i for i, b in enumerate(model.bots)}
        model.mean = [float(x) for x in state["mean"]]
        model.cov = [[0.0] * n for _ in range(n)]
        it = iter(upper)
        for i in range(n):
            for j in range(i, n):
                model.cov[i][j] = model.cov[j][i] = next(it)
        model.noise = {int(m): [float(v[0]), float(v[1])] for m, v in state["noise"].items()}
        return model


def _little_endian(values: array) -> array:
    import sys

    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """The inverse of a small symmetric positive definite matrix (Gauss-Jordan with partial
    pivoting)."""
    n = len(a)
    work = [list(row) + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(work[r][col]))
        if work[pivot][col] == 0.0:
            raise ZeroDivisionError("a singular innovation covariance")
        work[col], work[pivot] = work[pivot], work[col]
        p = work[col][col]
        work[col] = [x / p for x in work[col]]
        for r in range(n):
            if r != col and work[r][col] != 0.0:
                f = work[r][col]
                work[r] = [x - f * y for x, y in zip(work[r], work[col])]
    return [row[n:] for row in work]
