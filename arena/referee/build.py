"""A submitted version's preparation: its install (a Python bot's wheels) or its build (a C++
bot's `build = [...]`), run in the bots' sandbox before its verification match, its result cached
by content and recorded beside the version (arena.runtimes.Preparation).

Each step runs as a launched bot does (arena.referee.launcher): the guard process
(arena.referee.rlimits) with its rlimits, a control group of its own (memory, processes, CPU as
a bot nobody waits for: SCHED_IDLE where the kernel has cpu.idle, else its low weight; its quota
halved while matches are being played: BuildLimits.busy_cpus), on one core of its own (the
machine's last: taskset), so that a build does not slow the matches being played, the seccomp
filter, and bubblewrap with no network and nothing of the server's files but the system's
read-only directories, Arena's Python and the bot's own folder. Its writable folder, /home/bot,
is a tmpfs of the build's own when the platform is root (its size is the build's disk limit);
a step that runs past the preparation's time limit, prints more than its output limit, or is
killed for memory fails with a sentence saying so, and the sandbox, its group and its folder
are gone when `prepare` returns, whatever happened.

What a preparation makes is kept in a cache (`<cache>/envs/KEY`, `<cache>/builds/KEY`) keyed by
what it depends on: an environment by the runtime, the requirements file and the wheels (so the
versions of one requirement set share one, installed once); a build by the bot's files and its
build commands. `sweep` removes the entries no recorded version uses.

The cache counts toward the server's disk: its entries together hold at most `cache_mb` (each
entry's size is measured when it is made and kept in its record). A new entry that would take
the cache past that first has the entries no version uses removed (when the Preparer sweeps
its cache); if it still does not fit, it is removed and its version fails, saying so.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path

from arena.botcommand import BadManifest, Manifest, read_manifest
from arena.deadlines import within
from arena.processes import owned_dir, process_start, signal_group
from arena.runtimes import RECORD_SUFFIX, Preparation, Runtime, Runtimes, Step, write_preparation
from arena.submissions.archive import content_digest

from . import cgroups, sandbox, seccomp, workdir
from .launcher import GUARD_EXIT_S, SECCOMP_FD, group_layout

log = logging.getLogger(__name__)

Maker = Callable[[Path], Awaitable[Preparation]]  # makes a cache entry (its folder)

OUTPUT_TAIL_CHARS = 4000  # of each step's output, kept for the owner
FORK_CHECK_S = 0.25  # how often a quiet step's group is checked for a refused fork
PART = ".part-"  # a cache entry being made
DEFAULT_CACHE_MB = 10_240  # what the cache's entries may hold together


@dataclass(frozen=True)
class BuildLimits:
    """What one preparation may use (see docs/submit.md, "Runtimes")."""

    time_s: float = 300.0  # all its steps together, wall clock
    memory_mb: int = 2048  # each step's processes together (its control group)
    processes: int = 128  # each step's processes and threads together
    disk_mb: int = 1024  # its folder (a tmpfs when the platform is root) and any file it writes
    max_files: int = 50_000
    output_bytes: int = 2 << 20  # what one step may print
    cpus: float = 1.0  # its CPU quota (cores' time per second)
    # Its CPU quota while matches are being played (Preparer.playing); its time limit then
    # counts at this share of full speed (a step's limit of 300 s may take 600 s at 0.5).
    busy_cpus: float = 0.5


@dataclass(frozen=True)
class StepOutcome:
    ok: bool
    detail: str
    output: str
    seconds: float
    extra_s: float = 0.0  # the time it was given beyond its limit, for its time at a lower quota


class Preparer:
    """Prepares versions for the service's verification; one per service."""

    def __init__(
        self,
        cache: Path,
        runtimes: Runtimes | None = None,
        limits: BuildLimits = BuildLimits(),
        confined: bool = True,
        cache_mb: float = DEFAULT_CACHE_MB,
        records: Path | None = None,
        playing: Callable[[], bool] | None = None,
    ):
        self.cache = Path(cache)
        self.runtimes = runtimes or Runtimes()
        self.limits = limits
        self.confined = confined  # False: steps run unconfined (--no-sandbox, trusted bots)
        self.cache_mb = cache_mb
        # The bot store whose records say which entries are used: given, the cache is swept of
        # the others to make room (only a cache no other server shares).
        self.records = records
        self.playing = playing  # whether matches are being played now (None: never asked)
        self._locks: dict[str, asyncio.Lock] = {}

    async def prepare(self, bot_dir: Path) -> Preparation:
        """Install or build the version in `bot_dir` (cached by content), record what it made
        beside it and return that. A version that needs neither passes, with no record."""
        plan = await asyncio.to_thread(self._plan, bot_dir)
        if isinstance(plan, Preparation):
            if not plan.steps:  # nothing to install or build: nothing to record
                return plan
            prepared = plan
        else:
            kind, key, make = plan
            prepared = await self._cached(key, kind, make)
        await asyncio.to_thread(write_preparation, bot_dir, prepared)
        return prepared

    def _plan(self, bot_dir: Path) -> Preparation | tuple[str, str, Maker]:
        """What preparing `bot_dir` takes (blocking: reads and hashes its files): a finished
        Preparation, or (the cache's kind, its key, what makes the entry)."""
        bot_dir = Path(os.path.abspath(bot_dir))
        try:
            manifest = read_manifest(bot_dir, upload=True, runtimes=self.runtimes)
        except BadManifest as err:  # e.g. the organiser removed its runtime since
            return Preparation(False, (Step("check", "", False, 0.0, "", str(err)),))
        runtime = self.runtimes.get(manifest.runtime or "")
        if runtime is None or not manifest.needs_preparation(self.runtimes):
            return Preparation(True)
        if manifest.kind == "cpp":
            key = self._build_key(bot_dir, manifest)
            return "builds", key, lambda entry: self._build(bot_dir, manifest, entry)
        key = self._env_key(bot_dir, manifest, runtime)
        return "envs", key, lambda entry: self._install(bot_dir, manifest, runtime, entry)

    async def _cached(self, key: str, kind: str, make: Maker) -> Preparation:
        """The cache entry `kind/key`, made by `make(folder)` unless it is there; one maker a key
        at a time (two uploads of one requirement set install it once)."""
        entry = self.cache / kind / key
        lock = self._locks.setdefault(f"{kind}/{key}", asyncio.Lock())
        async with lock:
            found = await asyncio.to_thread(_read_entry, entry)
            if found is not None:
                steps = tuple(
                    Step(s.name, s.command, True, 0.0, s.output, "reused", cached=True)
                    for s in found.steps
                )
                # Its own folder, wherever the cache is now (it may have been moved).
                run_dir = entry if found.run_dir is not None else None
                pythonpath = (entry,) if found.pythonpath else ()
                return Preparation(True, steps, run_dir, pythonpath, (f"{kind}/{key}",))

            await asyncio.to_thread(entry.parent.mkdir, parents=True, exist_ok=True)
            prepared = await make(entry)
            if not prepared.ok:
                return prepared
            prepared = replace(prepared, uses=(f"{kind}/{key}",))
            full = await asyncio.to_thread(self._room_for, entry)
            if full:
                await asyncio.to_thread(shutil.rmtree, entry, True)
                return replace(
                    prepared,
                    ok=False,
                    steps=(*prepared.steps, Step("store", "", False, 0.0, "", full)),
                    run_dir=None,
                    pythonpath=(),
                    uses=(),
                )
            record = {**prepared.to_json(), "bytes": tree_bytes(entry)}
            await asyncio.to_thread(entry.with_name(f"{key}.json").write_text, json.dumps(record))
            return prepared

    def usage(self) -> int:
        """The bytes the cache's complete entries hold (as measured when each was made)."""
        total = 0
        for kind in ("envs", "builds"):
            folder = self.cache / kind
            for record in folder.glob("*.json") if folder.is_dir() else ():
                try:
                    total += int(json.loads(record.read_text()).get("bytes", 0))
                except (OSError, ValueError, TypeError, AttributeError):
                    continue
        return total

    def _room_for(self, entry: Path) -> str:
        """Whether the new entry `entry` fits in the cache's disk limit, making room by sweeping
        when the Preparer may: "" if it does, else why not (a sentence for its owner)."""
        size = tree_bytes(entry)
        limit = int(self.cache_mb * MB)
        if self.usage() + size > limit and self.records is not None:
            self.sweep(self.records)
        used = self.usage()
        if used + size <= limit:
            return ""
        return (
            f"what it made ({size / MB:.1f} MB) does not fit in the server's store of installed "
            f"environments and builds ({used / MB:.1f} MB of its {self.cache_mb:g} MB are used "
            "by other versions); make it smaller, or ask the organiser for room "
            "(arena serve --build-cache-mb)"
        )

    # ---------------------------------------------------------------- keys

    def _env_key(self, bot_dir: Path, manifest: Manifest, runtime: Runtime) -> str:
        h = hashlib.sha256(f"env\0{sys.version}\0{runtime.identity()}\0".encode())
        if manifest.requirements:
            h.update((bot_dir / manifest.requirements).read_bytes())
        wheels = bot_dir / manifest.wheels
        if wheels.is_dir():
            h.update(content_digest(wheels).encode())
        return h.hexdigest()[:32]

    def _build_key(self, bot_dir: Path, manifest: Manifest) -> str:
        h = hashlib.sha256(b"build\0")
        h.update(json.dumps([manifest.build, manifest.command]).encode())
        h.update(content_digest(bot_dir).encode())
        proto = sandbox.protocol_file()
        if proto is not None:
            h.update(proto.read_bytes())
        return h.hexdigest()[:32]

    # ---------------------------------------------------------------- steps

    async def _install(
        self, bot_dir: Path, manifest: Manifest, runtime: Runtime, entry: Path
    ) -> Preparation:
        target = "env"
        argv = [
            sys.executable, "-m", "pip", "install", "--no-index", "--no-cache-dir",
            "--disable-pip-version-check", "--no-warn-script-location", "--target", target,
        ]  # fmt: skip
        # The bot's files are copied into the build's folder: the paths pip prints are the
        # sandbox's (/home/bot/...), none of the server's.
        read_only = []
        if (bot_dir / manifest.wheels).is_dir():
            argv += ["--find-links", manifest.wheels]
        if runtime.wheelhouse is not None:
            argv += ["--find-links", str(runtime.wheelhouse)]
            read_only.append(runtime.wheelhouse)
        if manifest.requirements:
            argv += ["-r", manifest.requirements]
        argv += list(runtime.packages)
        shown = shlex.join(["pip", "install", "--no-index", *argv[argv.index("--target") :]])
        async with BuildBox(
            self.limits, self.confined, tuple(read_only), entry.name, playing=self.playing
        ) as box:
            await asyncio.to_thread(box.fill, bot_dir)
            outcome = await box.run(argv, self.limits.time_s)
            step = _step("install", shown, outcome)
            if not outcome.ok:
                return Preparation(False, (step,))
            await asyncio.to_thread(_keep, box.path / target, entry)
        return Preparation(True, (step,), None, (entry,))

    async def _build(self, bot_dir: Path, manifest: Manifest, entry: Path) -> Preparation:
        steps: list[Step] = []
        deadline = time.monotonic() + self.limits.time_s
        async with BuildBox(
            self.limits, self.confined, (), entry.name, playing=self.playing
        ) as box:
            await asyncio.to_thread(box.fill, bot_dir)
            for i, argv in enumerate(manifest.build, 1):
                name = "build" if len(manifest.build) == 1 else f"build {i}"
                outcome = await box.run(list(argv), deadline - time.monotonic())
                deadline += outcome.extra_s
                steps.append(_step(name, shlex.join(argv), outcome))
                if not outcome.ok:
                    return Preparation(False, tuple(steps))
            program = box.path / manifest.command[0]
            if not program.is_file() or not os.access(program, os.X_OK):
                steps.append(
                    Step(
                        "check",
                        "",
                        False,
                        0.0,
                        "",
                        f"the build left no program {manifest.command[0]!r} (the manifest's "
                        "command) that can run; check the build's output and its name",
                    )  # fmt: skip
                )
                return Preparation(False, tuple(steps))
            await asyncio.to_thread(_keep, box.path, entry)
        return Preparation(True, tuple(steps), entry)

    # ---------------------------------------------------------------- clean-up

    def sweep(self, records: Path, leftovers: bool = False) -> int:
        """Remove the cache entries that no recorded version under `records` (the bot store:
        NAME/N.runtime.json beside each NAME/N/) uses; how many were removed. `leftovers`:
        also the entries a stopped server was making (PART: only when none is being made, as
        a server starts). Blocking."""
        used: set[str] = set()
        for record in records.glob(f"*/*{RECORD_SUFFIX}"):
            version = record.with_name(record.name[: -len(RECORD_SUFFIX)])
            if not version.is_dir():
                continue
            try:
                used.update(json.loads(record.read_text()).get("uses", []))
            except (OSError, ValueError):
                continue
        removed = 0
        for kind in ("envs", "builds"):
            folder = self.cache / kind
            if not folder.is_dir():
                continue
            for entry in folder.iterdir():
                if leftovers and not self._locks and entry.name.startswith(PART):
                    shutil.rmtree(entry, ignore_errors=True)
                    removed += 1
                elif leftovers and not self._locks and entry.suffix == ".json":
                    if not entry.with_suffix("").is_dir():  # its entry is gone: not counted
                        entry.unlink(missing_ok=True)
                elif (
                    entry.is_dir()
                    and not entry.name.startswith(".")
                    and f"{kind}/{entry.name}" not in used
                ):
                    if self._locks.get(f"{kind}/{entry.name}", asyncio.Lock()).locked():
                        continue
                    shutil.rmtree(entry, ignore_errors=True)
                    entry.with_name(entry.name + ".json").unlink(missing_ok=True)
                    removed += 1
        return removed


