"""The conservative rating, defined once (ratings.conservative): what the store ranks by
(Rater.conservative) and what the web shows are the same number, TrueSkill's exposure."""

from __future__ import annotations

import pytest
import trueskill

from arena.ratings import (
    Rater,
    RatingParams,
    SkillRating,
    conservative,
    rating_interval,
)


@pytest.mark.parametrize("params", [RatingParams(), RatingParams(mu=30.0, sigma=5.0)])
def test_the_conservative_rating_is_trueskills_exposure(params):
    env = trueskill.TrueSkill(mu=params.mu, sigma=params.sigma)
    rater = Rater(params)
    for mu, sigma in [(25.0, 25 / 3), (31.5, 1.2), (-4.0, 7.0)]:
        expected = env.expose(env.create_rating(mu, sigma))
        assert conservative(mu, sigma, params) == pytest.approx(expected, abs=1e-12)
        assert rater.conservative(SkillRating(mu, sigma)) == conservative(mu, sigma, params)


def test_with_the_standard_parameters_it_is_mu_minus_three_sigma():
    assert conservative(25.0, 25 / 3) == pytest.approx(0.0)
    assert conservative(30.0, 2.0) == 24.0
    assert rating_interval(30.0, 2.0) == (24.0, 36.0)
