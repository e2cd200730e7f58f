"""Noisy neighbours: what hostile bots beside an honest one cost its decisions, and what a
launch's control group costs (issue 29).

(a) Decision round trip of honest bots (benchsuites/busy_bot.py: 5 ms of its own CPU time per
decision, so a smaller CPU share shows as a longer decision), two of them playing balloon
against each other match after match, as the referee measures it (MoveRecord.elapsed_ms).
Each attack of tests/bots/hostile_bot.py has windows of its own, each next to a quiet window
(quiet first or last in turns, the attacks in turn, so that the drifting load of this shared
machine lands on both alike): spinners (a bot whose 8 children spin, kept, stopped with
SIGSTOP outside its windows); a seat relaunched again and again, each launch in a match against
a partner, that at its first request fills memfds of 3 x 64 MB, keeps 300 MB of SysV shared
memory after detaching, starts 10 children of 100 MB each, or fills its disk; a file-count
bomb (files until its work directory is full, then exit), relaunched; a descriptor hog (8
processes x 200 plain connections to its socket, reopened as the referee closes them) and a
Hello-slot hog (1,000 streams that never say Hello), each launched at its window's start and
stopped at its end. A window lasts until the attack in it has ended (its bot stopped, its
group and work directory released), so that no quiet window holds any of it. Goal: p99 over all
hostile windows at most 1.5 x the quiet windows', and no fault for the honest seats; each
attack's median and p99 are shown too.
(a') For reference, the spinners and the relaunched memory and disk attacks with no control
groups (the rlimits alone, as before issue 29), in one window after the others: median, p99.
(b) The control group of a launch: making it (the group's directories and limits written) and
removing it after the bot (its processes killed, its directories removed), the platform's own
time for each, median over the relaunched attackers' launches. Goal: under 20 ms. Shown beside
it: mounting and unmounting the bot's tmpfs work directory (item 2 of the issue, not the
group), whose unmount frees what the attacker wrote (64 MB for the disk filler, 10,000 inodes
for the file-count bomb), by attack.
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
from functools import partial
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
# Each attack: (hostile_bot.py mode, its argument, how it runs in its window): "spin" the kept
# spinners, let run; "match" relaunched, each launch in a match; "exit" relaunched, each launch
# ending by itself; "hold" launched at the window's start and stopped at its end.
ATTACKS = {
    "spinners": ("spinners", "8", "spin"),
    "memfd": ("memfd", "3", "match"),
    "shm": ("shm", "300", "match"),
    "children": ("children", "100", "match"),
    "disk_fill": ("disk_fill", "", "match"),
    "file_bomb": ("file_bomb", "200000", "exit"),
    "fd_hog": ("fd_hog", "8,200", "hold"),
    "hello_hog": ("hello_hog", "1000", "hold"),
}
# The reference without control groups: the attacks the groups are for (CPU, memory, disk).
BARE_CYCLE = ("memfd", "shm", "children", "disk_fill")


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

    async def play(self, host: RefereeHost, seconds: float, until: asyncio.Future | None = None):
        """Play for `seconds`, and on until `until` (an attack ending) is done."""
        end = time.monotonic() + seconds
        while time.monotonic() < end or (until is not None and not until.done()):
            seats = ["honest-a", "honest-b"]
            result = await host.run_match(GAME, 1000 + self.matches, seats, HONEST_LIMITS)
            self.matches += 1
            self.ms += [m.elapsed_ms for m in result.moves if not m.default]
            self.faults += [f"{f.kind}: {f.detail}" for f in result.faults]


class Neighbours:
    """The hostile neighbours: the spinners' bot, kept (stopped but in its windows), and the
    other attacks, each run in its own windows; the relaunched attackers' launch costs."""

    def __init__(self, host: RefereeHost):
        self.host = host
        # The platform's time per launch (seconds): "group_setup", "group_release",
        # "workdir_setup", "workdir_release"; and the work directory's release by attack.
        self.costs: dict[str, list[float]] = {}
        self.workdir_release_by_mode: dict[str, list[float]] = {}
        self.launches = 0
        self.spinners: BotProcess | None = None

    async def start(self) -> None:
        await self.host.launch("attacker-partner", raw_bot(1))
        self.spinners = await self.host.launch("spinners", hostile("spinners", "8"))
        await self.host.run_match(GAME, 1, ["spinners", "attacker-partner"], NEIGHBOUR_LIMITS)
        self.pause_spinners(True)

    def pause_spinners(self, paused: bool) -> None:
        assert self.spinners is not None
        for pid in self.spinners.sandbox_pids():
            try:
                os.kill(pid, signal.SIGSTOP if paused else signal.SIGCONT)
            except ProcessLookupError:
                pass

    async def attack(self, name: str, over: asyncio.Event) -> None:
        """Run the attack `name` until `over` is set; return once all of it has ended."""
        mode, arg, how = ATTACKS[name]
        if how == "spin":
            self.pause_spinners(False)
            await over.wait()
            self.pause_spinners(True)
            return
        if how == "hold":
            await self.host.launch("attacker", hostile(mode, arg))
            await over.wait()
            await self.host.bots.pop("attacker").stop()
            return
        while not over.is_set():
            await self.relaunch(mode, arg, how)

    async def relaunch(self, mode: str, arg: str, how: str) -> None:
        proc = await self.host.launch("attacker", hostile(mode, arg))
        self.launches += 1
        if how == "exit":
            await proc.wait()
        else:
            seats = ["attacker", "attacker-partner"]
            await self.host.run_match(GAME, self.launches, seats, NEIGHBOUR_LIMITS)
        await self.host.bots.pop("attacker").stop()
        if proc.limits.control_group:
            for cost in ("group_setup", "group_release", "workdir_setup", "workdir_release"):
                self.costs.setdefault(cost, []).append(getattr(proc, f"{cost}_s"))
            by_mode = self.workdir_release_by_mode.setdefault(mode, [])
            by_mode.append(proc.workdir_release_s)

    async def bare(self, over: asyncio.Event) -> None:
        """The reference's attacks: spinners running, and the memory and disk ones in turn."""
        self.pause_spinners(False)
        while not over.is_set():
            for name in BARE_CYCLE:
                mode, arg, how = ATTACKS[name]
                await self.relaunch(mode, arg, how)
        self.pause_spinners(True)


async def hostile_window(phase: Phase, host: RefereeHost, seconds: float, attack) -> None:
    """Play beside `attack(over)` for `seconds` and until the attack has ended."""
    over = asyncio.Event()
    task = asyncio.ensure_future(attack(over))
    try:
        await phase.play(host, seconds)
    finally:
        over.set()
    await phase.play(host, 0, until=task)
    await task


async def honest_host(tmp: Path, limits: ResourceLimits) -> RefereeHost:
    host = RefereeHost(tmp, resource_limits=limits)
    await host.__aenter__()
    for name in ("honest-a", "honest-b"):
        await host.launch(name, busy_bot())
    await Phase().play(host, 1.0)  # warm-up, not counted
    return host


async def measure(seconds: float, rounds: int = 2) -> dict:
    """`seconds` of hostile windows (and as much quiet), over `rounds` turns of the attacks."""
    window = seconds / (rounds * len(ATTACKS))
    beside = {name: Phase() for name in ATTACKS}  # the quiet windows next to each attack's
    attacked = {name: Phase() for name in ATTACKS}
    bare = Phase()
    with tempfile.TemporaryDirectory() as tmp:
        host = await honest_host(Path(tmp) / "groups", BOTS)
        try:
            neighbours = Neighbours(host)
            await neighbours.start()
            turn = 0
            for i in range(rounds):
                for name in ATTACKS if i % 2 == 0 else reversed(ATTACKS):
                    turn += 1
                    for hostile_now in (False, True) if turn % 2 else (True, False):
                        if hostile_now:
                            await hostile_window(
                                attacked[name], host, window, partial(neighbours.attack, name)
                            )
                        else:
                            await beside[name].play(host, window)
        finally:
            await host.close()
        # The reference: the same neighbours without control groups.
        plain = dataclasses.replace(BOTS, control_group=False)
        host = await honest_host(Path(tmp) / "plain", plain)
        try:
            reference = Neighbours(host)
            await reference.start()
            await hostile_window(bare, host, seconds / 2, reference.bare)
        finally:
            await host.close()
    return {"beside": beside, "attacked": attacked, "bare": bare, "neighbours": neighbours}


