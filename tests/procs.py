"""Finding processes a test left behind, without ps or pgrep (not on every machine)."""

from __future__ import annotations

import os
from pathlib import Path

from arena.referee.launcher import children_by_parent


def processes_in(directory: Path) -> list[int]:
    """Pids of live (not zombie) processes whose working directory is inside `directory`:
    bots run in their own work directories under a run directory."""
    root = str(Path(directory).resolve())
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
            with open(f"/proc/{entry.name}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd == root or cwd.startswith(root + os.sep)):
            found.append(int(entry.name))
    return found


def bot_processes(bots: Path, name: str) -> list[int]:
    """Pids of live processes in any lane of bot `name` (arena.referee.lanes): its work
    directories under `bots` (a run directory's bots/), NAME and NAME+laneR."""
    return [
        pid
        for lane in [Path(bots) / name, *sorted(Path(bots).glob(f"{name}+lane*"))]
        for pid in processes_in(lane)
    ]


def descendants(pid: int) -> list[int]:
    """Pids of the live (not zombie) descendants of `pid`, children first."""
    children = children_by_parent()
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(0), [])
        found += kids
        todo += kids
    return found


def mounted_under(directory: Path) -> list[str]:
    """Mount points at or under `directory` in this process's mount namespace (from
    /proc/self/mountinfo): a bot's work directory (a tmpfs of its own) left mounted, say."""
    root = os.path.realpath(directory)
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            # The fifth field is the mount point, with space, tab, newline, backslash escaped.
            point = line.split()[4]
            for escaped, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n")):
                point = point.replace(escaped, char)
            point = point.replace("\\134", "\\")
            if point == root or point.startswith(root + os.sep):
                found.append(point)
    return found
