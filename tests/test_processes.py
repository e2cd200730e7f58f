"""arena.processes: a signal meant for a process group never reaches a group that took its
number later (the host may have only 32,768 pids: the platform once SIGKILLed a starting bot's
guard with the number of a group that had ended)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from arena.processes import group_is_theirs, pid_exists, process_start, signal_group
from tests.timing import scaled

# A session leader with a child in its group; both block SIGUSR1, so a SIGUSR1 sent to them
# stays pending where /proc shows it (a signal is queued by the time kill() returns).
LEADER = (
    "import signal, subprocess, sys\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n"
    "child = subprocess.Popen([sys.executable, '-c', "
    "'import signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1}); "
    "print(1, flush=True); sys.stdin.read()'], stdout=subprocess.PIPE)\n"
    "child.stdout.readline()\n"
    "print(child.pid, flush=True)\n"
    "sys.stdin.read()\n"
)


@pytest.fixture
def group():
    """A live process group: (its leader's Popen, its member's pid)."""
    leader = subprocess.Popen(
        [sys.executable, "-c", LEADER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        member = int(leader.stdout.readline())
        yield leader, member
    finally:
        signal_group(leader.pid, signal.SIGKILL, None)
        leader.wait(scaled(30))


def pending(pid: int) -> set[signal.Signals]:
    """The signals pending for process `pid` (blocked ones stay there)."""
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    mask = int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)
    return {signal.Signals(n) for n in range(1, 32) if mask & (1 << (n - 1))}


def test_the_group_of_its_leader_takes_the_signal(group):
    leader, member = group
    start = process_start(leader.pid)
    assert start is not None and group_is_theirs(leader.pid, start)
    signal_group(leader.pid, signal.SIGUSR1, start)
    assert signal.SIGUSR1 in pending(leader.pid)
    assert signal.SIGUSR1 in pending(member)


def test_a_group_that_took_a_freed_number_is_left_alone(group):
    """The number is a newcomer's: its process started at another time than the leader the
    caller knew, so the group the caller meant is empty, and nothing is sent."""
    leader, member = group
    start = process_start(leader.pid)
    assert start is not None
    earlier = start - 1  # the leader the caller knew, gone, whose number this group took
    assert not group_is_theirs(leader.pid, earlier)
    signal_group(leader.pid, signal.SIGUSR1, earlier)
    assert signal.SIGUSR1 not in pending(leader.pid)
    assert signal.SIGUSR1 not in pending(member)
    assert pid_exists(leader.pid) and pid_exists(member)


def test_a_group_whose_leader_is_gone_still_takes_the_signal_while_a_member_is_left():
    """The leader exited and was reaped; its member lives on in the group, which keeps the
    number from reuse: the signal reaches the member."""
    code = (
        "import signal, subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'import signal; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1}); "
        "print(1, flush=True); signal.sigwait({signal.SIGUSR2})'], stdout=subprocess.PIPE)\n"
        "child.stdout.readline()\n"
        "print(child.pid, flush=True)\n"
    )
    leader = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    start = process_start(leader.pid)
    member = int(leader.stdout.readline())
    assert leader.wait(scaled(30)) == 0  # reaped: no process has the group's number now
    try:
        assert not pid_exists(leader.pid)
        signal_group(leader.pid, signal.SIGUSR1, start)
        assert signal.SIGUSR1 in pending(member)
    finally:
        signal_group(leader.pid, signal.SIGKILL, start)
