"""Control groups of launched bots: one group per sandbox that caps the memory (shared memory,
memfds and tmpfs pages included, no swap), the processes and the CPU of everything the bot runs,
counted as one, and ends all of it at once.

Two kinds of host are served:
- cgroup v1 (this project's machines): the `memory`, `pids` and `cpu` hierarchies, each at
  /sys/fs/cgroup/<controller>. A bot's group in each is <the platform's own group>/arena/
  <platform pid>/<bot key>: under the platform's own group, so that whatever caps the platform
  has also caps its bots, and never beside it by accident.
- cgroup v2 where the platform's group delegates the three controllers (`cgroup.controllers`
  lists them and `cgroup.subtree_control` accepts them): one directory per bot under the same
  path.
Where neither works, `available()` says why; the launcher warns once and falls back to the
per-process rlimits (see docs/reliability.md, "Resources").

The CPU: a bot's group has the same weight as every other bot's (`cpu.shares` 1024 / `cpu.weight`
100) while a match waits for it (one of its decisions, or its connection at a match's start),
a sixteenth of it during its start-up, and otherwise is SCHED_IDLE (`cpu.idle`; the low weight
where the kernel lacks it), from its Hello (`set_deciding`): a bot's extra processes share its
own slice instead of taking other seats', and what it computes when nobody waits for it
(spinners, a bot that never says Hello) runs only on CPU the deciding seats leave; and a quota
(`cpus`, 1.0 by default: one core's time) caps it however idle the machine is. All bots of a
platform sit in one group weighing as much as one busy thread of the platform per core (v1:
the platform's threads are in the root group), so the referee keeps its turn.

The platform creates a bot's group before the bot starts; the bot's guard (arena.referee.rlimits)
puts the bot's process into it before it becomes bubblewrap, so everything under it is counted;
ending the bot kills every process of the group (v2 `cgroup.kill`; v1 the pids of
`cgroup.procs`, again until none is left), then the group is removed. Groups whose platform
process has died are swept when the next one starts (`sweep`).
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import string
import time
from pathlib import Path

from arena.processes import pid_exists

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu")
ARENA = "arena"  # the directory of all platforms' bot groups, under the platform's own group
# The quota's period: short, so that a bot's spinning processes, throttled when they have used
# its quota, cannot first take every core for long (measured: `scripts/bench.py noisy`).
CPU_PERIOD_US = 10_000
KILL_DEADLINE_S = 5.0


# Plain classes, not dataclasses: the bot's guard imports this module at every launch, and
# dataclasses (with inspect) would double its start-up time.
class GroupLimits:
    """What one bot's group may use, all its processes together (0 = no limit)."""

    __slots__ = ("memory_mb", "processes", "cpus")

    def __init__(self, memory_mb: int = 1024, processes: int = 64, cpus: float = 1.0):
        self.memory_mb = memory_mb
        self.processes = processes
        self.cpus = cpus  # CPU time per wall-clock second (1.0 = one core)


# Errors that say the platform is out of a resource for now (a flood of connections holding its
# descriptors), not that control groups cannot be used: an OSError the launch's callers retry.
EXHAUSTED = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)


class CgroupError(RuntimeError):
    """A control group could not be made or written; the message says which and why."""


class Layout:
    """Where this platform's bot groups go: `bases` are the directories holding one directory
    per platform process (`arena` under the platform's own group), one per v1 controller, or a
    single one on v2."""

    __slots__ = ("version", "bases")

    def __init__(self, version: int, bases: tuple[Path, ...]):
        self.version = version
        self.bases = bases

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and (self.version, self.bases) == (
            other.version,
            other.bases,
        )

    def __hash__(self) -> int:
        return hash((self.version, self.bases))

    def __repr__(self) -> str:
        return f"Layout({self.version}, {self.bases})"

    def owner_dirs(self, owner: int) -> tuple[Path, ...]:
        return tuple(base / str(owner) for base in self.bases)


