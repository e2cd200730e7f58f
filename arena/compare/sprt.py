"""The sequential probability ratio test on paired score differences (pure arithmetic).

`arena compare NEW BASE` plays NEW and BASE on the same deals, in the same seats, against the same
opponents. One observation is one deal played as a duplicate set by each version: NEW in every seat
of the table in turn, then BASE in the same seats against the same opponents, and

    x = (NEW's summed score over the set - BASE's summed score over the set) / k

is NEW's mean gain in points per match on that deal. The deal's luck is in both sums and cancels;
what is left is the versions' difference plus the noise of how the game unfolds. Observations
from different deals are independent (rotations of one deal are not, which is why a whole set is
one observation and not k of them).

The test is Wald's SPRT of H0: mean gain = delta0 (default 0, "no better") against H1: mean gain =
delta1 (= D, "better by at least D points"), with the observations taken as normal and their
variance unknown. The log-likelihood ratio is the generalized one: each hypothesis gets the
variance that fits the observations best under it, s_h^2 = (1/n) * sum (x - delta_h)^2, so

    LLR = (n / 2) * ln(s_0^2 / s_1^2)

Wald's bounds for error rates alpha (accepting H1 when H0 is true) and beta (accepting H0 when H1
is true):

    lower = ln(beta / (1 - alpha)),  upper = ln((1 - beta) / alpha)

The test stops with "better" at LLR >= upper, with "not better" at LLR <= lower, and otherwise goes
on until a cap on observations, where it says "undecided".

What fishtest and OpenBench do, read in their code (fishtest server/fishtest/stats/LLRcalc.py,
OpenBench OpenBench/stats.py, 2026-12). Both fit each hypothesis separately: fishtest's `LLR`
takes the observed distribution of outcomes (3 of a game, 5 of a game pair) and, for each
hypothesis, the distribution closest to it (the maximum-likelihood one) whose mean is that
hypothesis' (`MLE_expected`, a secular equation); OpenBench's PentanomialSPRT does the same for a
normalized t-value (`MLE_tvalue`), its TrinomialSPRT through BayesElo with the draw rate fitted.
The formula above is fishtest's own approximation of its LLR, `LLR_alt` (each hypothesis its own
variance: tests/compare/test_sprt.py checks it against values of fishtest's code); fishtest's
`LLR_alt2`, n (d1 - d0)(2 mean - d0 - d1) / (2 var), is the one with one shared variance (the
Brownian approximation it uses for drift and variance), which an earlier version of this note
wrongly said fishtest and OpenBench test with. Why the normal fit and not fishtest's exact form:
a card game's score difference is a number on a wide scale, not 3 or 5 outcomes; the exact form on
its observed values (empirical likelihood) said "better" for no difference 10.0% of the time at
alpha 5% (400 simulated runs, sd 4, D = 1), the normal fit 6.5% on the same runs (4.8% in 6,000
runs, where the shared variance said 6.8%): docs/compare.md. Chess tools also use a pentanomial
model because a game pair has five outcomes. No verdict is drawn before MIN_OBSERVATIONS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

BETTER = "better"
NOT_BETTER = "not better"
# A non-regression test's verdicts (Hypotheses.non_regression): H1 "no worse" accepted, or H0.
NOT_WORSE = "not worse"
WORSE = "worse"
UNDECIDED = "undecided"
MIN_OBSERVATIONS = 8


@dataclass(frozen=True, slots=True)
class Hypotheses:
    """What is asked: is the mean gain delta1 (H1) rather than delta0 (H0), at these error rates."""

    delta1: float
    delta0: float = 0.0
    alpha: float = 0.05
    beta: float = 0.05
    # A non-regression test (fishtest's {-1.5, 0.5} kind): H0 "NEW is worse by delta0 < 0"
    # against H1 "NEW is no worse (delta1)"; its verdicts read "not worse" and "worse".
    non_regression: bool = False

    def __post_init__(self) -> None:
        if not self.delta1 > self.delta0:
            raise ValueError(
                f"the difference to detect ({self.delta1}) must be larger than the "
                f"null difference ({self.delta0}); pass a positive --min-gain"
            )
        for name, rate in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < rate < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5 (exclusive), not {rate}")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)


@dataclass(frozen=True, slots=True)
class Running:
    """Sums of the observations so far; adding one gives a new value (Welford's update)."""

    n: int = 0
    mean: float = 0.0
    m2: float = 0.0  # the sum of squared deviations from the mean

    def add(self, x: float) -> Running:
        n = self.n + 1
        delta = x - self.mean
        mean = self.mean + delta / n
        return Running(n, mean, self.m2 + delta * (x - mean))

    @classmethod
    def of(cls, xs: Iterable[float]) -> Running:
        running = cls()
        for x in xs:
            running = running.add(x)
        return running

    @property
    def variance(self) -> float:
        """The sample variance (n - 1 in the denominator); 0 with fewer than two observations."""
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0

    def los(self) -> float | None:
        """The likelihood of superiority: the chance that the true mean gain is above 0, given
        the observations (normal: Phi(mean / standard error)); None below two observations or
        with no spread."""
        if self.n < 2 or self.variance == 0.0:
            return None
        return 0.5 * math.erfc(-self.mean / math.sqrt(2 * self.variance / self.n))

    def effect_size(self, z: float = 1.96) -> tuple[float, float, float] | None:
        """The standardized effect (Cohen's d of the paired differences: mean / standard
        deviation) with its normal interval, d +- z sqrt(1/n + d^2 / 2n); None below two
        observations or with no spread."""
        if self.n < 2 or self.variance == 0.0:
            return None
        d = self.mean / math.sqrt(self.variance)
        half = z * math.sqrt(1 / self.n + d * d / (2 * self.n))
        return (d, d - half, d + half)

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """A normal confidence interval of the mean (95% by default)."""
        if self.n < 2:
            return (-math.inf, math.inf)
        half = z * math.sqrt(self.variance / self.n)
        return (self.mean - half, self.mean + half)


@dataclass(frozen=True, slots=True)
class Status:
    n: int
    mean: float
    low: float
    high: float
    llr: float
    lower: float
    upper: float
    verdict: str | None  # BETTER, NOT_BETTER, UNDECIDED (at the cap) or None (go on)


def llr(spec: Hypotheses, running: Running) -> float:
    """The generalized log-likelihood ratio of H1 against H0 for the observations so far."""
    if running.n < 2:
        return 0.0
    spread = running.m2 / running.n
    var0 = spread + (running.mean - spec.delta0) ** 2
    var1 = spread + (running.mean - spec.delta1) ** 2
    if var1 == 0.0:
        return math.inf  # every observation exactly delta1
    if var0 == 0.0:
        return -math.inf  # every observation exactly delta0
    return running.n / 2 * math.log(var0 / var1)


def status(spec: Hypotheses, running: Running, cap: int | None = None) -> Status:
    """Where the test stands, and its verdict if it has one."""
    value = llr(spec, running)
    verdict = None
    if running.n >= MIN_OBSERVATIONS:
        if value >= spec.upper:
            verdict = NOT_WORSE if spec.non_regression else BETTER
        elif value <= spec.lower:
            verdict = WORSE if spec.non_regression else NOT_BETTER
    if verdict is None and cap is not None and running.n >= cap:
        verdict = UNDECIDED
    low, high = running.interval()
    return Status(running.n, running.mean, low, high, value, spec.lower, spec.upper, verdict)


def run(spec: Hypotheses, observations: Iterable[float], cap: int | None = None) -> Status:
    """Feed observations in order until the test decides (or they run out): the stored results of
    an interrupted comparison, replayed, give the same verdict at the same observation."""
    running = Running()
    current = status(spec, running, cap)
    for x in observations:
        running = running.add(x)
        current = status(spec, running, cap)
        if current.verdict is not None:
            break
    return current
