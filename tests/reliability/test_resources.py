"""One bot cannot take what the others need (issue 29): each attack a real hostile bot
(tests/bots/hostile_bot.py) in a real sandbox with its control group, beside an honest seat that
must finish with no fault; the attack is contained, and afterwards nothing of the bot is left:
no process, no control group, no work files (only its log).

Needs the sandbox and control groups here (root on a cgroup v1 or delegated v2 host); the
control group's unit tests are tests/referee/test_cgroups.py, the noisy-neighbour figures
`scripts/bench.py noisy`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import os
import time
from pathlib import Path

import pytest

from arena.games import make_game
from arena.referee import sandbox, seccomp
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotProcess, ResourceLimits, bot_environment, group_layout
from arena.referee.match import Limits
from arena.results import CRASH, DISCONNECT, TIMEOUT
from tests.timing import scaled

from .conftest import FAST, exited, good, hostile, kinds, reported

pytestmark = [
    pytest.mark.skipif(sandbox.unavailable_reason() is not None, reason="no sandbox here"),
    pytest.mark.skipif(group_layout() is None, reason="no control groups here"),
]

BALLOON2 = make_game("balloon", 2)
# Tight enough that each attack meets them in a second, roomy for an honest Python bot.
LIMITS = ResourceLimits(memory_mb=160, disk_mb=48, max_files=2_000, max_processes=32)


class Traces:
    """What a launched bot had on the host while it ran, to check that none of it is left."""

    def __init__(self, proc: BotProcess):
        assert proc.group is not None, "the bot got no control group"
        self.groups = proc.group.dirs
        self.workdir = proc.workdir
        self.log = proc.log_path
        self.pids: set[int] = set()

    def look(self, proc: BotProcess) -> None:
        self.pids.update(proc.sandbox_pids())
        if proc.group is not None:
            self.pids.update(proc.group.pids())

    def left(self) -> list[str]:
        found = [f"group {d}" for d in self.groups if d.exists()]
        found += [f"process {p}" for p in self.pids if _alive(p)]
        if self.workdir.exists():
            found.append(f"work directory {self.workdir}: {os.listdir(self.workdir)[:5]}")
        return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


async def beside_an_honest_seat(
    tmp_path: Path,
    mode: str,
    arg: str = "",
    report: bool = True,
    until_exit: bool = False,
    limits: Limits = FAST,
):
    """Play a match of the hostile bot against an honest one; (result, report, traces, exit
    info of the hostile bot). until_exit: wait for the hostile bot to end by itself first (a
    bot killed for memory: on a busy machine the kill may come after its match)."""
    async with RefereeHost(tmp_path, resource_limits=LIMITS) as host:
        proc = await host.launch("hostile_bot", hostile(mode, arg))
        await host.launch("honest", good())
        traces = Traces(proc)
        match = asyncio.ensure_future(
            host.run_match(BALLOON2, 1, ["hostile_bot", "honest"], limits)
        )
        found = await reported(tmp_path, "hostile_bot") if report else None
        traces.look(proc)
        result = await match
        traces.look(proc)
        if until_exit:
            await exited(proc, 60)
        exit_info = proc.exit_info()
    return result, found, traces, exit_info


def assert_contained(result, traces: Traces) -> None:
    assert kinds(result, 1) == [], f"the honest seat was charged: {result.faults}"
    assert traces.left() == [], traces.left()
    assert traces.log.exists(), "the bot's log must stay"


def assert_killed_for_memory(result, exit_info: str | None) -> None:
    """The bot ended killed by the kernel for its group's memory, and said so; in its match a
    timeout (the attack outlasting its move) and then, if the match was still on, a crash
    whose detail says memory."""
    assert exit_info is not None and "memory" in exit_info and "160 MB" in exit_info, exit_info
    assert set(kinds(result, 0)) <= {TIMEOUT, CRASH} and kinds(result, 0), result.faults
    for fault in result.faults:
        if fault.kind == CRASH:
            assert "memory" in fault.detail, fault


def test_memfds_past_the_limit_kill_the_bot_for_memory(tmp_path):
    # A move long enough for the attack: the kernel kills the bot while it is asked, and the
    # seat's fault is the crash, saying why.
    patient = dataclasses.replace(FAST, move_ms=20_000)
    result, _, traces, exit_info = asyncio.run(
        beside_an_honest_seat(tmp_path, "memfd", "3", report=False, limits=patient)
    )
    assert kinds(result, 0) == [CRASH], result.faults
    assert "killed for using more than its 160 MB of memory" in result.faults[0].detail
    assert_killed_for_memory(result, exit_info)
    assert_contained(result, traces)


def test_sysv_shared_memory_kept_after_detaching_is_charged_to_the_bot(tmp_path):
    # 300 MB touched in a segment nobody maps: over 160 MB, the bot is killed for memory.
    result, _, traces, exit_info = asyncio.run(
        beside_an_honest_seat(tmp_path, "shm", "300", report=False, until_exit=True)
    )
    assert_killed_for_memory(result, exit_info)
    assert_contained(result, traces)


def test_many_children_allocating_stay_within_the_bots_memory(tmp_path):
    result, found, traces, _ = asyncio.run(
        beside_an_honest_seat(tmp_path, "children", "100", report=False)
    )
    # 10 x 100 MB cannot fit in 160 MB: the kernel kills in the bot's group (the bot itself,
    # or children), never outside it.
    assert set(kinds(result, 0)) <= {CRASH, DISCONNECT, TIMEOUT}, result.faults
    assert_contained(result, traces)


def test_spinning_children_are_contained(tmp_path):
    result, found, traces, _ = asyncio.run(beside_an_honest_seat(tmp_path, "spinners", "8"))
    assert found == {"spinners": 8}
    # Its spinners share its own CPU quota with it: it may be too slow itself, not the honest
    # seat (the bench measures the honest seat's times).
    assert set(kinds(result, 0)) <= {TIMEOUT}, result.faults
    assert_contained(result, traces)


def test_a_disk_filler_meets_its_work_directorys_size(tmp_path):
    result, found, traces, _ = asyncio.run(beside_an_honest_seat(tmp_path, "disk_fill"))
    assert found["error"] == os.strerror(errno.ENOSPC), found
    assert found["written_mb"] <= LIMITS.disk_mb
    assert kinds(result, 0) == [], result.faults
    assert_contained(result, traces)


def test_the_sandbox_denies_each_filtered_system_call(tmp_path):
    result, found, traces, _ = asyncio.run(beside_an_honest_seat(tmp_path, "syscalls"))
    assert found["seccomp"] == "2", found  # a filter is in force
    calls = found["calls"]
    eperm = os.strerror(errno.EPERM)
    numbers = seccomp.SYSCALLS[seccomp.native_arch()]
    expected = {name: eperm for name in seccomp.DENIED if name in numbers}
    expected.update(unshare=eperm, clone_newuser=eperm, clone3=os.strerror(errno.ENOSYS))
    assert calls == expected
    assert kinds(result, 0) == [], result.faults
    assert_contained(result, traces)


async def loop_stall_during(coro) -> tuple[object, float]:
    """Run coro while a ticker measures the longest the event loop went without running it."""
    worst = 0.0
    done = asyncio.Event()

    async def ticker():
        nonlocal worst
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            worst = max(worst, now - last - 0.005)
            last = now

    tick = asyncio.ensure_future(ticker())
    try:
        return await coro, worst
    finally:
        done.set()
        await tick


def test_a_file_count_bomb_is_capped_and_its_relaunch_does_not_stall_the_loop(tmp_path):
    async def main():
        async with RefereeHost(tmp_path, resource_limits=LIMITS) as host:
            sock = await host.server.open_bot_socket("bomber")
            workdir = tmp_path / "bots" / "bomber"

            def launch():
                return BotProcess(
                    "bomber",
                    hostile("file_bomb", "200000"),
                    workdir,
                    tmp_path / "logs" / "bomber.log",
                    bot_environment("no-token", workdir),
                    sock,
                    LIMITS,
                )

            first = launch()
            try:
                await first.start()
                traces = Traces(first)
                found = await reported(tmp_path, "bomber")
                await exited(first)
            finally:
                await first.stop()
            left = traces.left()
            second = launch()
            try:
                _, stall = await loop_stall_during(second.start())
            finally:
                await second.stop()
            return found, left, stall

    found, left, stall = asyncio.run(main())
    assert found["error"] == os.strerror(errno.ENOSPC), found
    assert found["files"] < LIMITS.max_files
    assert left == []
    # Starting again walks no file of the first launch (it used to, on the event loop).
    assert stall < 0.25, f"the event loop stalled {stall:.3f} s at the relaunch"


def test_a_launch_that_fails_after_its_work_directory_was_made_leaves_nothing(
    tmp_path, monkeypatch
):
    from arena.referee import cgroups

    def refuse(*args, **kwargs):
        raise cgroups.CgroupError("refused by the test")

    monkeypatch.setattr(cgroups.BotGroup, "create", refuse)
    workdir = tmp_path / "bots" / "x"
    sock = tmp_path / "sock"
    sock.touch()
    proc = BotProcess(
        "x", good(), workdir, tmp_path / "x.log", bot_environment("t", workdir), sock, LIMITS
    )
    with pytest.raises(cgroups.CgroupError):
        asyncio.run(proc.start())
    assert not os.path.ismount(workdir) and not workdir.exists()


def cpu_of(proc: BotProcess) -> tuple[str, str]:
    """The bot group's CPU weight ("idle" while the group is SCHED_IDLE) and quota as the
    kernel holds them."""
    assert proc.group is not None
    d = proc.group.dirs[0] if proc.group.version == 2 else proc.group.dirs[2]
    if proc.group.version == 2:
        files = (d / "cpu.weight", d / "cpu.max")
    else:
        files = (d / "cpu.shares", d / "cpu.cfs_quota_us")
    idle = d / "cpu.idle"
    if idle.exists() and idle.read_text().strip() == "1":
        return "idle", files[1].read_text().strip()
    return files[0].read_text().strip(), files[1].read_text().strip()


async def cpu_becomes(proc: BotProcess, wanted: tuple[str, str], what: str) -> None:
    deadline = time.monotonic() + scaled(15)
    while (found := cpu_of(proc)) != wanted:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: the group's CPU is {found}, not {wanted}")
        await asyncio.sleep(0.01)  # polling the group's files under a deadline


def test_a_bots_cpu_follows_what_the_platform_waits_for(tmp_path, monkeypatch):
    # Start-up: the low weight, for launcher.START_UP_S; then, nobody waiting for it, its group
    # is idle (SCHED_IDLE; the low weight on a kernel without cpu.idle); a match waiting for it
    # to connect, and each of its decisions, give it a deciding bot's weight; after its match,
    # idle again. The quota, its own, never changes.
    from arena.referee import cgroups, launcher

    monkeypatch.setattr(launcher, "START_UP_S", 0.3)
    where = group_layout()
    assert isinstance(where, cgroups.Layout)
    version = where.version
    deciding_weight, idle_weight = (w.decode() for w in cgroups.WEIGHTS[version])
    full = "10000" if version == 1 else "10000 10000"
    cpu_base = where.bases[0] if version == 2 else where.bases[2]
    off_turn = "idle" if (cpu_base / cgroups.IDLE_FILE).exists() else idle_weight

    async def run():
        async with RefereeHost(tmp_path, resource_limits=LIMITS) as host:
            late = await host.launch("late", hostile("late", "2"))
            await host.launch("honest", good())
            assert cpu_of(late) == (idle_weight, full)
            await cpu_becomes(late, (off_turn, full), "after its start-up")
            match = asyncio.ensure_future(host.run_match(BALLOON2, 1, ["late", "honest"], FAST))
            await cpu_becomes(late, (deciding_weight, full), "a match waits for it")
            result = await match
            assert not result.faults, result.faults
            assert cpu_of(late) == (off_turn, full)

    asyncio.run(run())
