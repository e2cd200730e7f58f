"""The phase machine: what the clock moves a competition to, when uploads are open, and when
the finals stop (settled, or at their budget)."""

from __future__ import annotations

from arena.competitions.phases import (
    BUDGET,
    FINALS,
    FROZEN,
    OPEN,
    PUBLISHED,
    SETTLED,
    due,
    finals_verdict,
    next_phase,
    uploads_open,
)


def test_the_phases_go_one_way_one_step_at_a_time():
    assert [next_phase(p) for p in (OPEN, FROZEN, FINALS, PUBLISHED)] == [
        FROZEN,
        FINALS,
        PUBLISHED,
        None,
    ]


def test_the_clock_moves_open_and_frozen_on_never_the_finals():
    freeze, finals = 100.0, 160.0
    assert due(OPEN, freeze, finals, 99.9) is None
    assert due(OPEN, freeze, finals, 100.0) == FROZEN
    assert due(OPEN, freeze, finals, 500.0) == FROZEN  # one step at a time, even late
    assert due(FROZEN, freeze, finals, 159.0) is None
    assert due(FROZEN, freeze, finals, 160.0) == FINALS
    assert due(FINALS, freeze, finals, 10_000.0) is None  # the finals end by their rule
    assert due(PUBLISHED, freeze, finals, 10_000.0) is None


def test_uploads_close_at_the_freeze_time_even_before_the_step_is_stored():
    assert uploads_open(OPEN, 100.0, 99.0)
    assert not uploads_open(OPEN, 100.0, 100.0)
    assert not uploads_open(FROZEN, 100.0, 50.0)  # frozen early by the organiser


def test_the_finals_stop_when_every_adjacent_pair_is_settled_or_the_budget_would_pass():
    assert finals_verdict([0.99, 0.97], 0.95, 30, 30, 60) == SETTLED
    assert finals_verdict([0.99, 0.97], 0.95, 60, 30, 60) == SETTLED  # settled says why
    assert finals_verdict([0.99, 0.90], 0.95, 30, 30, 60) is None  # room for one more round
    assert finals_verdict([0.99, 0.90], 0.95, 31, 30, 60) == BUDGET
    assert finals_verdict([0.5], 0.95, 3, 3, 3) == BUDGET  # a budget of one round: one round
