"""Facts about the host's processes that several layers need."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Callable


def pid_exists(pid: int) -> bool:
    """Whether a process `pid` exists (of any user; a zombie counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def process_start(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot), or None if there is no such
    process (or /proc cannot say)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            # Field 22; the command name (field 2) may hold spaces and ')', so split after it.
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def group_is_theirs(pgid: int, leader_start: int | None) -> bool:
    """Whether the process group number `pgid` may still be the group whose leader started
    at `leader_start`: False only when a process `pgid` exists that started at another time
    (a newcomer: the old group is empty). See signal_group."""
    now = process_start(pgid)
    return now is None or leader_start is None or now == leader_start


def signal_group(pgid: int, sig: signal.Signals, leader_start: int | None) -> None:
    """Send `sig` to the process group `pgid`, whose leader (the process `pgid`) started at
    `leader_start` (process_start's figure, taken while it ran), unless that number is now
    another process's. Once its leader is reaped and its last member gone, a group's number is
    free, and a new session leader that gets it would take a signal meant for the old group.
    Pids are handed out in turn, so the newest processes are the ones that get a freed number:
    a host with 32,768 pids (this one) goes through them every few minutes under a busy test
    run, and a stop that came that long after its guard ended could kill a bot's guard as it
    started (the likely cause of a good bot that "exited before it connected" with an empty
    log). While the leader lives (or is a zombie) or a member is left, the number cannot be
    reused, and the signal reaches the group."""
    if not group_is_theirs(pgid, leader_start):
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def owned_dir(
    base: str | Path, prefix: str, release: Callable[[Path], object] | None = None
) -> Path:
    """A new private folder in `base` named after this process (PREFIX + PID + "-" + random),
    after sweeping the folders of that prefix whose process is gone (sweep_owned_dirs): a
    process killed -9 cannot remove its own."""
    sweep_owned_dirs(base, prefix, release)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))


def sweep_owned_dirs(
    base: str | Path, prefix: str, release: Callable[[Path], object] | None = None
) -> int:
    """Remove the folders in `base` made by owned_dir(base, prefix) of processes that are
    gone (this user's; root: anyone's), calling `release` on each first (to unmount it,
    say); how many. A folder whose process lives, or whose name is not owned_dir's, stays."""
    removed = 0
    try:
        entries = list(os.scandir(base))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid_text, _, rest = entry.name[len(prefix) :].partition("-")
        if not pid_text.isdigit() or not rest:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            # Another user's folder is theirs to sweep; root's are all (a build's tmpfs is
            # owned by the build's user).
            if os.geteuid() != 0 and entry.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        if pid_exists(int(pid_text)):
            continue
        if release is not None:
            release(Path(entry.path))
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed
