"""Deadlines that scale with the machine's load, and waits that say what they waited for.

A test that waits on CPU-bound work (a bot process starting, a match being played, a server
rendering its first page) passes in a few seconds on a quiet machine but may take five times
that on a shared one: two CI cores beside other jobs. Such a deadline is written as the time it
needs on a quiet machine, `scaled(seconds)`, which multiplies it by `load_factor()`. Deadlines
that are part of the behaviour under test (a move's time limit that must fire, a server that
must stop within its grace period) are not scaled.

`load_factor()` is the machine's load over its core count, at least 1 and at most MAX_FACTOR,
read when the wait starts. The load is the larger of the 1-minute load average and the number
of threads runnable right now (/proc/loadavg): the average alone lags by a minute behind a
load that has just begun (two CPU spinners started beside the tests, another job's build). The
environment variable ARENA_TEST_LOAD_FACTOR sets the factor instead (for example 1 to see the
quiet-machine deadlines, 8 for a machine known to be slow).
The root conftest.py scales pytest-timeout's limit of every test the same way.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

ENV = "ARENA_TEST_LOAD_FACTOR"
MAX_FACTOR = 8.0
POLL_S = 0.02
LOADAVG = "/proc/loadavg"


def load_factor() -> float:
    """How many times longer CPU-bound work takes here than on a quiet machine (at least 1)."""
    override = os.environ.get(ENV)
    if override:
        try:
            factor = float(override)
        except ValueError:
            raise ValueError(f"{ENV}={override!r} is not a number (e.g. 1 or 2.5)") from None
        if factor <= 0:
            raise ValueError(f"{ENV}={override!r} must be above 0; 1 means a quiet machine")
        return factor
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = max(os.getloadavg()[0], runnable_now())
    return min(MAX_FACTOR, max(1.0, load / (cores or 1)))


def runnable_now() -> float:
    """Threads runnable at this moment, this one included (0 where Linux's /proc/loadavg is
    not there to say)."""
    try:
        with open(LOADAVG) as f:
            return float(f.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return 0.0


def scaled(seconds: float) -> float:
    """A deadline of `seconds` on a quiet machine, stretched by the load factor now."""
    return seconds * load_factor()


def describe(quiet_s: float, factor: float) -> str:
    """How long a scaled wait lasted, and why that long: for failure messages."""
    return f"{quiet_s * factor:.1f} s ({quiet_s:g} s quiet x load factor {factor:.1f})"


def wait_until(
    condition: Callable[[], T],
    what: str,
    quiet_s: float,
    *,
    gave_up: Callable[[], str | None] = lambda: None,
    poll_s: float = POLL_S,
) -> T:
    """Poll `condition()` until it returns something true, and return that. Fail, naming
    `what`, once `scaled(quiet_s)` has passed, or at once when `gave_up()` returns a reason
    (a process the wait depends on has exited, say)."""
    factor = load_factor()
    deadline = time.monotonic() + quiet_s * factor
    while True:
        value = condition()
        if value:
            return value
        reason = gave_up()
        if reason is not None:
            raise AssertionError(f"stopped waiting for {what}: {reason}")
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {describe(quiet_s, factor)} for {what}; it never came")
        time.sleep(poll_s)  # polling a condition that has no event to wait on, under a deadline
