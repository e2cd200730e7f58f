"""The sequential test: its arithmetic against a direct computation, and its error rates."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from arena.compare import sprt
from arena.compare.sprt import Hypotheses, Running


def _normal_loglik(xs, mu, variance):
    return sum(-0.5 * math.log(2 * math.pi * variance) - (x - mu) ** 2 / (2 * variance) for x in xs)


def test_running_equals_statistics():
    rng = random.Random(7)
    xs = [rng.gauss(1.5, 4.0) for _ in range(57)]
    running = Running.of(xs)
    assert running.n == 57
    assert running.mean == pytest.approx(statistics.fmean(xs), rel=1e-12)
    assert running.variance == pytest.approx(statistics.variance(xs), rel=1e-12)
    low, high = running.interval()
    half = 1.96 * statistics.stdev(xs) / math.sqrt(57)
    assert (low, high) == pytest.approx((statistics.fmean(xs) - half, statistics.fmean(xs) + half))


def test_llr_is_the_difference_of_two_normal_log_likelihoods():
    rng = random.Random(3)
    xs = [rng.gauss(0.8, 3.0) for _ in range(40)]
    spec = Hypotheses(delta1=1.0, delta0=0.0)
    # each hypothesis with the variance that fits it best (its maximum-likelihood estimate)
    var1 = sum((x - 1.0) ** 2 for x in xs) / len(xs)
    var0 = sum(x**2 for x in xs) / len(xs)
    direct = _normal_loglik(xs, 1.0, var1) - _normal_loglik(xs, 0.0, var0)
    assert sprt.llr(spec, Running.of(xs)) == pytest.approx(direct, rel=1e-9)


def test_bounds_are_walds():
    spec = Hypotheses(delta1=2.0, alpha=0.05, beta=0.1)
    assert spec.upper == pytest.approx(math.log(0.9 / 0.05))
    assert spec.lower == pytest.approx(math.log(0.1 / 0.95))


def test_no_verdict_before_the_minimum_and_undecided_at_the_cap():
    spec = Hypotheses(delta1=1.0)
    early = sprt.run(spec, [1.0, 1.01, 0.99])  # overwhelming, but only three observations
    assert early.verdict is None and early.llr > spec.upper
    capped = sprt.run(spec, [3.5, -2.5] * 5, cap=10)  # mean D/2, wide: no evidence either way
    assert capped.n == 10 and capped.verdict == sprt.UNDECIDED


def test_run_stops_at_the_first_decisive_observation():
    spec = Hypotheses(delta1=1.0)
    xs = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02, 0.98, 1.0, 1.01, 1.0, 0.99]
    result = sprt.run(spec, xs)
    assert result.verdict == sprt.BETTER
    assert result.n == sprt.MIN_OBSERVATIONS  # decisive from the first moment it may decide
    assert sprt.run(spec, xs[: result.n]) == result


@pytest.mark.parametrize(
    "true_gain, verdict, allowed", [(0.0, sprt.BETTER, 0.05), (1.0, sprt.NOT_BETTER, 0.05)]
)
def test_error_rates_hold(true_gain, verdict, allowed):
    """Simulated: with no real gain the test says "better" at most about alpha of the time, and
    with a gain of D it says "not better" at most about beta of the time (a binomial margin of
    three standard errors over 1,000 runs)."""
    spec = Hypotheses(delta1=1.0, alpha=0.05, beta=0.05)
    rng = random.Random(11)
    runs = 1000
    wrong = 0
    for _ in range(runs):
        result = sprt.run(spec, (rng.gauss(true_gain, 4.0) for _ in range(10_000)))
        wrong += result.verdict == verdict
    margin = 3 * math.sqrt(allowed * (1 - allowed) / runs)
    assert wrong / runs <= allowed + margin


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"delta1": 0.0}, "must be larger"),
        ({"delta1": -1.0}, "must be larger"),
        ({"delta1": 1.0, "alpha": 0.0}, "alpha must be between"),
        ({"delta1": 1.0, "beta": 0.7}, "beta must be between"),
    ],
)
def test_bad_specs_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Hypotheses(**kwargs)


# Values of fishtest's own code (official-stockfish/fishtest, server/fishtest/stats/LLRcalc.py,
# run with scipy 1.17 on the empirical distribution of these observations, each weighing 1/n):
# N * LLR_alt(pdf, s0, s1), its approximation with each hypothesis' own variance, and
# N * LLR_alt2, the one with one shared variance. (N * LLR, its exact form, was -0.4732,
# -4.3110, 3.3389 and 8.7091: docs/compare.md says why Arena keeps the normal fit.)
FISHTEST_CASES = [
    # (n, mean, sd, s0, s1, LLR_alt, LLR_alt2)
    (20, 0.8, 3.0, 0.0, 1.0, -0.4697604096030883, -0.48346731709136365),
    (40, -0.3, 2.0, 0.0, 1.0, -4.641114347495153, -5.223875555961572),
    (12, 1.5, 4.0, -1.5, 0.5, 2.6543737292858487, 4.826797673116099),
    (60, 0.2, 1.0, -0.5, 0.25, 9.17645484712813, 10.750391828254344),
]


def _fishtest_samples():
    rng = random.Random(5)  # as the values above were made
    for n, mean, sd, s0, s1, alt, alt2 in FISHTEST_CASES:
        yield [round(rng.gauss(mean, sd), 2) for _ in range(n)], s0, s1, alt, alt2


def test_the_llr_is_fishtests_llr_alt_and_not_its_shared_variance_form():
    for xs, s0, s1, alt, alt2 in _fishtest_samples():
        spec = Hypotheses(delta1=s1, delta0=s0)
        value = sprt.llr(spec, Running.of(xs))
        assert value == pytest.approx(alt, rel=1e-9)
        assert value != pytest.approx(alt2, rel=1e-3)


def test_a_non_regression_test_says_not_worse_or_worse():
    spec = Hypotheses(delta1=0.0, delta0=-1.5, non_regression=True)
    rng = random.Random(2)
    fine = sprt.run(spec, (rng.gauss(0.5, 2.0) for _ in range(10_000)))
    assert fine.verdict == sprt.NOT_WORSE and fine.llr >= spec.upper
    bad = sprt.run(spec, (rng.gauss(-2.5, 2.0) for _ in range(10_000)))
    assert bad.verdict == sprt.WORSE and bad.llr <= spec.lower
    capped = sprt.run(spec, [0.0, -1.5] * 6, cap=12)
    assert capped.verdict == sprt.UNDECIDED


def test_the_likelihood_of_superiority_and_the_effect_size():
    # Mean 1, n 16, a spread of 2: LOS is Phi(mean / standard error), d the mean over the sd.
    xs = [1.0 + 2.0 * z for z in (1, -1) * 8]
    running = Running.of(xs)
    assert running.variance == pytest.approx(4.0 * 16 / 15)
    se = math.sqrt(running.variance / 16)
    assert running.los() == pytest.approx(statistics.NormalDist().cdf(1.0 / se), rel=1e-12)
    d, low, high = running.effect_size()
    assert d == pytest.approx(1.0 / math.sqrt(running.variance))
    half = 1.96 * math.sqrt(1 / 16 + d * d / 32)
    assert (low, high) == pytest.approx((d - half, d + half))
    # No gain: even odds, an effect of 0; too few or identical observations: none.
    even = Running.of([1.0, -1.0] * 5)
    assert even.los() == pytest.approx(0.5) and even.effect_size()[0] == pytest.approx(0.0)
    assert Running.of([2.0]).los() is None and Running.of([2.0, 2.0]).effect_size() is None
