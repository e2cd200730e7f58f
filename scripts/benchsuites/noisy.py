"""Noisy neighbours: what hostile bots beside an honest one cost its decisions, and what a
launch's control group costs (issue 29).

(a) Decision round trip of honest bots (benchsuites/busy_bot.py: 5 ms of its own CPU time per
decision, so a smaller CPU share shows as a longer decision), two of them playing balloon
against each other match after match, as the referee measures it (MoveRecord.elapsed_ms),
in rounds that alternate quiet and noisy windows (the order flips each round, so that the
load of this shared machine lands on both alike). Noisy: hostile neighbours
(tests/bots/hostile_bot.py, in their sandboxes and control groups) run: a bot whose 8 children
spin, and a seat relaunched again and again through the other attacks in turn: memfds of
3 x 64 MB, 300 MB of SysV shared memory kept after detaching, 10 children of 100 MB each, a disk
filler, each in a match against a partner. Quiet: the spinners are stopped (SIGSTOP to every
process of their group) and no attacker is launched. Goal: p99 noisy at most 1.5 x quiet, and
no fault for the honest seats.
(a') For reference, the same noisy neighbours with no control groups (the rlimits alone, as
before issue 29), in one noisy window after the rounds: its median and p99.
(b) The control group and work directory of a launch: making them (the tmpfs work directory
mounted, the group's directories and limits written) and releasing them after the bot (group
killed and removed, tmpfs unmounted), the platform's own time for each, median over the
hostile launches. Goal: under 20 ms.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.games import make_game
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, BotProcess, ResourceLimits, group_layout
from arena.referee.match import Limits

from .common import HERE, ROOT
from .referee import raw_bot

HOSTILE = ROOT / "tests" / "bots" / "hostile_bot.py"
GAME = make_game("balloon", 2)
HONEST_LIMITS = Limits(move_ms=2_000, time_bank_ms=5_000, max_strikes=3, connect_ms=30_000)
NEIGHBOUR_LIMITS = Limits(move_ms=500, time_bank_ms=500, max_strikes=1000, connect_ms=30_000)
BOTS = ResourceLimits(memory_mb=256, disk_mb=64)
WORK_MS = 5
ATTACKS = (("memfd", "3"), ("shm", "300"), ("children", "100"), ("disk_fill", ""))


def busy_bot() -> BotCommand:
    return BotCommand((sys.executable, str(HERE / "busy_bot.py"), str(WORK_MS)), None)


def hostile(mode: str, arg: str) -> BotCommand:
    return BotCommand((sys.executable, str(HOSTILE), mode, *([arg] if arg else [])), None)


class Phase:
    """The honest bots' decisions and faults over the windows of one condition."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self.faults: list[str] = []
        self.matches = 0

    async def play(self, host: RefereeHost, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            seats = ["honest-a", "honest-b"]
            result = await host.run_match(GAME, 1000 + self.matches, seats, HONEST_LIMITS)
            self.matches += 1
            self.ms += [m.elapsed_ms for m in result.moves if not m.default]
            self.faults += [f"{f.kind}: {f.detail}" for f in result.faults]


class Neighbours:
    """The hostile neighbours: the spinners' bot, kept, and one seat relaunched through the
    attacks while `noisy` is set; the launches' costs."""

    def __init__(self, host: RefereeHost):
        self.host = host
        self.setup_s: list[float] = []
        self.release_s: list[float] = []
        self.launches = 0
        self.noisy = asyncio.Event()
        self.done = False
        self.spinners: BotProcess | None = None

    async def start(self) -> list[asyncio.Future]:
        for name in ("spinners-partner", "attacker-partner"):
            await self.host.launch(name, raw_bot(1))
        self.spinners = await self.host.launch("spinners", hostile("spinners", "8"))
        await self.host.run_match(GAME, 1, ["spinners", "spinners-partner"], NEIGHBOUR_LIMITS)
        return [asyncio.ensure_future(self.cycle())]

    def pause_spinners(self, paused: bool) -> None:
        assert self.spinners is not None
        for pid in self.spinners.sandbox_pids():
            try:
                os.kill(pid, signal.SIGSTOP if paused else signal.SIGCONT)
            except ProcessLookupError:
                pass

    async def cycle(self) -> None:
        while not self.done:
            for mode, arg in ATTACKS:
                await self.noisy.wait()
                if self.done:
                    return
                proc = await self.host.launch("attacker", hostile(mode, arg))
                self.setup_s.append(proc.group_setup_s)
                self.launches += 1
                seats = ["attacker", "attacker-partner"]
                await self.host.run_match(GAME, self.launches, seats, NEIGHBOUR_LIMITS)
                await self.host.bots.pop("attacker").stop()
                self.release_s.append(proc.group_release_s)

    async def end(self, tasks) -> None:
        self.done = True
        self.pause_spinners(False)
        self.noisy.set()
        await asyncio.gather(*tasks)


async def honest_host(tmp: Path, limits: ResourceLimits) -> RefereeHost:
    host = RefereeHost(tmp, resource_limits=limits)
    await host.__aenter__()
    for name in ("honest-a", "honest-b"):
        await host.launch(name, busy_bot())
    await Phase().play(host, 1.0)  # warm-up, not counted
    return host


async def measure(seconds: float, rounds: int = 4) -> dict:
    window = seconds / (2 * rounds)
    quiet, noisy, bare = Phase(), Phase(), Phase()
    with tempfile.TemporaryDirectory() as tmp:
        host = await honest_host(Path(tmp) / "groups", BOTS)
        try:
            neighbours = Neighbours(host)
            tasks = await neighbours.start()
            try:
                for i in range(rounds):
                    for on in (False, True) if i % 2 == 0 else (True, False):
                        neighbours.pause_spinners(not on)
                        if on:
                            neighbours.noisy.set()
                        else:
                            neighbours.noisy.clear()
                        await (noisy if on else quiet).play(host, window)
            finally:
                await neighbours.end(tasks)
        finally:
            await host.close()
        # The reference: the same neighbours without control groups.
        plain = dataclasses.replace(BOTS, control_group=False)
        host = await honest_host(Path(tmp) / "plain", plain)
        try:
            reference = Neighbours(host)
            tasks = await reference.start()
            reference.noisy.set()
            try:
                await bare.play(host, window * rounds)
            finally:
                await reference.end(tasks)
        finally:
            await host.close()
    return {"quiet": quiet, "noisy": noisy, "bare": bare, "neighbours": neighbours}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(seconds: float, log) -> dict:
    if group_layout() is None:
        raise SystemExit("noisy: no control groups here (see the warning above)")
    found = asyncio.run(measure(max(seconds, 8.0)))
    neighbours = found["neighbours"]
    figures = {}
    labels = {
        "quiet": "quiet neighbours",
        "noisy": "hostile neighbours",
        "bare": "hostile, no control groups",
    }
    for key, label in labels.items():
        phase = found[key]
        figures[key] = f = {
            "decisions": len(phase.ms),
            "matches": phase.matches,
            "median_ms": round(statistics.median(phase.ms), 2),
            "p99_ms": round(pct(phase.ms, 0.99), 2),
            "honest_faults": len(phase.faults),
        }
        log(
            f"(a) honest decisions, {label:27} median {f['median_ms']:7.2f} ms, p99 "
            f"{f['p99_ms']:7.2f} ms ({f['decisions']} decisions, {f['matches']} matches, "
            f"{f['honest_faults']} honest faults)"
        )
    setup_ms = statistics.median(neighbours.setup_s) * 1e3
    release_ms = statistics.median(neighbours.release_s) * 1e3 if neighbours.release_s else 0.0
    log(
        f"(b) per launch: control group + work directory made in {setup_ms:.2f} ms, released "
        f"in {release_ms:.2f} ms (medians of {neighbours.launches} hostile launches)"
    )
    ratio = figures["noisy"]["p99_ms"] / figures["quiet"]["p99_ms"]
    faults = figures["noisy"]["honest_faults"] + figures["quiet"]["honest_faults"]
    results = {
        **figures,
        "noisy_vs_quiet_median": round(
            figures["noisy"]["median_ms"] / figures["quiet"]["median_ms"], 3
        ),
        "hostile_launches": neighbours.launches,
        "group_setup_ms": round(setup_ms, 2),
        "group_release_ms": round(release_ms, 2),
        "honest_fault_details": (found["quiet"].faults + found["noisy"].faults)[:5],
    }
    goals = {
        "honest p99: noisy / quiet": {
            "value": round(ratio, 3),
            "goal": "<= 1.5",
            "met": ratio <= 1.5,
        },
        "honest faults": {"value": faults, "goal": "0", "met": faults == 0},
        "control group per launch (ms)": {
            "value": round(setup_ms + release_ms, 2),
            "goal": "< 20",
            "met": setup_ms + release_ms < 20,
        },
    }
    return {"results": results, "goals": goals}
