"""The exec wrapper's die-with-parent check (arena/referee/rlimits.py): a bot whose launcher is
already gone when the wrapper runs must not start, whoever adopted it (pid 1 or a subreaper)."""

from __future__ import annotations

import os
import subprocess
import sys


def wrapper(parent: int, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.referee.rlimits",
            "0",
            "0",
            "0",
            "0",
            "0",
            str(parent),
            "--",
            *argv,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_bot_starts_when_its_launcher_is_its_parent():
    done = wrapper(os.getpid(), sys.executable, "-c", "print('started')")
    assert (done.returncode, done.stdout.strip()) == (0, "started")


def test_the_bot_does_not_start_when_its_launcher_is_not_its_parent_any_more():
    # As if the launcher had died and another process adopted the wrapper: the parent it sees
    # is not the launcher's pid it was given.
    gone = os.getpid() + 1_000_000
    done = wrapper(gone, sys.executable, "-c", "print('started')")
    assert done.returncode == 1 and "started" not in done.stdout


def test_bad_arguments_print_the_usage():
    done = subprocess.run(
        [sys.executable, "-m", "arena.referee.rlimits", "1", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "usage:" in done.stderr
