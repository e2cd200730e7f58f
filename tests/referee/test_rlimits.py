"""The bot's guard process (arena/referee/rlimits.py): a bot whose launcher is already gone when
the guard runs must not start, whoever adopted it (pid 1 or a subreaper); the guard exits as its
bot did, and ends what the bot left behind."""

from __future__ import annotations

import os
import signal
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


def test_the_guard_exits_as_its_bot_did():
    assert wrapper(os.getpid(), sys.executable, "-c", "raise SystemExit(3)").returncode == 3
    killed = wrapper(os.getpid(), sys.executable, "-c", "import os; os.kill(os.getpid(), 10)")
    assert killed.returncode == -signal.SIGUSR1


# Forks twice and leaves a grandchild in a session of its own (out of every group the guard
# knows), which prints its pid; the bot exits and the grandchild becomes the guard's (a
# subreaper's) child.
LEAVES_A_DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print(os.getpid(), flush=True)
        time.sleep(600)
    os._exit(0)
os.wait()
"""


def test_what_the_bot_leaves_behind_ends_with_it():
    done = wrapper(
        os.getpid(),
        sys.executable,
        "-c",
        LEAVES_A_DAEMON,
    )
    daemon = int(done.stdout.strip())
    # The guard reaped it before exiting: the pid is gone, not even a zombie.
    assert not os.path.exists(f"/proc/{daemon}"), open(f"/proc/{daemon}/stat").read()


def test_bad_arguments_print_the_usage():
    done = subprocess.run(
        [sys.executable, "-m", "arena.referee.rlimits", "1", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "usage:" in done.stderr