def pooled(phases) -> Phase:
    together = Phase()
    for phase in phases:
        together.ms += phase.ms
        together.faults += phase.faults
        together.matches += phase.matches
    return together


def figures_of(phase: Phase) -> dict:
    return {
        "decisions": len(phase.ms),
        "matches": phase.matches,
        "median_ms": round(statistics.median(phase.ms), 2),
        "p99_ms": round(pct(phase.ms, 0.99), 2),
        "honest_faults": len(phase.faults),
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(seconds: float, log) -> dict:
    if group_layout() is None:
        raise SystemExit("noisy: no control groups here (see the warning above)")
    found = asyncio.run(measure(max(seconds, 8.0)))
    neighbours = found["neighbours"]
    quiet, noisy = pooled(found["beside"].values()), pooled(found["attacked"].values())
    phases = {"quiet": quiet, "noisy": noisy, "bare": found["bare"]}
    labels = {
        "quiet": "quiet neighbours",
        "noisy": "hostile neighbours (all)",
        "bare": "hostile, no control groups",
    }
    figures = {key: figures_of(phase) for key, phase in phases.items()}
    quiet_p99 = figures["quiet"]["p99_ms"]
    for key, label in labels.items():
        f = figures[key]
        log(
            f"(a) honest decisions, {label:27} median {f['median_ms']:7.2f} ms, p99 "
            f"{f['p99_ms']:7.2f} ms ({f['decisions']} decisions, {f['matches']} matches, "
            f"{f['honest_faults']} honest faults)"
        )
    per_attack = {}
    for name, phase in found["attacked"].items():
        per_attack[name] = f = figures_of(phase)
        q = figures_of(found["beside"][name])
        f["quiet_beside_median_ms"], f["quiet_beside_p99_ms"] = q["median_ms"], q["p99_ms"]
        f["median_vs_beside"] = round(f["median_ms"] / q["median_ms"], 3)
        f["p99_vs_beside"] = round(f["p99_ms"] / q["p99_ms"], 3)
        log(
            f"    {name:10} median {f['median_ms']:7.2f} ms, p99 {f['p99_ms']:7.2f} ms "
            f"({f['decisions']} decisions, {f['honest_faults']} honest faults); the quiet "
            f"windows beside it {q['median_ms']:.2f} / {q['p99_ms']:.2f} ms: x "
            f"{f['median_vs_beside']:.2f} / {f['p99_vs_beside']:.2f}"
        )
    ms = {cost: statistics.median(times) * 1e3 for cost, times in neighbours.costs.items()}
    setup_ms, release_ms = ms["group_setup"], ms["group_release"]
    log(
        f"(b) per launch: control group made in {setup_ms:.2f} ms, removed in "
        f"{release_ms:.2f} ms; work directory (tmpfs) mounted in {ms['workdir_setup']:.2f} "
        f"ms, unmounted in {ms['workdir_release']:.2f} ms (medians of {neighbours.launches} "
        "hostile launches)"
    )
    ratio = figures["noisy"]["p99_ms"] / quiet_p99
    faults = figures["noisy"]["honest_faults"] + figures["quiet"]["honest_faults"]
    results = {
        **figures,
        "per_attack": per_attack,
        "noisy_vs_quiet_median": round(
            figures["noisy"]["median_ms"] / figures["quiet"]["median_ms"], 3
        ),
        "hostile_launches": neighbours.launches,
        **{f"{cost}_ms": round(value, 2) for cost, value in ms.items()},
        "honest_fault_details": (quiet.faults + noisy.faults)[:5],
        "workdir_release_ms_by_attack": {
            mode: round(statistics.median(times) * 1e3, 2)
            for mode, times in neighbours.workdir_release_by_mode.items()
        },
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