MB = 1 << 20


def tree_bytes(folder: Path) -> int:
    """What the files under `folder` take on disk (links not followed), in bytes. Blocking."""
    total = 0
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                continue
    return total


def _read_entry(entry: Path) -> Preparation | None:
    """The preparation that made the cache entry `entry`, if it is there and complete."""
    try:
        found = Preparation.from_json(json.loads(entry.with_name(entry.name + ".json").read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return found if entry.is_dir() else None


def _step(name: str, command: str, outcome: StepOutcome) -> Step:
    return Step(
        name, command, outcome.ok, round(outcome.seconds, 2), outcome.output, outcome.detail
    )


def _keep(made: Path, entry: Path) -> None:
    """Copy what a step made into the cache entry `entry` (links kept as links, not followed),
    readable by every bot's user (the build ran as a user of its own, umask 077)."""
    part = entry.with_name(f"{PART}{entry.name}-{os.urandom(4).hex()}")
    shutil.copytree(made, part, symlinks=True)
    for dirpath, _, filenames in os.walk(part):
        if os.geteuid() == 0:
            os.chown(dirpath, os.getuid(), os.getgid())
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            if os.geteuid() == 0:
                os.chown(path, os.getuid(), os.getgid())
            executable = os.stat(path).st_mode & 0o100
            os.chmod(path, 0o755 if executable else 0o644)
    try:
        os.rename(part, entry)
    except OSError:
        if not entry.is_dir():
            raise
        # Another process sharing the cache (another server, a test worker) made it first: by
        # its key, the same thing.
        shutil.rmtree(part, ignore_errors=True)


BUILD_DIR_PREFIX = "arena-build-"


def _unmount_if_mounted(path: Path) -> None:
    if workdir.is_mounted(path):
        workdir.unmount(path)


class BuildBox:
    """One preparation's sandboxed folder (/home/bot inside): a tmpfs of its own when the
    platform is root, owned by a user picked for this preparation; removed on exit."""

    def __init__(
        self,
        limits: BuildLimits,
        confined: bool,
        read_only: tuple[Path, ...],
        key: str,
        parent: Path | None = None,
        playing: Callable[[], bool] | None = None,
    ):
        self.limits = limits
        self.playing = playing
        self.confined = confined
        self.read_only = read_only
        self.key = key
        self.parent = parent or Path(os.environ.get("TMPDIR", "/tmp"))  # where its folder is made
        self.path = Path()
        self.uid: int | None = None
        self.mounted = False

    async def __aenter__(self) -> BuildBox:
        await asyncio.to_thread(self._open)
        return self

    async def __aexit__(self, *exc) -> None:
        await asyncio.to_thread(self._close)

    def _open(self) -> None:
        # Named after this process: a platform killed mid-build (a Ray node's worker) leaves
        # its folder, mounted; the next build on the host unmounts and removes it.
        self.path = owned_dir(self.parent, BUILD_DIR_PREFIX, _unmount_if_mounted)
        if self.confined and os.geteuid() == 0:
            self.uid = sandbox.pick_uid()
            try:
                workdir.mount_tmpfs(self.path, self.limits.disk_mb, self.uid, self.limits.max_files)
                self.mounted = True
            except OSError as err:
                log.warning("a build's folder is a plain one (%s): its size is not capped", err)
                os.chown(self.path, self.uid, self.uid)

    def _close(self) -> None:
        if self.mounted:
            workdir.unmount(self.path)
            self.mounted = False
        shutil.rmtree(self.path, ignore_errors=True)

    def fill(self, source: Path) -> None:
        """Copy the bot's files into the folder, owned by the build's user."""
        shutil.copytree(source, self.path, dirs_exist_ok=True, symlinks=True)
        if self.uid is not None:
            for dirpath, dirnames, filenames in os.walk(self.path):
                for name in [*dirnames, *filenames]:
                    os.lchown(os.path.join(dirpath, name), self.uid, self.uid)

    async def run(self, argv: list[str], time_s: float) -> StepOutcome:
        """Run one step in the folder, in the sandbox, within `time_s` seconds."""
        began = time.monotonic()
        if time_s <= 0:
            ran_out = f"the build ran out of its {self.limits.time_s:.0f} s (its time limit)"
            return StepOutcome(False, ran_out, "", 0.0)
        lim = self.limits
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.path),
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "PIP_NO_CACHE_DIR": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        guard_options: list[str] = []
        proto = sandbox.protocol_file()
        cwd = self.path
        if self.confined:
            sandbox.require()
            box = sandbox.Sandbox(
                self.path,
                None,
                read_only=(*sandbox.runtime_paths(), *self.read_only),
                proto=proto,
                uid=self.uid,
                tmp_mb=min(lim.disk_mb, 256),
                seccomp_fd=SECCOMP_FD if seccomp.native_arch() is not None else None,
            )
            if box.seccomp_fd is not None:
                guard_options += ["--seccomp-fd", str(box.seccomp_fd)]
            if self.mounted:
                guard_options += ["--workdir", str(self.path)]
            command = box.argv(argv, self.path)
            env["HOME"] = sandbox.WORKDIR_IN_SANDBOX
            if proto is not None:
                env["ARENA_PROTO"] = sandbox.PROTO_IN_SANDBOX
        else:
            command = argv
            if proto is not None:
                env["ARENA_PROTO"] = str(proto)
        group = None
        where = group_layout()
        if where is not None:
            limits = cgroups.GroupLimits(lim.memory_mb, lim.processes, lim.cpus)
            # Made with the weight of a bot nobody waits for: the matches being played come
            # first (and its quota caps it however idle the machine is).
            key = cgroups.key_for(f"build-{self.key[:12]}")
            group = cgroups.BotGroup.create(where, os.getpid(), key, limits)
            group.set_deciding(False)  # SCHED_IDLE: only CPU nothing else wants (cgroups)
            for d in group.dirs:
                guard_options += ["--cgroup", str(d)]
        throttled = False  # at its busy quota (matches are being played)
        extra_s = 0.0  # time given back for its time at the busy quota
        since = time.monotonic()

        def follow_matches() -> None:
            nonlocal throttled, extra_s, since
            now = time.monotonic()
            if throttled and lim.cpus > 0:
                extra_s += (now - since) * (1 - min(1.0, lim.busy_cpus / lim.cpus))
            since = now
            busy = self.playing is not None and self.playing()
            if group is not None and busy != throttled:
                _set_quota(group, lim.busy_cpus if busy else lim.cpus)
                throttled = busy

        follow_matches()
        processes = lim.processes if self.uid is not None else 0
        # RLIMIT_AS: four times the memory (the only cap where there is no control group; a
        # compiler maps more than it touches).
        guard = [
            *_pinned(), sys.executable, "-m", "arena.referee.rlimits",
            str(4 * lim.memory_mb), "0", "1024", str(lim.disk_mb), str(processes), str(os.getpid()),
            *guard_options, "--", *command,
        ]  # fmt: skip
        proc = await asyncio.create_subprocess_exec(
            *guard,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        started = process_start(proc.pid)  # the group's number may be reused once it is free
        tail = bytearray()
        printed = 0
        forks = 1  # 0 once the process limit is said to have stopped the step
        failure = ""
        try:
            assert proc.stdout is not None
            end = began + time_s
            while True:
                follow_matches()
                left = end + extra_s - time.monotonic()
                if left <= 0:
                    slower = (
                        "; counted at full speed: its time while matches were played, at a "
                        "lower quota, counts at that share"
                        if extra_s
                        else ""
                    )
                    failure = (
                        f"it did not finish within the build's {lim.time_s:.0f} s (its time "
                        f"limit{slower}); it was stopped"
                    )
                    break
                try:
                    chunk = await within(proc.stdout.read(65536), min(left, FORK_CHECK_S))
                except TimeoutError:
                    # A fork bomb meets the process limit and goes on trying: stopped at once,
                    # rather than when its time is up.
                    if group is not None and _pids_hits(group):
                        failure = (
                            f"it tried to run more than {lim.processes} processes at once (its "
                            "limit); it was stopped"
                        )
                        forks = 0  # said
                        break
                    continue
                if not chunk:
                    break
                printed += len(chunk)
                tail += chunk
                del tail[: -OUTPUT_TAIL_CHARS * 2]
                if printed > lim.output_bytes:
                    failure = (
                        f"it printed more than {lim.output_bytes // 1024} KB (the build's output "
                        "limit); it was stopped"
                    )
                    break
        finally:
            if proc.returncode is None:  # the guard ends the sandbox and all in it
                signal_group(proc.pid, signal.SIGTERM, started)
            # The output is read to its end (and dropped): asyncio's wait() returns once the
            # pipe is closed too, and a reader stopped at the output limit would hold it open.
            try:
                code = await within(_drain_and_wait(proc), GUARD_EXIT_S)
            except TimeoutError:
                signal_group(proc.pid, signal.SIGKILL, started)
                code = await _drain_and_wait(proc)
            oom = group.oom_kills() if group is not None else 0
            forks = _pids_hits(group) if group is not None and forks else 0
            if group is not None:
                await asyncio.to_thread(_end_group, group)
        output = tail.decode("utf-8", "replace")[-OUTPUT_TAIL_CHARS:]
        if oom:
            failure = f"it was killed for using more than {lim.memory_mb} MB of memory (its limit)"
        elif not failure and code != 0:
            failure = _exit_text(code)
            if forks:
                failure += (
                    f"; it tried to run more than {lim.processes} processes at once (its limit)"
                )
            full = ("No space left on device", "File too large")
            if any(f in output for f in full) or code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
                failure += f"; a build's folder holds at most {lim.disk_mb} MB"
        elif failure and forks:
            failure += f"; it tried to run more than {lim.processes} processes at once (its limit)"
        return StepOutcome(not failure, failure, output, time.monotonic() - began, extra_s)


async def _drain_and_wait(proc: asyncio.subprocess.Process) -> int:
    """Read what is left of a step's output, dropping it, then its exit status."""
    if proc.stdout is not None:
        while await proc.stdout.read(65536):
            pass
    return await proc.wait()


def _exit_text(code: int) -> str:
    if code < 0:
        return f"it was killed by {signal.Signals(-code).name}"
    if code > 128 and code - 128 in {int(s) for s in signal.Signals}:
        return f"it was killed by {signal.Signals(code - 128).name} (exit status {code})"
    return f"it exited with code {code}"


def _pids_hits(group: cgroups.BotGroup) -> int:
    """How often the group's process limit refused a fork (its pids.events)."""
    for d in group.dirs:
        try:
            for line in (d / "pids.events").read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == "max":
                    return int(value)
        except (OSError, ValueError):
            continue
    return 0


def _set_quota(group: cgroups.BotGroup, cpus: float) -> None:
    """Set the build group's CPU quota (cores' time per second); kept if it cannot be."""
    try:
        group.set_quota(cpus)
    except OSError as err:
        log.warning("cannot set a build's CPU quota to %s: %s", cpus, err)


def _pinned() -> list[str]:
    """What runs a build on one core of its own, the machine's last (taskset, util-linux), on a
    machine of several: its processes, however many, then never take a core from a deciding
    bot or the referee all at once (measured: scripts/bench.py runtimes, (d)). Not a boundary
    (a build may widen its affinity): its quota is what caps it."""
    cpus = sorted(os.sched_getaffinity(0))
    taskset = shutil.which("taskset")
    if len(cpus) < 2 or taskset is None:
        return []
    return [taskset, "-c", str(cpus[-1])]


def _end_group(group: cgroups.BotGroup) -> None:
    group.kill()
    group.remove()
