"""The comparison's plan and the observations read back from stored results (pure)."""

from __future__ import annotations

import pytest

from arena.compare import plan
from arena.compare.runner import CompareSettings
from arena.compare.verdict import observations, outcome
from arena.store.records import MatchScores


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_a_deal_pairs_every_seat_of_new_with_the_same_seat_of_base(k):
    opponents = ["o1", "o2", "o3", "o4", "o5"]
    matches = plan.deal_matches("N", "B", opponents, k, seed=3, deal=2)
    assert len(matches) == 2 * k
    assert [m.index for m in matches] == list(range(2 * 2 * k, 3 * 2 * k))
    assert len({m.seed for m in matches}) == 1  # one deal
    news = [m for m in matches if m.side == plan.NEW]
    bases = [m for m in matches if m.side == plan.BASE]
    assert sorted(m.candidate_seat for m in news) == list(range(k))  # every seat once
    for n, b in zip(news, bases):
        assert n.rotation == b.rotation and n.candidate_seat == b.candidate_seat
        assert n.seats[n.candidate_seat] == "N" and b.seats[b.candidate_seat] == "B"
        # the same opponents in the same seats
        assert [s for i, s in enumerate(n.seats) if i != n.candidate_seat] == [
            s for i, s in enumerate(b.seats) if i != b.candidate_seat
        ]
        assert len(set(n.seats)) == k
    # the same deal again is the same; another deal differs
    assert plan.deal_matches("N", "B", opponents, k, seed=3, deal=2) == matches
    assert plan.deal_matches("N", "B", opponents, k, seed=3, deal=3)[0].seed != matches[0].seed


def test_too_few_opponents_are_refused():
    with pytest.raises(ValueError, match="needs at least 3 distinct opponents"):
        plan.deal_matches("N", "B", ["o1", "o2"], 4, seed=1, deal=0)
    with pytest.raises(ValueError, match="distinct"):
        plan.deal_matches("N", "B", ["o1", "o1", "o2"], 4, seed=1, deal=0)


def _rows(deals, k=2, status=None):
    """Stored rows of `deals` deals where NEW scores `gain` more than BASE in every match."""
    rows = []
    for deal, gain in enumerate(deals):
        for m in plan.deal_matches("N", "B", ["o"], k, seed=1, deal=deal):
            score = 10 + (gain if m.side == plan.NEW else 0)
            scores = [5] * k
            scores[m.candidate_seat] = score
            ranks = [0 if s == max(scores) else 1 for s in scores]
            st = (status or {}).get(m.index, "completed")
            done = st == "completed"
            rows.append(
                MatchScores(
                    m.index,
                    deal,
                    st,
                    list(m.seats) if done else [],
                    scores if done else [],
                    ranks if done else [],
                )
            )
    return rows


def test_observations_are_per_whole_deal_in_order():
    rows = _rows([2, 4, 6])
    pairs, void, finished = observations(2, "N", "B", rows)
    assert [p[0] for p in pairs] == [2, 4, 6] and void == 0 and finished == 12
    # deal 1 unfinished: deals after it wait too (the verdict must not depend on timing)
    rows = _rows([2, 4, 6], status={5: "running"})
    pairs, void, finished = observations(2, "N", "B", rows)
    assert [p[0] for p in pairs] == [2] and finished == 11
    # deal 1 with a match given up: no pair to compare, skipped and counted
    rows = _rows([2, 4, 6], status={5: "abandoned"})
    pairs, void, _ = observations(2, "N", "B", rows)
    assert [p[0] for p in pairs] == [2, 6] and void == 1


def test_the_outcome_stops_at_the_deciding_deal_whatever_was_played_after():
    settings = CompareSettings(
        db=None,
        name="c",
        new="N",
        base="B",
        opponents=("o",),  # type: ignore[arg-type]
        game="balloon",
        table_size=2,
        options={},
        min_gain=1.0,
    )
    gains = [3, 2, 4, 3, 2, 3, 4, 2, 3, 3, 2, 4, 3, 3]
    first = outcome(settings, _rows(gains))
    assert first.verdict == "better"
    longer = outcome(settings, _rows(gains + [-50, -50, -50]))
    assert (longer.deals, longer.status) == (first.deals, first.status)


def test_a_non_regression_comparison_tests_a_loss_of_d_against_none_and_is_stored_so():
    from arena.compare.verdict import Comparison, stored

    gain = Comparison("g", "a", "b", ("o",), "balloon", 2, {}, min_gain=1.5)
    assert (gain.hypotheses.delta0, gain.hypotheses.delta1) == (0.0, 1.5)
    assert "mode" not in gain.definition()  # a gain test's definition is as it was
    nr = Comparison("n", "a", "b", ("o",), "balloon", 2, {}, min_gain=1.5, non_regression=True)
    assert (nr.hypotheses.delta0, nr.hypotheses.delta1) == (-1.5, 0.0)
    assert nr.hypotheses.non_regression and nr.mode == "non-regression"

    class Ladder:
        name, game, table_size, options, seed = "n", "balloon", 2, {}, 3
        settings = {"comparison": nr.definition()}

    assert stored(Ladder()).non_regression is True
