"""The margin model (arena.margins): its Kalman updates equal the exact batch posterior, its
P(better) uses the covariance, its stored form round-trips, and faults never pay."""

from __future__ import annotations

import math
import random

import pytest

from arena.margins import PRIOR_SD, MarginModel, _inverse, fault_adjusted

FIXED = 1e12  # a noise estimate's weight that no result can move: the variance stays known


def fixed_noise(model: MarginModel, matches: int, variance: float) -> None:
    model.noise[matches] = [variance * FIXED, FIXED]


def batch_posterior(bots, results, variance):
    """The exact posterior by the information form, all results at once: precision = prior
    precision + sum H' R^-1 H, mean = precision^-1 sum H' R^-1 y, R = v (I + 11')."""
    n = len(bots)
    index = {b: i for i, b in enumerate(bots)}
    precision = [[(1.0 / PRIOR_SD**2 if i == j else 0.0) for j in range(n)] for i in range(n)]
    info = [0.0] * n
    for matches in results:
        table = list(matches[0][0])
        k, m = len(table), len(matches)
        totals = {b: sum(s[seats.index(b)] for seats, s in matches) / m for b in table}
        r_inv = _inverse(
            [[variance * (2.0 if a == b else 1.0) for b in range(k - 1)] for a in range(k - 1)]
        )
        h = [[0.0] * n for _ in range(k - 1)]
        for row, bot in enumerate(table[:-1]):
            h[row][index[bot]], h[row][index[table[-1]]] = 1.0, -1.0
        y = [totals[b] - totals[table[-1]] for b in table[:-1]]
        for i in range(n):
            for j in range(n):
                precision[i][j] += sum(
                    h[a][i] * r_inv[a][b] * h[b][j] for a in range(k - 1) for b in range(k - 1)
                )
            info[i] += sum(h[a][i] * r_inv[a][b] * y[b] for a in range(k - 1) for b in range(k - 1))
    cov = _inverse(precision)
    return [sum(cov[i][j] * info[j] for j in range(n)) for i in range(n)], cov


def random_results(rng, bots, count, k, per_set):
    results = []
    for _ in range(count):
        table = rng.sample(bots, k)
        matches = []
        for rotation in range(per_set):
            seats = table[rotation:] + table[:rotation]
            matches.append((seats, [rng.gauss(3 * bots.index(b), 5) for b in seats]))
        results.append(matches)
    return results


@pytest.mark.parametrize("k, per_set", [(2, 1), (3, 3), (4, 4), (4, 1)])
def test_the_kalman_updates_equal_the_exact_batch_posterior(k, per_set):
    rng = random.Random(k * 10 + per_set)
    bots = ["a", "b", "c", "d", "e", "f"]
    results = random_results(rng, bots, 40, k, per_set)
    model = MarginModel(bots)
    fixed_noise(model, per_set, 7.0)
    for matches in results:
        model.observe(matches)
    mean, cov = batch_posterior(bots, results, 7.0)
    for i, bot in enumerate(bots):
        assert model.rating(bot).mu == pytest.approx(mean[i], abs=1e-7)
        for j in range(len(bots)):
            assert model.cov[i][j] == pytest.approx(cov[i][j], abs=1e-7)


def test_two_bots_one_match_by_hand():
    # margin y = 6 observed with variance 2v; the difference's prior variance is 2 * 100:
    # its posterior mean is 200 / (200 + 2v) * 6, split evenly by symmetry.
    model = MarginModel(["a", "b"])
    fixed_noise(model, 1, 5.0)
    model.observe([(["a", "b"], [10.0, 4.0])])
    gap = 200.0 / (200.0 + 10.0) * 6.0
    assert model.rating("a").mu == pytest.approx(gap / 2)
    assert model.rating("b").mu == pytest.approx(-gap / 2)
    # the difference's variance 200 * 10 / 210; the sum's stays at the prior's 200
    var_a = model.cov[0][0]
    assert var_a + model.cov[1][1] - 2 * model.cov[0][1] == pytest.approx(2000.0 / 210.0)
    assert var_a + model.cov[1][1] + 2 * model.cov[0][1] == pytest.approx(200.0)


def test_p_better_is_that_of_the_difference_with_its_covariance():
    # Only a and b ever meet: their skills stay uncertain together (each sigma large), but their
    # difference is known. Independent sigmas would call the pair open.
    rng = random.Random(5)
    model = MarginModel(["a", "b"])
    for _ in range(200):
        model.observe([(["a", "b"], [rng.gauss(2.0, 5.0), rng.gauss(0.0, 5.0)])])
    a, b = model.rating("a"), model.rating("b")
    independent = 0.5 * math.erfc(-(a.mu - b.mu) / (math.hypot(a.sigma, b.sigma) * math.sqrt(2)))
    assert a.sigma > 5.0 and b.sigma > 5.0
    assert independent < 0.7
    assert model.p_better("a", "b") > 0.99
    assert model.p_better("b", "a") == pytest.approx(1 - model.p_better("a", "b"))
    assert model.p_next(["a", "b"]) == [model.p_better("a", "b")]


def test_the_noise_is_estimated_from_the_results():
    rng = random.Random(11)
    bots = list(range(5))
    model = MarginModel(bots)
    for matches in random_results(rng, bots, 400, 3, 1):
        model.observe(matches)
    # each score's sd is 5 (a variance of 25); the estimate also counts the early innovations'
    # spread from the skills' own uncertainty, so it sits a little above
    assert 20.0 < model.noise_variance(1) < 40.0
    assert [b for b, _ in sorted(model.ratings().items(), key=lambda x: -x[1].mu)] == [
        4,
        3,
        2,
        1,
        0,
    ]


def test_the_stored_form_round_trips_exactly_and_refuses_a_short_one():
    rng = random.Random(3)
    bots = [7, 3, 12, 5]
    model = MarginModel(bots)
    for matches in random_results(rng, bots, 30, 3, 3):
        model.observe(matches)
    model.join(99)
    again = MarginModel.loads(model.dumps())
    assert again.bots == model.bots and again.mean == model.mean and again.cov == model.cov
    assert again.noise == model.noise
    again.observe([([7, 99, 3], [1.0, 2.0, 3.0])])  # and goes on from where it was
    with pytest.raises(ValueError, match="covariances"):
        MarginModel.loads(model.dumps()[:-8])


def test_joining_keeps_the_others_and_starts_at_the_prior():
    model = MarginModel(["a", "b"])
    model.observe([(["a", "b"], [10.0, 0.0])])
    before = (list(model.mean), [list(r) for r in model.cov])
    assert model.join("c") and not model.join("a")
    assert model.mean[:2] == before[0] and [r[:2] for r in model.cov[:2]] == before[1]
    assert model.rating("c").mu == 0.0 and model.rating("c").sigma == PRIOR_SD
    assert model.cov[2][:2] == [0.0, 0.0]


def test_a_fault_never_pays_and_bad_results_are_refused():
    assert fault_adjusted([30, 10, 20], [0]) == [10.0, 10.0, 20.0]
    assert fault_adjusted([5, 10, 20], [0]) == [5.0, 10.0, 20.0]  # already the lowest
    assert fault_adjusted([30, 10, 20], []) == [30.0, 10.0, 20.0]
    model = MarginModel()
    with pytest.raises(ValueError, match="at least one match"):
        model.observe([])
    with pytest.raises(ValueError, match="distinct"):
        model.observe([(["a", "a"], [1.0, 2.0])])
    with pytest.raises(ValueError, match="same bots"):
        model.observe([(["a", "b"], [1.0, 2.0]), (["a", "c"], [1.0, 2.0])])
