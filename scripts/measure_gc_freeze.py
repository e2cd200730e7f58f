#!/usr/bin/env python3
"""What a referee's gc.freeze() at start buys (arena.referee.host.FREEZE_STARTUP_OBJECTS).

Runs the referee suite's sequential match (scripts/benchsuites/referee.py, (b): one balloon
2-player match at a time against a sandboxed raw bot) in fresh processes, alternately with the
switch on and off, and reports for each: microseconds per decision (median of its windows),
the garbage collector's full (generation 2) passes during play (how many, their total and
longest time), and the time of one full pass forced at the end with gc.collect(), and how many
objects it walks.

    .venv/bin/python scripts/measure_gc_freeze.py --seconds 10 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(freeze: bool, seconds: float, window_s: float = 0.25) -> dict:
    sys.path.insert(0, str(HERE))
    from benchsuites.referee import RefereeSequential

    import arena.referee.host as host

    host.FREEZE_STARTUP_OBJECTS = freeze
    full_passes: list[float] = []
    started: list[float] = []

    def watch(phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            full_passes.append(time.perf_counter() - started.pop())

    async def play() -> tuple[list[float], int]:
        windows, decisions = [], 0
        async with RefereeSequential() as bench:
            full_passes.clear()
            gc.callbacks.append(watch)
            try:
                for _ in range(max(1, round(seconds / window_s))):
                    per_decision, n = await bench.window(window_s)
                    windows.append(per_decision)
                    decisions += n
            finally:
                gc.callbacks.remove(watch)
        return windows, decisions

    windows, decisions = asyncio.run(play())
    walked = len(gc.get_objects())  # what a full pass walks: the frozen ones are not among them
    start = time.perf_counter()
    gc.collect()
    forced = time.perf_counter() - start
    return {
        "freeze": freeze,
        "us_per_decision": round(statistics.median(windows) * 1e6, 1),
        "decisions": decisions,
        "full_passes": len(full_passes),
        "full_passes_ms": round(sum(full_passes) * 1e3, 1),
        "longest_full_pass_ms": round(max(full_passes, default=0.0) * 1e3, 1),
        "forced_full_pass_ms": round(forced * 1e3, 1),
        "walked": walked,
        "frozen": gc.get_freeze_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="play per run")
    parser.add_argument("--runs", type=int, default=3, help="runs with the switch on, and off")
    parser.add_argument("--child", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child == "on", args.seconds)))
        return
    rows = []
    for _ in range(args.runs):
        for mode in ("on", "off"):
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode, "--seconds", str(args.seconds)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    for freeze in (True, False):
        mine = [r for r in rows if r["freeze"] is freeze]
        print(
            f"freeze {'on ' if freeze else 'off'}: "
            f"{statistics.median(r['us_per_decision'] for r in mine):.1f} us/decision, "
            f"{statistics.median(r['full_passes'] for r in mine):g} full passes in "
            f"{args.seconds:g} s taking "
            f"{statistics.median(r['full_passes_ms'] for r in mine):.1f}"
            f" ms (longest {max(r['longest_full_pass_ms'] for r in mine):.1f} ms), a forced "
            f"full pass {statistics.median(r['forced_full_pass_ms'] for r in mine):.1f} ms "
            f"walking {statistics.median(r['walked'] for r in mine):g} objects "
            f"(medians of {len(mine)} runs)"
        )


if __name__ == "__main__":
    main()
