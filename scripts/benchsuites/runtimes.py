"""Runtimes: what a starter kit's install or build costs on the server, what the cache saves,
and how fast the C++ bot decides against the Python SDK's bot, measured in one run.

(a) Preparation (arena.referee.build, in the sandbox, as the server's verification runs it) of
each starter kit into a fresh cache: the Python bot's wheel installed offline, the C++ bot
built; then a second version of each, one source file changed: the Python bot's has the same
requirements and wheels, so it reuses the environment (installs nothing); the C++ bot's changed
source is built again, so its second figure is a rebuild. Goal: a cached environment's reuse
takes at most a tenth of its install.
(b) Verification: from launching the prepared bot (sandboxed) to the end of one Balloon match
against the Python SDK's random bot, for each kit and, as the reference, for the SDK's random
bot itself.
(c) Decision round trip: the referee's sequential decisions (Balloon, 2 players) with both seats
the C++ bot, and with both seats the Python SDK's random bot, in short windows taken in pairs
(in alternating order) so that load on this shared machine lands on both alike. The figure is
the median of the window-by-window ratios, C++ over Python.
(d) A hostile build beside the matches being played: the decision round trip of a match of two
Python SDK bots in 1 s blocks (their median decision), alternately with a build spinning eight
busy loops beside it (as the server runs a build while matches are played: its sandbox, its
control group at a bot's idle weight, its busy quota, one core of its own) and without; the
figure is the median of the ratios of each block with the build to the block without that
follows it. Goal: the matches slow by at most a quarter.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.botcommand import resolve
from arena.games import make_game
from arena.referee.build import BuildBox, BuildLimits, Preparer
from arena.referee.host import RefereeHost
from arena.referee.match import Limits

ROOT = Path(__file__).resolve().parents[2]
KITS = ROOT / "example_bots"
LIMITS = Limits(move_ms=10_000, time_bank_ms=0, max_strikes=3, connect_ms=60_000)
RANDOM = f"{sys.executable} {ROOT / 'example_bots' / 'random_bot.py'}"


def _wheel_kit(dest: Path) -> Path:
    """The Python kit with its wheel built as its README says (pip wheel; the build backend
    from this environment, offline), once: a second version ships the same wheel file."""
    built = dest.parent / "wheels"
    if not built.is_dir():
        source = shutil.copytree(KITS / "python_wheel" / "lib", dest.parent / "lib")
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
             "-w", str(built), str(source)],
            check=True, capture_output=True,
        )  # fmt: skip
    shutil.copytree(KITS / "python_wheel", dest, ignore=shutil.ignore_patterns("wheels", "build"))
    shutil.copytree(built, dest / "wheels")
    return dest


def _cpp_kit(dest: Path) -> Path:
    shutil.copytree(KITS / "cpp", dest, ignore=shutil.ignore_patterns("gen", "bot"))
    return dest


async def prepare_times(tmp: Path, log) -> tuple[dict[str, float], dict[str, Path]]:
    """(a): seconds of each kit's first preparation and of a second version's; the versions'
    folders (prepared, for (b) and (c))."""
    preparer = Preparer(tmp / "cache")
    times: dict[str, float] = {}
    versions: dict[str, Path] = {}
    for kit, make in (("python_wheel", _wheel_kit), ("cpp", _cpp_kit)):
        for n in (1, 2):
            version = make(tmp / kit / str(n))
            if n == 2:  # a new version: one file changed, the same requirements
                changed, comment = (
                    (version / "bot.py", "# version 2")
                    if kit == "python_wheel"
                    else (version / "main.cpp", "// version 2")
                )
                changed.write_text(changed.read_text() + f"\n{comment}\n")
            began = time.perf_counter()
            prepared = await preparer.prepare(version)
            times[f"{kit}_{n}"] = time.perf_counter() - began
            if not prepared.ok:
                step = prepared.failed_step()
                raise RuntimeError(f"{kit} failed to prepare: {step}")
            log(
                f"(a) {kit} version {n}: {times[f'{kit}_{n}']:7.2f} s  "
                f"({', '.join(('reused' if s.cached else s.name) for s in prepared.steps)})"
            )
            versions[kit] = version
    return times, versions


async def verification_times(tmp: Path, versions: dict[str, Path], log) -> dict[str, float]:
    """(b): seconds from launch to the end of one match against the SDK's random bot."""
    game = make_game("balloon", 2)
    times = {}
    async with RefereeHost(tmp / "verify") as host:
        subjects = {"sdk_random": resolve(RANDOM)} | {
            k: resolve(str(v)) for k, v in versions.items()
        }
        for i, (name, command) in enumerate(subjects.items()):
            began = time.perf_counter()
            await host.launch(f"{name}-{i}", command)
            await host.launch(f"opponent-{i}", resolve(RANDOM))
            result = await host.run_match(game, i, [f"{name}-{i}", f"opponent-{i}"], LIMITS)
            times[name] = time.perf_counter() - began
            if result.faults:
                raise RuntimeError(f"{name} faulted: {result.faults}")
            log(f"(b) {name}: launch to a match's end {times[name]:6.2f} s")
            for key in (f"{name}-{i}", f"opponent-{i}"):
                await host.bots.pop(key).stop()
    return times


