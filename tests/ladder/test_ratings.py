"""The TrueSkill rater: an explicit environment, free-for-all ranks, set aggregation, underflow."""

from __future__ import annotations

import math
import random

import pytest
import trueskill

from arena.ratings import (
    CALIBRATED_WIDEN,
    DEFAULT_RATING_MODE,
    RATING_MODES,
    SETTLED_CONFIDENCE,
    Rater,
    RatingParams,
    SkillRating,
    adjacent_settled,
    every_pair_settled,
    p_better,
    p_better_calibrated,
    p_next,
    set_ranks,
)


def test_the_environment_is_explicit_and_documented():
    rater = Rater()
    env = rater.env
    assert (env.mu, env.sigma, env.beta, env.tau, env.draw_probability) == (
        25.0,
        25 / 3,
        25 / 6,
        25 / 300,
        0.05,
    )
    assert env is not trueskill.global_env()
    assert rater.conservative(rater.initial()) == pytest.approx(0.0)
    assert RatingParams.from_dict(RatingParams().to_dict()) == RatingParams()


def test_a_match_is_rated_as_a_free_for_all_with_ties():
    rater = Rater()
    before = {
        "a": SkillRating(30, 5),
        "b": SkillRating(25, 8),
        "c": SkillRating(20, 3),
        "d": SkillRating(25, 25 / 3),
    }
    ranks = {"c": 0, "a": 1, "d": 1, "b": 3}
    update = rater.rate(before, ranks)
    env = trueskill.TrueSkill(mu=25, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.05)
    expected = env.rate(
        [{b: env.create_rating(before[b].mu, before[b].sigma)} for b in ranks],
        ranks=list(ranks.values()),
    )
    for group in expected:
        for bot, r in group.items():
            assert update.ratings[bot] == SkillRating(r.mu, r.sigma)
    assert update.note == "" and not update.skipped
    assert update.ratings["c"].mu > before["c"].mu and update.ratings["b"].mu < before["b"].mu


def test_an_extreme_upset_never_yields_a_broken_rating():
    rater = Rater()
    before = {"giant": SkillRating(500.0, 1.0), "ant": SkillRating(0.0, 1.0)}
    update = rater.rate(before, {"giant": 1, "ant": 0})
    assert all(math.isfinite(r.mu) and math.isfinite(r.sigma) for r in update.ratings.values())
    if update.skipped:  # no backend could rate it: ratings unchanged, and the note says why
        assert update.ratings == before
        assert update.note.startswith("not rated")
    else:
        assert "backend" in update.note


def test_set_ranks_sum_scores_and_demote_faulted_bots():
    # A set of 3 rotations of (x, y, z).
    matches = [
        (("x", "y", "z"), (5, 3, 3), []),
        (("y", "z", "x"), (1, 9, 0), []),
        (("z", "x", "y"), (2, 2, 6), [2]),
    ]  # y faulted in the last match
    ranks = set_ranks(matches)
    # Totals: x 7, y 10 (faulted), z 14.
    assert ranks == {"z": 0, "x": 1, "y": 2}
    tie = set_ranks([(("a", "b"), (4, 1), []), (("b", "a"), (4, 1), [])])
    assert tie == {"a": 0, "b": 0}


def test_a_match_needs_two_bots():
    with pytest.raises(ValueError):
        Rater().rate({"a": SkillRating(25, 8)}, {"a": 0})


@pytest.mark.parametrize(
    "a, b",
    [
        (SkillRating(27.0, 2.0), SkillRating(25.0, 3.0)),
        (SkillRating(25.0, 8.333), SkillRating(25.0, 8.333)),
        (SkillRating(20.0, 1.0), SkillRating(24.0, 4.5)),
        (SkillRating(31.2, 0.9), SkillRating(30.1, 0.7)),
    ],
)
def test_p_better_is_the_probability_that_one_skill_is_above_the_other(a, b):
    # Monte Carlo over the two posteriors, seeded: 100,000 draws give a standard error under
    # 0.0016, so 0.008 is five of them.
    rng = random.Random(16)
    n = 100_000
    above = sum(rng.gauss(a.mu, a.sigma) > rng.gauss(b.mu, b.sigma) for _ in range(n))
    assert p_better(a, b) == pytest.approx(above / n, abs=0.008)
    # And a direct integral: P = integral of pdf_a(x) * cdf_b(x) dx, by the midpoint rule.
    lo, hi, steps = a.mu - 10 * a.sigma, a.mu + 10 * a.sigma, 20_000
    h = (hi - lo) / steps
    total = 0.0
    for i in range(steps):
        x = lo + (i + 0.5) * h
        pdf = math.exp(-0.5 * ((x - a.mu) / a.sigma) ** 2) / (a.sigma * math.sqrt(2 * math.pi))
        total += pdf * 0.5 * math.erfc(-(x - b.mu) / (b.sigma * math.sqrt(2))) * h
    assert p_better(a, b) == pytest.approx(total, abs=1e-9)
    assert p_better(a, b) + p_better(b, a) == pytest.approx(1.0, abs=1e-12)


