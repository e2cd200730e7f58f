#!/usr/bin/env python3
"""Arena's benchmarks: `scripts/bench.py SUITE [--json] [--seconds S]`.

Suites: engines, referee, sandbox, noisy, ladder, lanes, ray, web, rating, compare,
runtimes. Each
prints a human-readable table, or with --json one JSON object: {"suite": ..., "machine": ...,
"results": {...}, "goals": {...}}. Speed goals are ratios against a reference measured in the
same run (this machine is shared and noisy); the figures and the commands that made them go in
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SUITES = (
    "engines",
    "referee",
    "sandbox",
    "noisy",
    "ladder",
    "lanes",
    "ray",
    "web",
    "rating",
    "compare",
    "runtimes",
    "strong",
)
# Suites with a quick form (fewer trials, for CI) and their own worker processes.
QUICK_SUITES = ("rating", "compare")


def machine() -> dict:
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("suite", choices=SUITES)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="time per measurement (default 3)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"the quick form, for CI (suites: {', '.join(QUICK_SUITES)})",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help=f"worker processes (suites: {', '.join(QUICK_SUITES)}; default 2)",
    )
    args = parser.parse_args()
    extra = {}
    if args.quick or args.workers is not None:
        if args.suite not in QUICK_SUITES:
            parser.error(
                f"--quick and --workers apply to {', '.join(QUICK_SUITES)}, not {args.suite}"
            )
        if args.workers is not None and args.workers < 1:
            parser.error("--workers must be at least 1")
        extra = {"quick": args.quick, "workers": args.workers}
    module = importlib.import_module(f"benchsuites.{args.suite}")
    report = module.run(
        seconds=args.seconds, log=(lambda *a: None) if args.json else print, **extra
    )
    report = {"suite": args.suite, "machine": machine(), **report}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        goals = report.get("goals", {})
        if goals:
            print("\ngoals:")
            for name, goal in goals.items():
                mark = "met" if goal["met"] else "NOT MET"
                value = "none" if goal["value"] is None else f"{goal['value']:.3g}"
                print(f"  {name}: {value} (goal {goal['goal']}) {mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
