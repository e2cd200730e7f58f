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