def test_p_better_with_no_uncertainty_is_certain_or_even():
    assert p_better(SkillRating(26, 0), SkillRating(25, 0)) == 1.0
    assert p_better(SkillRating(24, 0), SkillRating(25, 0)) == 0.0
    assert p_better(SkillRating(25, 0), SkillRating(25, 0)) == 0.5


def test_a_rank_is_settled_when_both_of_its_neighbours_are():
    # Ranks 1..5; the pair (2, 3) is unsure: both of its ranks are unsettled, the others not.
    assert adjacent_settled([0.99, 0.80, 0.97, 0.96], 0.95) == [True, False, False, True, True]
    assert adjacent_settled([0.99, 0.80, 0.97, 0.96], 0.75) == [True] * 5
    assert adjacent_settled([], 0.95) == [True]  # a lone bot has no one to be unsure against
    assert adjacent_settled([0.95], 0.95) == [True, True]  # at the confidence counts


def _phi(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


@pytest.mark.parametrize("widen", [1.0, 1.5, 2.0, 3.0])
def test_widening_divides_the_gap_in_spreads_by_the_factor(widen):
    a, b = SkillRating(27.0, 1.2), SkillRating(25.5, 0.9)
    z = (27.0 - 25.5) / math.sqrt(1.2**2 + 0.9**2)
    assert p_better(a, b, widen) == pytest.approx(_phi(z / widen), abs=1e-12)
    assert p_better(a, b, widen) + p_better(b, a, widen) == pytest.approx(1.0, abs=1e-12)


def test_widening_moves_every_probability_towards_even_and_keeps_its_side():
    rng = random.Random(31)
    for _ in range(200):
        a = SkillRating(rng.uniform(15, 35), rng.uniform(0.3, 8))
        b = SkillRating(rng.uniform(15, 35), rng.uniform(0.3, 8))
        ps = [p_better(a, b, w) for w in (1.0, 1.5, 2.0, 3.0)]
        if a.mu > b.mu:
            assert ps == sorted(ps, reverse=True) and ps[-1] > 0.5
        else:
            assert ps == sorted(ps) and ps[-1] <= 0.5


def test_a_widening_must_be_positive():
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="widen must be positive"):
            p_better(SkillRating(25, 1), SkillRating(24, 1), bad)


@pytest.mark.parametrize("mode", RATING_MODES)
def test_the_calibrated_probability_is_the_posterior_widened_for_the_mode(mode):
    widen = CALIBRATED_WIDEN[mode]
    assert widen >= 1.0  # TrueSkill was measured overconfident or right here, never under
    a, b = SkillRating(26.0, 0.8), SkillRating(24.9, 0.7)
    assert p_better_calibrated(a, b, mode) == p_better(a, b, widen)
    assert p_better_calibrated(a, b, mode) <= p_better(a, b)
    assert p_next([a, b], mode) == [p_better(a, b, widen)]
    assert p_better_calibrated(a, b) == p_better_calibrated(a, b, DEFAULT_RATING_MODE)


@pytest.mark.parametrize("mode", RATING_MODES)
def test_the_settle_rule_needs_every_adjacent_pair_at_the_confidence(mode):
    # Gaps in posterior spreads, widened: z = gap / (sqrt(2) * sigma * widen).
    sigma = 0.5
    spread = math.sqrt(2) * sigma * CALIBRATED_WIDEN[mode]
    z95 = 1.6448536269514722  # Phi(z95) = 0.95
    sure, unsure = 1.2 * z95 * spread, 0.8 * z95 * spread
    mus = [30.0, 30.0 - sure, 30.0 - sure - unsure, 30.0 - 2 * sure - unsure]
    board = [SkillRating(mu, sigma) for mu in mus]
    p = p_next(board, mode)
    assert p == pytest.approx([_phi(1.2 * z95), _phi(0.8 * z95), _phi(1.2 * z95)], abs=1e-12)
    assert not every_pair_settled(board, mode=mode)
    assert adjacent_settled(p, SETTLED_CONFIDENCE) == [True, False, False, True]
    # 0.8 z95 is above Phi^-1(0.9) = 1.2816
    assert every_pair_settled(board, confidence=0.9, mode=mode)
    assert every_pair_settled(board[:2], mode=mode) and every_pair_settled(board[2:], mode=mode)
    assert every_pair_settled(board[:1], mode=mode) and p_next(board[:1], mode) == []
