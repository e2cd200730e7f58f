"""Noisy neighbours: what hostile bots beside an honest one cost its decisions, and what a
launch's control group costs (issue 29).

(a) Decision round trip of honest bots (benchsuites/busy_bot.py: 5 ms of its own CPU time per
decision, so a smaller CPU share shows as a longer decision), two of them playing balloon
against each other match after match, as the referee measures it (MoveRecord.elapsed_ms):
first with quiet neighbours (five idle bots), then, in the same run, with hostile neighbours
(tests/bots/hostile_bot.py in their sandboxes and control groups): a bot whose 8 children spin
for the whole phase, and a seat relaunched again and again through the other attacks in turn:
memfds of 3 x 64 MB, 300 MB of SysV shared memory kept after detaching, 10 children of 100 MB
each, and a disk filler, each in a match against a partner. Goal: p99 with hostile neighbours
at most 1.5 x quiet, and no fault for the honest seats.
(b) The control group and work directory of a launch: making them (the tmpfs work directory
mounted, the group's directories and limits written) and releasing them after the bot (group
killed and removed, tmpfs unmounted), the platform's own time for each, median over the
hostile launches. Goal:
under 20 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.games import make_game
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, ResourceLimits, group_layout
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
    """The honest bots' decisions and faults over one phase."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self.faults: list[str] = []
        self.matches = 0

    async def play(self, host: RefereeHost, seconds: float, seed: int) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end or self.matches < 3:
            result = await host.run_match(
                GAME, seed + self.matches, ["honest-a", "honest-b"], HONEST_LIMITS
            )
            self.matches += 1
            self.ms += [m.elapsed_ms for m in result.moves if not m.default]
            self.faults += [f"{f.kind}: {f.detail}" for f in result.faults]


class Neighbours:
    """Hostile bots launched, played against a partner (their attack starts at their first
    request), and stopped, again and again until told to end; the launches' costs."""

    def __init__(self, host: RefereeHost):
        self.host = host
        self.setup_s: list[float] = []
        self.release_s: list[float] = []
        self.launches = 0
        self.done = asyncio.Event()

    async def once(self, name: str, command: BotCommand, keep: bool = False) -> None:
        proc = await self.host.launch(name, command)
        self.setup_s.append(proc.group_setup_s)
        self.launches += 1
        await self.host.run_match(GAME, self.launches, [name, f"{name}-partner"], NEIGHBOUR_LIMITS)
        if keep:
            await self.done.wait()
        await self.host.bots.pop(name).stop()
        self.release_s.append(proc.group_release_s)

    async def cycle(self, attacks) -> None:
        """One neighbour's seat, relaunched through the attacks in turn."""
        await self.host.launch("attacker-partner", raw_bot(1))
        while not self.done.is_set():
            for mode, arg in attacks:
                await self.once("attacker", hostile(mode, arg))


async def measure(seconds: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        async with RefereeHost(Path(tmp), resource_limits=BOTS) as host:
            for name in ("honest-a", "honest-b"):
                await host.launch(name, busy_bot())
            quiet_neighbours = [f"quiet-{i}" for i in range(5)]
            for name in quiet_neighbours:
                await host.launch(name, raw_bot(1))
            await Phase().play(host, 1.0, 0)  # warm-up, not counted
            quiet = Phase()
            await quiet.play(host, seconds, 100)
            for name in quiet_neighbours:
                await host.bots.pop(name).stop()
            neighbours = Neighbours(host)
            await host.launch("spinners-partner", raw_bot(1))
            tasks = [
                asyncio.ensure_future(
                    neighbours.once("spinners", hostile("spinners", "8"), keep=True)
                )
            ]
            tasks.append(asyncio.ensure_future(neighbours.cycle(ATTACKS)))
            noisy = Phase()
            try:
                await noisy.play(host, seconds, 100)
            finally:
                neighbours.done.set()
                await asyncio.gather(*tasks)
    return {"quiet": quiet, "noisy": noisy, "neighbours": neighbours}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(seconds: float, log) -> dict:
    if group_layout() is None:
        raise SystemExit("noisy: no control groups here (see the warning above)")
    found = asyncio.run(measure(max(seconds, 5.0)))
    quiet, noisy, neighbours = found["quiet"], found["noisy"], found["neighbours"]
    figures = {}
    for label, phase in (("quiet", quiet), ("noisy", noisy)):
        figures[label] = {
            "decisions": len(phase.ms),
            "matches": phase.matches,
            "median_ms": round(statistics.median(phase.ms), 2),
            "p99_ms": round(pct(phase.ms, 0.99), 2),
            "honest_faults": len(phase.faults),
        }
        f = figures[label]
        log(
            f"(a) honest decisions, {label} neighbours: median {f['median_ms']:6.2f} ms, p99 "
            f"{f['p99_ms']:6.2f} ms ({f['decisions']} decisions, {f['matches']} matches, "
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
        "hostile_launches": neighbours.launches,
        "group_setup_ms": round(setup_ms, 2),
        "group_release_ms": round(release_ms, 2),
        "honest_fault_details": (quiet.faults + noisy.faults)[:5],
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