class Pair:
    """Both seats one bot's command (two processes), playing Balloon 2-player matches."""

    def __init__(self, host: RefereeHost, label: str):
        self.host = host
        self.label = label
        self.game = make_game("balloon", 2)
        self.seeds = itertools.count(1)

    async def start(self, command) -> None:
        for seat in "ab":
            await self.host.launch(f"{self.label}-{seat}", command)
        await self.window(0.2)  # connects, warms up

    async def window(self, seconds: float) -> float:
        decisions = 0
        began = time.perf_counter()
        while time.perf_counter() - began < seconds:
            seats = [f"{self.label}-a", f"{self.label}-b"]
            result = await self.host.run_match(self.game, next(self.seeds), seats, LIMITS)
            decisions += len(result.moves)
        return (time.perf_counter() - began) / decisions


async def roundtrip_ratios(tmp: Path, cpp: Path, seconds: float) -> tuple[list[float], list[float]]:
    """(c): per-decision seconds of the C++ pair and of the Python pair, window by window."""
    cpp_windows, py_windows = [], []
    async with RefereeHost(tmp / "roundtrip") as host:
        cpp_pair, py_pair = Pair(host, "cpp"), Pair(host, "py")
        await cpp_pair.start(resolve(str(cpp)))
        await py_pair.start(resolve(RANDOM))
        for i in range(max(40, round(seconds / 0.1))):
            pair = ((cpp_pair, cpp_windows), (py_pair, py_windows))
            for side, windows in pair if i % 2 == 0 else pair[::-1]:
                windows.append(await side.window(0.1))
    return cpp_windows, py_windows


# (d): a build that computes for ever in as many processes as it may (eight busy loops).
SPINNING_BUILD = ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do (while :; do :; done) & done; wait"]


SPINNER_LIMITS = BuildLimits(time_s=600)


async def beside_a_build(
    tmp: Path, seconds: float, limits: BuildLimits = SPINNER_LIMITS
) -> tuple[list[float], list[float]]:
    """(d): per-decision seconds of a match of two Python SDK bots, in blocks with a hostile
    build spinning beside it (in its sandbox and control group, as the server runs one) and
    blocks without, alternating: (with the build, without), each a block's median."""
    busy: list[float] = []
    quiet: list[float] = []
    async with RefereeHost(tmp / "beside") as host:
        pair = Pair(host, "py")
        await pair.start(resolve(RANDOM))
        for i in range(max(6, round(seconds / 1.0))):
            if i % 2:
                quiet.append(statistics.median([await pair.window(0.1) for _ in range(5)]))
                continue
            # As the server runs it: it is told matches are being played (Preparer.playing).
            box = BuildBox(limits, True, (), f"spinner{i}", tmp, playing=lambda: True)
            async with box:
                build = asyncio.ensure_future(box.run(SPINNING_BUILD, 600))
                await asyncio.sleep(0.5)  # its sandbox is up and its loops spin
                busy.append(statistics.median([await pair.window(0.1) for _ in range(5)]))
                build.cancel()
                await asyncio.gather(build, return_exceptions=True)
    return busy, quiet


def run(seconds: float, log) -> dict:
    with tempfile.TemporaryDirectory(prefix="arena-bench-runtimes-") as name:
        tmp = Path(name)
        prep, versions = asyncio.run(prepare_times(tmp, log))
        verify = asyncio.run(verification_times(tmp, versions, log))
        cpp_w, py_w = asyncio.run(roundtrip_ratios(tmp, versions["cpp"], seconds))
        busy, quiet = asyncio.run(beside_a_build(tmp, seconds))
    # Each block with the build against the block without that follows it: the load of this
    # shared machine drifts slowly, so neighbours see alike.
    slowed = statistics.median(b / q for b, q in zip(busy, quiet))
    log(
        f"(d) decision round trip beside a spinning build: {statistics.median(busy) * 1e6:.0f} "
        f"us, without {statistics.median(quiet) * 1e6:.0f} us ({slowed:.2f} times)"
    )
    ratios = [c / p for c, p in zip(cpp_w, py_w)]
    ratio = statistics.median(ratios)
    cpp_us, py_us = statistics.median(cpp_w) * 1e6, statistics.median(py_w) * 1e6
    log(
        f"(c) decision round trip: C++ {cpp_us:.0f} us, Python SDK {py_us:.0f} us "
        f"(median of {len(ratios)} window pairs; C++/Python {ratio:.2f})"
    )
    reuse = prep["python_wheel_2"] / prep["python_wheel_1"]
    return {
        "results": {
            "prepare_s": {k: round(v, 3) for k, v in prep.items()},
            "verification_s": {k: round(v, 3) for k, v in verify.items()},
            "decision_us": {"cpp": round(cpp_us, 1), "python_sdk": round(py_us, 1)},
            "cpp_over_python_decision": round(ratio, 3),
            "cached_env_reuse_over_install": round(reuse, 4),
            "decision_beside_build_over_quiet": round(slowed, 3),
        },
        "goals": {
            "cached environment reuse / install": {
                "value": reuse,
                "goal": "<= 0.1",
                "met": reuse <= 0.1,
            },
            "decision beside a spinning build / without": {
                "value": slowed,
                "goal": "<= 1.25",
                "met": slowed <= 1.25,
            },
        },
    }
