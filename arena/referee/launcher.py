"""Launching bot processes in their sandbox, and ending them with everything they started.

A bot is a command (`python example_bots/random_bot.py`) or a directory holding a manifest
(`arena-bot.toml` with `command = "..."`, run inside that directory). The launcher starts it in a
new session, in a bubblewrap sandbox (arena.referee.sandbox: its own PID, mount, IPC, UTS and
network namespaces, its own user, a file system with nothing of the platform's but what a bot
needs to run), with an environment that holds the referee's address (a Unix socket bound into
the sandbox) and that bot's token only (plus PATH, LANG, and HOME and TMPDIR inside its work
directory), its stdout and stderr going to a per-bot log file, and resource limits and a umask
of 077 applied by `arena.referee.rlimits` just before bubblewrap runs. Each launch gets a control
group (arena.referee.cgroups: memory with shared memory and tmpfs pages, processes, CPU, for the
whole sandbox) made before it starts and removed after it ends, and, when the platform is root,
a work directory that is a tmpfs of its own (arena.referee.workdir: a size and a file count,
unmounted at the end); the sandbox gets a seccomp filter (arena.referee.seccomp). Where control
groups cannot be used, a warning says so once and the per-process rlimits remain. The guard
module is the bot's guard process: it stays bubblewrap's parent and ends the sandbox, whatever
bubblewrap left behind included, when the bot ends, when it is stopped, or when the launching
process dies (even by kill -9, even while the sandbox is being built). `stop()` ends the sandbox
(the kernel ends every process in its PID namespace with it, and its control group is killed)
and waits until none is left.

With `ResourceLimits(sandbox=False)` (`--no-sandbox`) the bot runs unconfined as the platform's
user, in its own process group, which `stop()` ends as a whole: for bots the organiser trusts.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from arena import botcommand
from arena.botcommand import MANIFEST, BotCommand, BotCommandError  # noqa: F401 (re-exported)
from arena.deadlines import within
from arena.processes import group_is_theirs, process_start, signal_group

from . import cgroups, sandbox, seccomp, workdir

log = logging.getLogger(__name__)

_SIGNALS = {int(s): s.name for s in signal.Signals}
# How long a bot's guard may take to kill and reap its sandbox once told to stop.
GUARD_EXIT_S = 10.0
# How long the launcher waits, once it has cleaned up, for the guard's keeper to exit.
KEEPER_EXIT_S = 5.0
# How long the launcher waits for a new guard to say that its keeper runs (arena.referee.rlimits,
# "The keeper") before it mounts the bot's work directory; past it, nothing is mounted and the
# guard ends without starting the bot.
KEEPER_READY_S = 30.0
# How long a launched bot's start-up may run at a low CPU weight before its group is made idle
# (SCHED_IDLE: cgroups.IDLE_FILE) like any bot nobody waits for; a match waiting for it to
# connect gives it a deciding bot's weight at once (seat.py).
START_UP_S = 5.0
# Where the guard puts the seccomp program for bubblewrap (its child's first free descriptor).
SECCOMP_FD = 3


@dataclass(frozen=True, slots=True)
class ResourceLimits:
    """Limits applied to a launched bot (0 = no limit). See docs/reliability.md, "Resources".

    With a control group (arena.referee.cgroups), for the whole sandbox together: memory_mb
    caps its memory, shared memory, memfds and its tmpfs files included, with no swap (a bot
    over it is killed, and its fault says so); max_processes caps its processes and threads
    (pids); cpus caps its CPU time per second (1.0 = one core; and every bot weighs the same).
    Per process, always: address_space_mb (RLIMIT_AS; the only memory cap where there is no
    control group), cpu_s CPU seconds (RLIMIT_CPU, over the process's whole life, so for the
    ladder's length; none by default: the group's quota is what stops a spinner slowing others),
    open_files descriptors (RLIMIT_NOFILE), file_mb any file the bot writes, its log included
    (RLIMIT_FSIZE), and the size of its private /tmp. disk_mb and max_files size its work
    directory (a tmpfs when the platform is root). max_processes is also RLIMIT_NPROC of the
    sandbox's own user when the platform is root. sandbox False runs bots unconfined
    (`--no-sandbox`), for bots the organiser trusts."""

    memory_mb: int = 1024
    cpu_s: int = 0
    open_files: int = 256
    file_mb: int = 64
    max_processes: int = 64
    sandbox: bool = True
    cpus: float = 1.0
    address_space_mb: int = 4096
    disk_mb: int = 256
    max_files: int = workdir.MAX_FILES
    control_group: bool = True  # False: the rlimits alone (a measurement's reference)

    def group_limits(self) -> cgroups.GroupLimits:
        return cgroups.GroupLimits(self.memory_mb, self.max_processes, self.cpus)


@functools.cache  # said once per process
def group_layout() -> cgroups.Layout | None:
    """Where bot control groups go on this machine, or None (with one warning saying why and
    what remains) where none can be used."""
    found = cgroups.layout()
    if isinstance(found, str):
        log.warning(
            "launched bots get no control group: %s; each bot process keeps its rlimits "
            "(address space, descriptors, file size, processes) but its processes are not "
            "capped together (memory, shared memory, CPU)",
            found,
        )
        return None
    return found


def resolve_command(spec: str, base: Path | None = None) -> BotCommand:
    """What a user typed (a command line or a bot directory) made runnable; see
    arena.botcommand. Raises BotCommandError saying what is wrong."""
    return botcommand.resolve(spec, base)


class BotProcess:
    """One launched bot process: its sandbox (or, unconfined, its process group)."""

    def __init__(
        self,
        name: str,
        command: BotCommand,
        workdir: Path,
        log_path: Path,
        env: dict[str, str],
        referee_socket: Path,
        limits: ResourceLimits = ResourceLimits(),
        key: str | None = None,
    ):
        """key names the launch's control group (default: the name)."""
        self.name = name
        self.key = key or name
        self.command = command
        self.workdir = Path(os.path.abspath(workdir))  # bound into the sandbox by its path
        self.log_path = log_path
        self.env = env
        self.referee_socket = referee_socket
        self.limits = limits
        self.proc: asyncio.subprocess.Process | None = None
        self.pgid: int | None = None
        self._pgid_start: int | None = None
        self.uid: int | None = None  # the sandbox's own user, when the platform is root
        self._pidns: str | None = None
        self._init_pid: int | None = None
        self._init_start: int | None = None  # when that init started (process_start)
        self.group: cgroups.BotGroup | None = None
        self._mounted = False  # the work directory is a tmpfs of this launch
        self._tmpfs = False  # it is to be one (mounted once the guard's keeper runs)
        # The launcher's end of the release socket of the guard's keeper (arena.referee.rlimits).
        self._release_socket: socket.socket | None = None
        self._oom_kills = 0  # counted when the group is removed
        self.pending_decisions = 0
        # The platform's time for making the control group and the work directory, and for
        # removing them (scripts/bench.py noisy).
        self.group_setup_s = self.workdir_setup_s = 0.0
        self.group_release_s = self.workdir_release_s = 0.0
        self._start_up: asyncio.TimerHandle | None = None
        # Where in its log this launch's next match begins: the log's size at launch, then
        # the end of each match's read (host.py: a match's BotLog).
        self.log_read = 0
        self.log_start = 0  # where this launch's lines begin in the log

    async def start(self) -> None:
        """Launch the bot. Raises sandbox.SandboxUnavailable when it should run in a sandbox
        and bubblewrap cannot run here, cgroups.CgroupError when its control group cannot be
        made (infrastructure errors, not the bot's fault); what was made for it is undone."""
        try:
            await self._launch()
        except BaseException:
            if self.proc is None:
                self._release()
            raise

    async def _launch(self) -> None:
        lim = self.limits
        env = dict(self.env)
        if self.command.pythonpath:  # its installed environment first (arena.referee.build)
            paths = [str(p) for p in self.command.pythonpath]
            env["PYTHONPATH"] = os.pathsep.join([*paths, *filter(None, [env.get("PYTHONPATH")])])
        cwd = self.command.cwd or self.workdir
        proto = sandbox.protocol_file()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        processes = 0
        guard_options: list[str] = []
        if lim.sandbox:
            sandbox.require()
            if os.geteuid() == 0:
                self.uid = sandbox.pick_uid()
                processes = lim.max_processes
            began = time.perf_counter()
            self._make_workdir()
            self.workdir_setup_s = time.perf_counter() - began
            own = sandbox.bot_directory(self.command.argv, self.command.cwd)
            extra = [Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
            box = sandbox.Sandbox(
                self.workdir,
                self.referee_socket,
                uid=self.uid,
                proto=proto,
                read_only=(*sandbox.runtime_paths(), *extra, *([own] if own else [])),
                tmp_mb=lim.file_mb or 64,
                seccomp_fd=SECCOMP_FD if seccomp.native_arch() is not None else None,
            )
            if box.seccomp_fd is not None:
                guard_options += ["--seccomp-fd", str(box.seccomp_fd)]
            if self._tmpfs:
                guard_options += ["--workdir", str(self.workdir)]
            command = box.argv(self.command.argv, cwd)
            env["ARENA_ADDRESS"] = sandbox.ADDRESS_IN_SANDBOX
            # Inside, the work directory is at one path for every bot and lane.
            for var in ("HOME", "TMPDIR"):
                if var in env and _under_dir(env[var], self.workdir):
                    inside = Path(env[var]).relative_to(self.workdir)
                    env[var] = str(Path(sandbox.WORKDIR_IN_SANDBOX) / inside)
            if proto is not None:
                env["ARENA_PROTO"] = sandbox.PROTO_IN_SANDBOX
        else:
            # Private to the platform's user (mode 700), with the bot's own temporary directory.
            self.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
            (self.workdir / "tmp").mkdir(mode=0o700, exist_ok=True)
            command = list(self.command.argv)
            env["ARENA_ADDRESS"] = f"unix:{self.referee_socket}"
            if proto is not None:
                env["ARENA_PROTO"] = str(proto)
        where = group_layout() if lim.control_group else None
        if where is not None:
            began = time.perf_counter()
            key = cgroups.key_for(self.key)
            self.group = cgroups.BotGroup.create(where, os.getpid(), key, lim.group_limits())
            self.group_setup_s = time.perf_counter() - began
            for d in self.group.dirs:
                guard_options += ["--cgroup", str(d)]
        keepers_end = guards_end = ready = None
        if self._tmpfs or self.group is not None:
            self._release_socket, keepers_end = socket.socketpair()
            guard_options += ["--release-fd", str(keepers_end.fileno())]
        if self._tmpfs:
            ready, guards_end = socket.socketpair()
            guard_options += ["--ready-fd", str(guards_end.fileno())]
        passed = tuple(end.fileno() for end in (keepers_end, guards_end) if end is not None)
        argv = [
            sys.executable,
            "-m",
            "arena.referee.rlimits",
            str(lim.address_space_mb),
            str(lim.cpu_s),
            str(lim.open_files),
            str(lim.file_mb),
            str(processes),
            str(os.getpid()),  # the guard ends the bot when this process dies
            *guard_options,
            "--",
            *command,
        ]
        try:
            with open(self.log_path, "ab") as log:  # noqa: ASYNC230 (a local file: instant)
                # An earlier launch's lines are not this one's.
                self.log_start = self.log_read = log.seek(0, os.SEEK_END)
                self.proc = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=cwd,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                    pass_fds=passed,
                )
        finally:
            for end in (keepers_end, guards_end):
                if end is not None:
                    end.close()  # the guard's (then its keeper's) alone
        self.pgid = self.proc.pid  # a new session: the guard's pid is the group id
        self._pgid_start = process_start(self.pgid)  # the number may be reused once it is free
        if ready is not None:
            await self._mount_when_kept(ready)
        if self.group is not None:
            # Its start-up runs at the low weight for a while; then, while nobody waits for
            # it, its group is idle (cgroups.IDLE_FILE).
            self._start_up = asyncio.get_running_loop().call_later(START_UP_S, self.started)

    def started(self) -> None:
        """Its start-up is over (it said Hello, or START_UP_S passed): while nobody waits for
        it, its group is idle. (Also when its first process has exited: what it
        left in its group runs on until the platform stops it.)"""
        if self._start_up is not None:
            self._start_up.cancel()
            self._start_up = None
        if self.group is not None and not self.pending_decisions:
            self.group.set_deciding(False)

    def _make_workdir(self) -> None:
        """The sandbox's work directory, empty: as root a tmpfs of this launch (size, file count,
        owned by the bot's user; no file to walk), else a plain directory of the platform's
        user. As root, a previous launch's directory is moved aside and deleted off the event
        loop, and the new one is made empty here and mounted (_mount_workdir) only once the
        guard's keeper runs: a tmpfs mounted before would stay on the host if this process
        died before the keeper was there to unmount it (a Ray node killed while its referee
        starts a bot)."""
        if workdir.is_mounted(self.workdir):  # a launch of a platform killed -9
            workdir.unmount(self.workdir)
        if self.uid is None:
            self.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
            (self.workdir / "tmp").mkdir(mode=0o700, exist_ok=True)
            return
        if self.workdir.exists():
            aside = self.workdir.with_name(f".{self.workdir.name}.old-{os.urandom(4).hex()}")
            os.rename(self.workdir, aside)
            threading.Thread(target=shutil.rmtree, args=(aside, True), daemon=True).start()
        self.workdir.mkdir(mode=0o700, parents=True)
        self._tmpfs = True

    async def _mount_when_kept(self, ready: socket.socket) -> None:
        """Wait until the guard says that its keeper runs (a byte on `ready`), mount the work
        directory, and tell the guard to start the bot (a byte back). If the guard ends first
        (or says nothing in time), mount nothing and close the socket: the guard then ends
        without starting the bot, and the launch ends as a bot that exited at once."""
        loop = asyncio.get_running_loop()
        with ready:
            ready.setblocking(False)
            why = "its guard ended first"
            try:
                said = await within(loop.sock_recv(ready, 1), KEEPER_READY_S)
            except TimeoutError:
                said, why = b"", f"its guard said nothing in {KEEPER_READY_S:.0f} s"
            except OSError as err:
                said, why = b"", f"its guard's ready socket failed ({err})"
            if not said:
                # The guard then ends without starting the bot: say why (the bot's seat sees only
                # a process that exited before it connected).
                log.warning("launch of bot %s given up before its start: %s", self.name, why)
                return
            began = time.perf_counter()
            self._mount_workdir()
            self.workdir_setup_s += time.perf_counter() - began
            try:
                await loop.sock_sendall(ready, b"g")
            except OSError:
                pass  # the guard has gone: the launch ends as a bot that exited at once

    def _mount_workdir(self) -> None:
        """The tmpfs at the work directory (as root), or, where none can be mounted, the plain
        directory given to the bot's user; with its tmp folder."""
        assert self.uid is not None
        lim = self.limits
        try:
            workdir.mount_tmpfs(self.workdir, lim.disk_mb, self.uid, lim.max_files)
            self._mounted = True
        except OSError as err:
            _warn_no_tmpfs(str(err))
            os.chown(self.workdir, self.uid, self.uid)
        tmp = self.workdir / "tmp"
        tmp.mkdir(mode=0o700)
        os.chown(tmp, self.uid, self.uid)

    def _release(self) -> None:
        """After the guard: end and remove the control group (counting its memory kills), and
        unmount the work directory (nothing of it stays but the log). Blocking, bounded: run
        off the event loop."""
        began = time.perf_counter()
        if self.group is not None:
            self._oom_kills = self.group.oom_kills()
            self.group.kill()
        killed = time.perf_counter()
        if self._mounted:
            workdir.unmount(self.workdir)
            self._mounted = False
        if self._tmpfs:  # made empty for a tmpfs, mounted or not (a launch failed before)
            self._tmpfs = False
            try:
                self.workdir.rmdir()
            except OSError:
                pass
        unmounted = time.perf_counter()
        if self.group is not None:
            self.group.remove()
            self.group = None
        self._release_keeper()
        self.workdir_release_s = unmounted - killed
        self.group_release_s = time.perf_counter() - unmounted + killed - began

    def _release_keeper(self) -> None:
        """Everything is removed: tell the guard's keeper so (a byte on its release socket) and
        wait, bounded, until it has exited (its end closes). Blocking, as _release."""
        sock, self._release_socket = self._release_socket, None
        if sock is None:
            return
        with sock:
            try:
                sock.send(b"x", socket.MSG_NOSIGNAL)
                sock.settimeout(KEEPER_EXIT_S)
                while sock.recv(16):
                    pass
            except OSError:  # it had gone already (EPIPE), or did not end in time
                pass

    def deciding(self) -> Deciding:
        """A context for one decision the referee waits for (or a match waiting for the bot to
        connect): while any is pending, the bot's control group has a deciding bot's CPU
        weight, else (from its start) a low one (cgroups.WEIGHTS)."""
        return Deciding(self)

    def oom_kills(self) -> int:
        """How many of the bot's processes the kernel killed for its memory limit."""
        return self.group.oom_kills() if self.group is not None else self._oom_kills

    async def wait(self) -> int:
        if self.proc is None:
            raise RuntimeError(f"the bot {self.name} was never started: call start() first")
        return await self.proc.wait()

    def exit_info(self) -> str | None:
        """None while running, else how the process ended."""
        if self.proc is None or self.proc.returncode is None:
            return None
        code = self.proc.returncode
        if self.oom_kills():
            return (
                f"the bot was killed for using more than its {self.limits.memory_mb} MB of "
                f"memory (its control group's limit; exit status {code})"
            )
        if code < 0:
            return f"the bot process was killed by {signal.Signals(-code).name}"
        if self.limits.sandbox and code > 128 and code - 128 in _SIGNALS:
            # bubblewrap exits with 128 + the signal that killed the bot
            return f"the bot process was killed by {_SIGNALS[code - 128]} (exit status {code})"
        return f"the bot process exited with code {code}"

    def sandbox_pids(self) -> list[int]:
        """Pids (as the platform sees them) of every live process in the bot's sandbox, the
        namespace's init included; for an unconfined bot, of its process group."""
        if not self.limits.sandbox:
            return self._group_members()
        return self._namespace_members()

    def _namespace_members(self) -> list[int]:
        """The live processes of its sandbox's PID namespace, while that namespace is still its
        own. The kernel numbers namespaces by the lowest free number: once a sandbox has ended,
        the next namespace made on the host (another bot's sandbox) gets its number, and the
        link text found earlier names that one. So the members count only while the sandbox's
        init lives, checked after the scan: a namespace outlives no init, and while the init
        lives its number is not free."""
        namespace = self._pid_namespace()
        if namespace is None:
            return []
        members = namespace_members(namespace)
        return members if self._namespace_is_ours() else []

    def _namespace_is_ours(self) -> bool:
        if self._init_pid is None or process_start(self._init_pid) != self._init_start:
            return False
        try:
            return os.readlink(f"/proc/{self._init_pid}/ns/pid") == self._pidns
        except OSError:
            return False

    def _group_members(self) -> list[int]:
        """The live members of its process group, while the group's number is still its."""
        if self.pgid is None or not group_is_theirs(self.pgid, self._pgid_start):
            return []
        return group_members(self.pgid)

    def _pid_namespace(self) -> str | None:
        # The namespace of bubblewrap's child (its init; bubblewrap is the guard's child), found
        # once while it runs.
        if self._pidns is None and self.proc is not None and self.proc.returncode is None:
            for pid in (p for child in children_of(self.proc.pid) for p in children_of(child)):
                try:
                    namespace = os.readlink(f"/proc/{pid}/ns/pid")
                except OSError:
                    continue
                if namespace != os.readlink("/proc/self/ns/pid"):
                    self._pidns, self._init_pid = namespace, pid
                    self._init_start = process_start(pid)
        return self._pidns

    def _terminate(self) -> None:
        """Ask the bot to end: SIGTERM to every process in its sandbox but its init, which ends
        when the bot does (bubblewrap itself would end at once on SIGTERM, and the whole sandbox
        with it, leaving the bot no time to finish); unconfined, or before the sandbox is made,
        to its process group but the guard (which would kill the bot at once)."""
        if self.proc is None:
            return
        namespace = self._pid_namespace() if self.limits.sandbox else None
        if namespace is None:
            targets = [p for p in self._group_members() if p != self.proc.pid]
        else:  # (none once its sandbox has ended: its namespace's number may be another's)
            targets = [p for p in self._namespace_members() if p != self._init_pid]
        for pid in targets:
            _signal(pid, signal.SIGTERM)

    async def stop(self, grace_s: float = 2.0) -> None:
        """Terminate the bot (SIGTERM), wait up to grace_s for it to exit, then kill what is
        left; reap. In a sandbox the end of bubblewrap ends its PID namespace, every process in
        it included (setsid and double-forked ones too); unconfined, the whole process group is
        killed."""
        if self.proc is None:
            return
        if self._start_up is not None:
            self._start_up.cancel()
        if self.group is not None:
            # A deciding bot's CPU weight: an idle one's could leave its processes too little
            # time to end on a busy machine.
            self.group.set_deciding(True)
        self._terminate()
        try:
            await within(self.proc.wait(), grace_s)
        except TimeoutError:
            # The guard kills the sandbox (or the group) and reaps all of it before it exits: a
            # SIGKILL of bubblewrap while it builds the sandbox would leave the sandbox running.
            if self.proc.returncode is None:
                _signal(self.proc.pid, signal.SIGTERM)
            try:
                await within(self.proc.wait(), GUARD_EXIT_S)
            except TimeoutError:
                pass
        # Kill the group even if the guard is gone (or stuck): its children may still be in it.
        if self.pgid is not None:
            signal_group(self.pgid, signal.SIGKILL, self._pgid_start)
        await self.proc.wait()
        # SIGKILL is delivered asynchronously and the kernel offers no event for "the group is
        # empty", so look until no member is left running (bounded).
        for _ in range(200):
            if not self.sandbox_pids():  # the namespace, or the group when unconfined
                break
            await asyncio.sleep(0.01)
        if self.group is not None or self._tmpfs or self._release_socket is not None:
            await asyncio.to_thread(self._release)

    def log_size(self) -> int:
        """How many bytes its log holds now (0 if it cannot be read): a mark that splits what
        the bot wrote by its moves (seat.py), one stat per reply."""
        try:
            return os.stat(self.log_path).st_size
        except OSError:
            return 0

    def read_log(self, start: int, end: int) -> bytes:
        """Its log's bytes from `start` to `end` (fewer if it is shorter; b"" if unreadable)."""
        if end <= start:
            return b""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(start)
                return f.read(end - start)
        except OSError:
            return b""

    def log_tail(self, limit: int = 2000) -> str:
        """The end of what this launch wrote (at most `limit` bytes): a relaunch's log holds
        its earlier launches' lines too (a bot that exited before its match was seated is
        launched again), which are not this one's."""
        try:
            with open(self.log_path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                start = self.log_start if self.log_start <= size else 0
                f.seek(max(start, size - limit))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


class Deciding:
    """BotProcess.deciding(): counts the bot's pending decisions, and sets its group's weight
    when the count leaves or reaches 0."""

    __slots__ = ("proc",)

    def __init__(self, proc: BotProcess):
        self.proc = proc

    def __enter__(self) -> None:
        self.proc.pending_decisions += 1
        if self.proc.pending_decisions == 1 and self.proc.group is not None:
            self.proc.group.set_deciding(True)

    def __exit__(self, *exc) -> None:
        self.proc.pending_decisions -= 1
        if self.proc.pending_decisions == 0 and self.proc.group is not None:
            self.proc.group.set_deciding(False)


def group_members(pgid: int) -> list[int]:
    """Pids of the live (not zombie) processes in a process group (Linux /proc)."""
    return [pid for pid, fields in _proc_stats() if int(fields[2]) == pgid and fields[0] != "Z"]


def children_of(pid: int) -> list[int]:
    """Pids of the live children of `pid` (Linux /proc)."""
    return [p for p, fields in _proc_stats() if int(fields[1]) == pid and fields[0] != "Z"]


def children_by_parent() -> dict[int, list[int]]:
    """Parent pid -> pids of its live (not zombie) children, from one pass over /proc."""
    children: dict[int, list[int]] = {}
    for pid, fields in _proc_stats():
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(pid)
    return children


def namespace_members(namespace: str) -> list[int]:
    """Pids of the live processes in a PID namespace (its `/proc/PID/ns/pid` link text)."""
    members = []
    for pid, fields in _proc_stats():
        if fields[0] == "Z":
            continue
        try:
            if os.readlink(f"/proc/{pid}/ns/pid") == namespace:
                members.append(pid)
        except OSError:
            continue
    return members


def _proc_stats():
    """(pid, fields after the command name) of every process in /proc."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the command name (which may hold spaces) start after the last ')'.
        yield int(entry.name), stat[stat.rindex(")") + 2 :].split()


@functools.cache  # said once per process
def _warn_no_tmpfs(why: str) -> None:
    log.warning(
        "bots' work directories are plain directories on the host disk (%s): their size and "
        "file count are not capped, only each file's size",
        why,
    )


def _under_dir(path: str, directory: Path) -> bool:
    return Path(path) == directory or directory in Path(path).parents


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def bot_environment(
    token: str, workdir: Path, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment a bot gets: its own token, and nothing of the platform's (no other bot's
    token, no secrets from the caller's environment). The launcher adds the referee's address
    (ARENA_ADDRESS) and the protocol file (ARENA_PROTO)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "TMPDIR": str(workdir / "tmp"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "ARENA_TOKEN": token,
        "PYTHONUNBUFFERED": "1",
    }
    if extra:
        env.update(extra)
    return env