def own_groups(proc_cgroup: str) -> dict[str, str]:
    """The process's group per v1 controller, and per "" (the v2 hierarchy), from the text of
    /proc/PID/cgroup ("ID:controllers:/path" lines)."""
    groups: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            groups[controller] = parts[2]
    return groups


def _under(root: Path, group: str) -> Path:
    return root / group.lstrip("/") if group.strip("/") else root


def detect(root: Path = ROOT, proc_cgroup: str | None = None) -> Layout | str:
    """This machine's layout of bot groups, or why none can be used (a sentence)."""
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError as err:
            return f"cannot read /proc/self/cgroup ({err})"
    groups = own_groups(proc_cgroup)
    if (root / "cgroup.controllers").is_file():
        return _detect_v2(root, groups.get("", "/"))
    missing = [c for c in CONTROLLERS if not (root / c / "cgroup.procs").is_file()]
    if missing:
        return f"no cgroup v2 at {root} and no cgroup v1 hierarchy for {', '.join(missing)}"
    bases = tuple(_under(root / c, groups.get(c, "/")) / ARENA for c in CONTROLLERS)
    for base in bases:
        try:
            base.mkdir(exist_ok=True)
        except OSError as err:
            return f"cannot create the control group {base} ({err.strerror})"
    return Layout(1, bases)


def _detect_v2(root: Path, own: str) -> Layout | str:
    group = _under(root, own)
    offered = _words(group / "cgroup.controllers")
    missing = [c for c in CONTROLLERS if c not in offered]
    if missing:
        return (
            f"the platform's cgroup v2 group {group} is not given the {', '.join(missing)} "
            "controller(s) (see its cgroup.controllers; delegate them, e.g. systemd Delegate=yes)"
        )
    base = group / ARENA
    try:
        _enable(group)
        base.mkdir(exist_ok=True)
        _enable(base)
    except OSError as err:
        return (
            f"cannot delegate {' '.join(CONTROLLERS)} below {group} ({err.strerror}); "
            "cgroup v2 lets a group with processes give no controllers to its children: run "
            "Arena in a leaf group of a delegated subtree"
        )
    return Layout(2, (base,))


def _words(path: Path) -> set[str]:
    try:
        return set(path.read_text().split())
    except OSError:
        return set()


