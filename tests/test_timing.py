"""tests/timing.py: the load factor deadlines scale by, and waits that name what they waited for."""

from __future__ import annotations

import itertools
import os

import pytest

from tests import timing


def test_the_environment_sets_the_load_factor(monkeypatch):
    monkeypatch.setenv(timing.ENV, "2.5")
    assert timing.load_factor() == 2.5
    assert timing.scaled(4) == 10


@pytest.mark.parametrize("value", ["fast", "0", "-1"])
def test_a_bad_load_factor_in_the_environment_says_what_to_set(monkeypatch, value):
    monkeypatch.setenv(timing.ENV, value)
    with pytest.raises(ValueError, match=timing.ENV):
        timing.load_factor()


def test_the_measured_load_factor_is_bounded(monkeypatch):
    monkeypatch.delenv(timing.ENV, raising=False)
    monkeypatch.setattr(timing, "runnable_now", lambda: 0.0)
    cores = len(os.sched_getaffinity(0))
    for load, expected in [(0.0, 1.0), (3.0 * cores, 3.0), (100.0 * cores, timing.MAX_FACTOR)]:
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        assert timing.load_factor() == expected


def test_threads_runnable_now_raise_the_factor_before_the_average_catches_up(monkeypatch, tmp_path):
    """Two CPU spinners just started beside the tests on two cores: the 1-minute average
    still reads as quiet, the runnable threads (the spinners and this one) do not."""
    monkeypatch.delenv(timing.ENV, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.1, 0.1))
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.20 0.10 0.10 3/250 4242\n")
    monkeypatch.setattr(timing, "LOADAVG", str(loadavg))
    assert timing.runnable_now() == 3.0
    assert timing.load_factor() == 1.5
    loadavg.write_text("0.20 0.10 0.10 1/250 4242\n")  # only this thread: the average decides
    assert timing.load_factor() == 1.0
    monkeypatch.setattr(timing, "LOADAVG", str(tmp_path / "absent"))
    assert timing.runnable_now() == 0.0 and timing.load_factor() == 1.0


def test_a_wait_returns_what_the_condition_returned(monkeypatch):
    monkeypatch.setenv(timing.ENV, "1")
    calls = itertools.count()
    assert timing.wait_until(lambda: next(calls) >= 3 and "ready", "three polls", 5) == "ready"


def test_a_wait_that_times_out_says_what_it_waited_for_and_how_long(monkeypatch):
    monkeypatch.setenv(timing.ENV, "2")
    expected = r"waited 0\.1 s \(0\.05 s quiet x load factor 2\.0\) for the moon"
    with pytest.raises(AssertionError, match=expected):
        timing.wait_until(lambda: False, "the moon", 0.05)


def test_a_wait_stops_at_once_when_it_gives_up(monkeypatch):
    monkeypatch.setenv(timing.ENV, "1")
    with pytest.raises(AssertionError, match="stopped waiting for the server: it exited"):
        timing.wait_until(lambda: False, "the server", 60, gave_up=lambda: "it exited")
