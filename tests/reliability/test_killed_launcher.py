"""A platform process killed with SIGKILL while a bot starts leaves nothing behind: the bot's
guard (arena/referee/rlimits.py) ends the sandbox, whatever point of its start-up it was at.

Each case starts a real sandboxed bot from a launching process (held_launcher.py), kills that
process with SIGKILL at one point of the bot's start-up, and then looks in /proc for any process
that carries the launch's token in its environment (the guard, bubblewrap, the sandbox's init,
the bot). The kill points are reached by waiting on real events, never on time; the one that
matters most holds bubblewrap while it builds the sandbox (see held_launcher.py), where the
exec wrapper that preceded the guard left the sandbox running every time. A kill once the bot
runs: test_sandbox.py::test_kill_9_of_the_platform_ends_every_process_in_its_sandboxes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from arena.referee import sandbox
from arena.referee.launcher import children_of, group_layout
from tests.procs import mounted_under
from tests.timing import scaled, wait_until

HERE = Path(__file__).resolve().parent
DEADLINE_S = 20.0

pytestmark = pytest.mark.skipif(
    sandbox.unavailable_reason() is not None, reason="bubblewrap cannot run here"
)


def carrying(token: str) -> list[tuple[int, str]]:
    """(pid, command name) of every live process whose environment holds the token."""
    needle = f"ARENA_TOKEN={token}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{entry.name}/stat") as f:
                comm, _, rest = f.read().partition(" (")[2].rpartition(") ")
        except OSError:
            continue
        if needle in environ and not rest.startswith("Z"):
            found.append((int(entry.name), comm))
    return found


def in_a_new_pid_namespace(pid: int) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid") != os.readlink("/proc/self/ns/pid")
    except OSError:
        return False


def is_a_guard(pid: int) -> bool:
    """Whether process `pid` runs the guard (arena/referee/rlimits.py): the launcher starts other
    processes too (bubblewrap's check)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"arena.referee.rlimits" in f.read().split(b"\0")
    except OSError:
        return False


def wait_for(condition, what: str):
    return wait_until(condition, what, DEADLINE_S, poll_s=0.005)


def kill_survivors(token: str) -> None:
    for pid, _ in carrying(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start(tmp_path: Path, how: str) -> tuple[subprocess.Popen, str]:
    token = uuid.uuid4().hex
    launcher = subprocess.Popen(
        [sys.executable, str(HERE / "held_launcher.py"), str(tmp_path), token, how],
        stdin=subprocess.DEVNULL,
    )
    return launcher, token


# Where the launching process is when it is killed, and how the test knows it is there.
KILL_POINTS = {
    # bubblewrap's child exists (in its new PID namespace) and is held building the sandbox
    "while bubblewrap builds the sandbox": (
        "hold",
        lambda launcher, token: any(in_a_new_pid_namespace(p) for p, _ in carrying(token)),
    ),
    # the guard or bubblewrap has just been started: the first process with the token
    "as soon as the guard runs": ("run", lambda launcher, token: carrying(token)),
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_a_launcher_killed_during_a_bots_start_up_leaves_no_process(tmp_path, point):
    how, reached = KILL_POINTS[point]
    launcher, token = start(tmp_path, how)
    try:
        wait_for(lambda: reached(launcher, token) or launcher.poll() is not None, point)
        assert launcher.poll() is None, "the launcher ended before it was killed"
        launcher.kill()
        launcher.wait(timeout=scaled(DEADLINE_S))
        left = []
        deadline = time.monotonic() + scaled(DEADLINE_S)
        while (left := carrying(token)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert left == [], f"left running after the launcher was killed {point}: {left}"
        # The guard also removed what the launcher would have: the control groups of the bot
        # (and the launcher's directory of groups) and the work directory's tmpfs.
        layout = group_layout()
        if layout is not None:
            owner_dirs = layout.owner_dirs(launcher.pid)
            wait_for(lambda: not any(d.exists() for d in owner_dirs), f"{owner_dirs} removed")
        assert not os.path.ismount(tmp_path / "bot"), "the work directory is still mounted"
    finally:
        launcher.kill()
        launcher.wait()
        kill_survivors(token)


@pytest.mark.parametrize("kill", ["guard", "guard's group"])
def test_a_launcher_killed_with_its_bots_guard_leaves_no_mount_and_no_group(tmp_path, kill):
    """As a Ray node's bots die with it: the worker that launched them exits and kills its
    direct children with SIGKILL first (Ray's kill_child_processes_on_worker_exit), the guards
    among them. The guard's keeper (arena/referee/rlimits.py) then removes what neither the
    launcher nor the guard can any more: the work directory's tmpfs and the control groups.
    Also when the launcher is killed in the middle of a stop, after it has killed the guard's
    process group and before it has cleaned up (the keeper has left that group)."""
    launcher, token = start(tmp_path, "run")
    try:
        wait_for(
            lambda: (
                any(in_a_new_pid_namespace(p) for p, _ in carrying(token))
                or launcher.poll() is not None
            ),
            "the bot's sandbox",
        )
        assert launcher.poll() is None, "the launcher ended before it was killed"
        workdir = tmp_path / "bot"
        assert os.path.ismount(workdir), "the bot got no tmpfs work directory"
        (guard,) = children_of(launcher.pid)
        if kill == "guard":
            os.kill(guard, signal.SIGKILL)
        else:
            os.killpg(guard, signal.SIGKILL)  # the guard leads its group (a session of its own)
        launcher.kill()
        launcher.wait(timeout=scaled(DEADLINE_S))
        wait_for(lambda: not carrying(token), "every process of the bot (its keeper too) ended")
        assert not mounted_under(tmp_path), "the work directory is still mounted"
        assert not workdir.exists()
        layout = group_layout()
        if layout is not None:
            owner_dirs = layout.owner_dirs(launcher.pid)
            assert not any(d.exists() for d in owner_dirs), f"{owner_dirs} left"
    finally:
        launcher.kill()
        launcher.wait()
        kill_survivors(token)


def test_a_launcher_killed_with_its_bots_guard_as_the_guard_starts_leaves_no_mount(tmp_path):
    """As a Ray node killed while its referee launches a bot: the worker dies and kills its
    direct children with SIGKILL, among them a guard that has only just started, before it has
    forked its keeper. Nothing may stay mounted: the launcher mounts the work directory only
    once the guard says that its keeper runs (arena/referee/rlimits.py, "The keeper")."""
    launcher, token = start(tmp_path, "run")
    try:

        def guards() -> list[int]:
            return [p for p in children_of(launcher.pid) if is_a_guard(p)]

        wait_for(lambda: guards() or launcher.poll() is not None, "the guard")
        assert launcher.poll() is None, "the launcher ended before it was killed"
        for guard in guards():
            os.kill(guard, signal.SIGKILL)
        launcher.kill()
        launcher.wait(timeout=scaled(DEADLINE_S))
        wait_for(lambda: not carrying(token), "every process of the bot (its keeper too) ended")
        assert not mounted_under(tmp_path), "the work directory is still mounted"
    finally:
        launcher.kill()
        launcher.wait()
        for path in mounted_under(tmp_path):  # what this test found left: not on the host
            subprocess.run(["umount", "-l", path], check=False)