def _enable(group: Path) -> None:
    """Let `group`'s children use the three controllers (v2 cgroup.subtree_control)."""
    if not set(CONTROLLERS) <= _words(group / "cgroup.subtree_control"):
        _write(group / "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS))


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


@functools.cache  # the same for every launch of this process
def layout() -> Layout | str:
    found = detect()
    if isinstance(found, Layout):
        set_arena_weight(found, os.cpu_count() or 1)
        sweep(found, os.getpid())
        for owner in found.owner_dirs(os.getpid()):
            owner.mkdir(exist_ok=True)
            if found.version == 2:
                _enable(owner)
    return found


def set_arena_weight(where: Layout, cpus: int) -> None:
    """All the bots of the machine together weigh as much as one busy platform thread per core
    (v1: the platform's threads are in the root group, 1024 each). Less (one thread's worth)
    starved bots' start-up on a machine busy with other work; more would take from the
    platform. Best effort (another platform may have set it)."""
    if where.version == 2:
        _optional(where.bases[0] / "cpu.weight", str(min(10_000, 100 * cpus)))
    else:
        _optional(where.bases[2] / "cpu.shares", str(1024 * cpus))


def key_for(name: str) -> str:
    """A directory name for one launch of the bot `name`: its name made safe, and a random tail
    (a relaunch must not meet the group of the launch before it, which may still be ending)."""
    safe = "".join(c if c in _SAFE else "_" for c in name[:64])
    return f"{safe}-{os.urandom(4).hex()}"


_SAFE = set(string.ascii_letters + string.digits + "_.@-")


# A bot's group while nobody waits for it (after its start-up) is SCHED_IDLE (`cpu.idle` 1,
# cgroup v1 and v2 alike, Linux 5.15 and later): it runs only on CPU that nothing else wants,
# and a waking task of any other group preempts it at once. What a bot computes off its turn
# (spinners, a search pondering on the others' time, a bot that never plays) then takes
# nothing from the seats that are deciding. Its quota stays its own (`cpus`) throughout: a quota
# lowered between decisions (a tenth of a core, until 2026-12-02) left groups throttled for
# most 10 ms periods once the bot had gone idle and back a few dozen times (this kernel, 6.18),
# even at the whole quota, which made a decision 5 to 9 ms slower (docs/benchmarks.md, "The
# idle quota").
IDLE_FILE = "cpu.idle"
CPU_FILES = {1: "cpu.shares", 2: "cpu.weight"}
# CPU weights of a bot's group (v1 cpu.shares, v2 cpu.weight): while a match waits for it (a
# decision, or its connection), and during its start-up; where the kernel has no `cpu.idle`,
# the low one also while nobody waits for it.
WEIGHTS = {1: (b"1024", b"64"), 2: (b"100", b"6")}


class BotGroup:
    """One bot's control group: a directory per v1 controller (memory, pids, cpu), or one."""

    __slots__ = ("version", "dirs", "cpus", "_weight_fd", "_idle_fd")

    def __init__(self, version: int, dirs: tuple[Path, ...], cpus: float = 1.0):
        self.version = version
        self.dirs = dirs
        self.cpus = cpus  # its quota (0: none)
        self._weight_fd: int | None = None
        self._idle_fd: int | None = None  # None where the kernel has no cpu.idle

    def set_deciding(self, deciding: bool) -> None:
        """Give the group a deciding bot's CPU weight, or make it idle (SCHED_IDLE; the low
        weight where the kernel has no `cpu.idle`) while nobody waits for it. Called around
        every decision: the files stay open (one or two writes of a few bytes, about 2 us
        each). A group's weight cannot be written while it is idle: it leaves idle first."""
        if self._weight_fd is None:
            cpu = self.dirs[0] if self.version == 2 else self.dirs[2]
            try:
                self._weight_fd = os.open(cpu / CPU_FILES[self.version], os.O_WRONLY | os.O_CLOEXEC)
            except OSError:
                return
            try:
                self._idle_fd = os.open(cpu / IDLE_FILE, os.O_WRONLY | os.O_CLOEXEC)
            except OSError:
                self._idle_fd = None
        try:
            if deciding:
                if self._idle_fd is not None:
                    os.write(self._idle_fd, b"0")
                os.write(self._weight_fd, WEIGHTS[self.version][0])
            elif self._idle_fd is not None:
                os.write(self._idle_fd, b"1")
            else:
                os.write(self._weight_fd, WEIGHTS[self.version][1])
        except OSError:
            pass

    def _quota(self, cpus: float) -> bytes:
        """What the quota file takes for `cpus` cores' time per period (0: no quota)."""
        quota = int(cpus * CPU_PERIOD_US)
        if self.version == 2:
            return f"{quota if quota else 'max'} {CPU_PERIOD_US}".encode()
        return str(quota if quota else -1).encode()

    def set_quota(self, cpus: float) -> None:
        """Set the group's CPU quota to `cpus` cores' time per period (a build's, which drops
        while matches are played). Raises OSError if the file cannot be written."""
        cpu = self.dirs[0] if self.version == 2 else self.dirs[2]
        name = "cpu.max" if self.version == 2 else "cpu.cfs_quota_us"
        (cpu / name).write_bytes(self._quota(cpus))

    def close(self) -> None:
        for fd in (self._weight_fd, self._idle_fd):
            if fd is not None:
                os.close(fd)
        self._weight_fd = self._idle_fd = None

    @classmethod
    def create(cls, where: Layout, owner: int, key: str, limits: GroupLimits) -> "BotGroup":
        """Make the group, limits written. Raises CgroupError saying what failed."""
        dirs = tuple(d / key for d in where.owner_dirs(owner))
        group = cls(where.version, dirs, limits.cpus)
        try:
            for d in dirs:
                try:
                    d.mkdir()
                except FileNotFoundError:  # the owner's directory is gone (removed when empty)
                    d.parent.mkdir(exist_ok=True)
                    if where.version == 2:
                        _enable(d.parent)
                    d.mkdir()
            group._limit(limits)
        except OSError as err:
            group.remove()
            if err.errno in EXHAUSTED:
                raise  # the platform out of descriptors or memory for now: callers retry
            raise CgroupError(f"cannot set up the control group {dirs[0]}: {err}") from err
        return group

    def _limit(self, limits: GroupLimits) -> None:
        memory = limits.memory_mb * 1024 * 1024
        quota = self._quota(limits.cpus).decode()
        if self.version == 2:
            (d,) = self.dirs
            if memory:
                _write(d / "memory.max", str(memory))
            _optional(d / "memory.swap.max", "0")
            if limits.processes:
                _write(d / "pids.max", str(limits.processes))
            _write(d / "cpu.weight", WEIGHTS[2][1].decode())
            _write(d / "cpu.max", quota)
            return
        mem, pids, cpu = self.dirs
        if memory:
            _write(mem / "memory.limit_in_bytes", str(memory))
            _optional(mem / "memory.memsw.limit_in_bytes", str(memory))  # no swap
        _optional(mem / "memory.swappiness", "0")
        if limits.processes:
            _write(pids / "pids.max", str(limits.processes))
        _write(cpu / "cpu.shares", WEIGHTS[1][1].decode())
        _write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
        _write(cpu / "cpu.cfs_quota_us", quota)

    @property
    def procs_files(self) -> tuple[Path, ...]:
        """What a process writes its pid into to join the group (every controller's)."""
        return tuple(d / "cgroup.procs" for d in self.dirs)

    def pids(self) -> list[int]:
        found: set[int] = set()
        for path in self.procs_files:
            try:
                found.update(int(p) for p in path.read_text().split())
            except (OSError, ValueError):
                continue
        return sorted(found)

    def oom_kills(self) -> int:
        """How many of the group's processes the kernel killed for its memory limit."""
        events = self.dirs[0] / ("memory.events" if self.version == 2 else "memory.oom_control")
        try:
            for line in events.read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def kill(self, deadline_s: float = KILL_DEADLINE_S) -> bool:
        """Kill every process of the group; True once none is left (within the deadline)."""
        if (self.dirs[0] / "cgroup.kill").exists():  # v2, Linux 5.14 on
            _optional(self.dirs[0] / "cgroup.kill", "1")
        end = time.monotonic() + deadline_s
        while pids := self.pids():
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if time.monotonic() > end:
                return False
            time.sleep(0.001)  # dying processes leave the group asynchronously
        return True

    def remove(self, deadline_s: float = 5.0) -> None:
        """Remove the group's directories (empty them first with kill). Best effort: a group
        that is still busy at the deadline is left for the sweep of the next start."""
        self.close()
        end = time.monotonic() + deadline_s
        for d in self.dirs:
            while True:
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > end:
                        break
                    time.sleep(0.002)  # the last process is still leaving it


def _optional(path: Path, value: str) -> None:
    """Write an interface file this kernel may not have (swap accounting, cgroup.kill)."""
    try:
        _write(path, value)
    except OSError:
        pass


def sweep(where: Layout, me: int) -> int:
    """End and remove the groups of platform processes that are gone (a platform killed with
    kill -9 whose guards were killed too); how many bot groups were removed."""
    removed = 0
    owners: dict[str, list[Path]] = {}
    for base in where.bases:
        try:
            entries = list(base.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir() and entry.name.isdigit() and int(entry.name) != me:
                owners.setdefault(entry.name, []).append(entry)
    for owner, dirs in owners.items():
        if pid_exists(int(owner)):
            continue
        keys: set[str] = set()
        for d in dirs:
            try:
                keys.update(k.name for k in d.iterdir() if k.is_dir())
            except OSError:  # another platform process (one starting beside this) swept it
                continue
        for key in keys:
            group = BotGroup(where.version, tuple(d / key for d in dirs))
            group.kill()
            group.remove()
            removed += 1
        for d in dirs:
            try:
                d.rmdir()
            except OSError:
                pass
    return removed
