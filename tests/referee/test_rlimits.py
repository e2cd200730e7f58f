"""The bot's guard process (arena/referee/rlimits.py): a bot whose launcher is already gone when
the guard runs must not start, whoever adopted it (pid 1 or a subreaper); the guard exits as its
bot did, and ends what the bot left behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest


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


def test_the_guard_learns_of_its_launchers_death_by_pidfd_whatever_the_signal_did():
    # The launcher's death signal once did not come (issue 29): the guard also polls a pidfd of
    # its launcher beside the bot's. Here a stand-in launcher and bot: the "launcher" dies, the
    # bot does not, and the wait must end saying so (None), not wait for the bot.
    from arena.referee.rlimits import _wait_for

    launcher = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    bot = os.fork()
    if bot == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        launcher_fd = os.pidfd_open(launcher.pid)
        launcher.kill()
        assert _wait_for(bot, launcher_fd) is None
        assert os.waitpid(bot, os.WNOHANG) == (0, 0), "the bot ended: the wait proved nothing"
    finally:
        os.kill(bot, signal.SIGKILL)
        os.waitpid(bot, 0)
        launcher.wait()


def test_the_guards_wait_returns_the_bots_status_while_its_launcher_lives():
    from arena.referee.rlimits import _wait_for

    bot = os.fork()
    if bot == 0:
        os._exit(7)
    status = _wait_for(bot, os.pidfd_open(os.getpid()))
    assert status is not None and os.waitstatus_to_exitcode(status) == 7


def test_bad_options_print_what_is_wrong_and_the_usage():
    done = subprocess.run(
        [sys.executable, "-m", "arena.referee.rlimits", *"0 0 0 0 0 1 --bogus x -- true".split()],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "unknown option --bogus" in done.stderr
    assert "usage:" in done.stderr


def test_the_bot_runs_in_the_control_groups_the_guard_is_given():
    # Everything the guard starts is in the groups: its child joins them before it execs.
    from arena.referee import cgroups

    where = cgroups.detect()
    if not isinstance(where, cgroups.Layout):
        pytest.skip(f"no control groups here: {where}")
    dirs = where.owner_dirs(os.getpid())
    for d in dirs:
        d.mkdir(exist_ok=True)
    group = cgroups.BotGroup.create(
        where, os.getpid(), cgroups.key_for("guarded"), cgroups.GroupLimits()
    )
    try:
        options = [a for d in group.dirs for a in ("--cgroup", str(d))]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "arena.referee.rlimits",
                *"0 0 0 0 0".split(),
                str(os.getpid()),
                *options,
                "--",
                "cat",
                "/proc/self/cgroup",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        # One line per controller (memory, pids, cpu on v1; one on v2) names the bot's group.
        assert done.stdout.count(f"/{group.dirs[0].name}\n") == len(group.dirs), done.stdout
    finally:
        group.kill()
        group.remove()
        for d in dirs:
            try:
                d.rmdir()
            except OSError:
                pass


def guard_told(answer: bytes) -> tuple[int, str]:
    """Start a guard with a ready socket (--ready-fd), wait for its byte (it says its keeper
    runs), then write `answer` (the launcher mounted the work directory) or, when empty, close
    the socket (the launcher died or gave up): its exit code and output."""
    ours, theirs = socket.socketpair()
    with ours:
        with theirs:
            guard = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "arena.referee.rlimits",
                    *"0 0 0 0 0".split(),
                    str(os.getpid()),
                    "--ready-fd",
                    str(theirs.fileno()),
                    "--",
                    sys.executable,
                    "-c",
                    "print('started')",
                ],
                pass_fds=(theirs.fileno(),),
                stdout=subprocess.PIPE,
                text=True,
            )
        ours.settimeout(60)
        assert ours.recv(1) == b"k"
        if answer:
            ours.sendall(answer)
    out, _ = guard.communicate(timeout=60)
    return guard.returncode, out


def test_the_guard_starts_the_bot_only_when_its_launcher_answers_on_the_ready_socket():
    assert guard_told(b"g") == (0, "started\n")
    # The socket closed with no answer: nothing was mounted for the bot, which must not start.
    code, out = guard_told(b"")
    assert code == 1 and "started" not in out
