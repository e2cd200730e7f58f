"""Ladder: a ladder of 4 random bots (the SDK's example bot, separate processes) on 4-player
tables, decisions per second end to end (referee, bots, store, ratings); kaggle-environments'
in-process connectx random-vs-random steps per second in the same run when it is installed
(goal: ours >= 5 x theirs); the store and rating work per match (goal: <= 2 ms); and
`arena rankings` with 100,000 stored matches (goal: <= 100 ms)."""

from __future__ import annotations

import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena import app
from arena.ladder.executors import RunSettings
from arena.referee.match import Limits
from arena.store import Store

from .common import ROOT
from .store_measure import per_match_ms, rankings_ms

RANDOM = f"{sys.executable} {ROOT / 'example_bots' / 'random_bot.py'}"


def ladder_decisions_per_s(directory: Path, game: str, rounds: int) -> tuple[float, int, int]:
    db = directory / f"ladder-{game}.db"
    with Store(db) as store:
        for name in ("r1", "r2", "r3", "r4"):
            store.add_bot(name, RANDOM)
    settings = app.LadderSettings(
        db=db,
        name="bench",
        game=game,
        table_size=4,
        bots=("r1", "r2", "r3", "r4"),
        options={},
        rounds=rounds,
        seed=1,
        run=RunSettings(
            concurrency=8,
            limits=Limits(move_ms=5000, time_bank_ms=10_000),
            run_dir=directory / "runs",
        ),
        progress=False,
    )
    start = time.perf_counter()
    summary, _ = app.run_ladder(settings)
    elapsed = time.perf_counter() - start
    con = sqlite3.connect(db)
    decisions = sum(
        len(json.loads(r[0])["moves"])
        for r in con.execute("SELECT replay FROM matches WHERE replay IS NOT NULL")
    )
    con.close()
    return decisions / elapsed, decisions, summary.played


def connectx_steps_per_s(seconds: float) -> float | None:
    try:
        import kaggle_environments
    except ImportError:
        return None
    env = kaggle_environments.make("connectx", debug=False)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset()
        steps += len(env.run(["random", "random"])) - 1
    return steps / (time.perf_counter() - start)


def rankings_command_ms(db: Path, repeat: int = 5) -> float:
    """The whole `arena rankings` command, interpreter start-up included."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "arena", "rankings", "--db", str(db)],
            check=True,
            capture_output=True,
        )
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def run(seconds: float, log) -> dict:
    results: dict = {}
    goals: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        rate, decisions, played = ladder_decisions_per_s(
            d, "balloon", rounds=max(4, int(seconds * 10))
        )
        log(
            f"ladder, 4 random bots, balloon 4p: {rate:8.0f} decisions/s ({decisions} decisions, "
            f"{played} matches)"
        )
        results["ladder_balloon_decisions_per_s"] = round(rate)
        kaggle = connectx_steps_per_s(seconds)
        if kaggle is None:
            log("kaggle-environments is not installed (pip install -e '.[bench]'): no ratio")
        else:
            log(f"kaggle connectx random vs random:   {kaggle:8.0f} steps/s (in-process)")
            results["kaggle_connectx_steps_per_s"] = round(kaggle)
            goals["ladder decisions/s vs kaggle connectx steps/s"] = {
                "value": round(rate / kaggle, 2),
                "goal": ">= 5",
                "met": rate / kaggle >= 5,
            }
        for k in (2, 4):
            ms = per_match_ms(d, k)
            log(f"store + rating per match, tables of {k}: {ms:6.3f} ms")
            results[f"store_and_rating_ms_per_match_k{k}"] = round(ms, 3)
            goals[f"store + rating per match, k={k}"] = {
                "value": round(ms, 3),
                "goal": "<= 2 ms",
                "met": ms <= 2,
            }
        stored, ms = rankings_ms(d)
        log(f"rankings query over {stored} matches:   {ms:6.3f} ms (fresh read-only connection)")
        results["rankings_matches"] = stored
        results["rankings_query_ms"] = round(ms, 3)
        goals["rankings with 100,000 matches (query)"] = {
            "value": round(ms, 3),
            "goal": "<= 100 ms",
            "met": ms <= 100,
        }
        cmd = rankings_command_ms(d / "rankings.db")
        log(f"`arena rankings` command, whole process: {cmd:6.1f} ms")
        results["rankings_command_ms"] = round(cmd, 1)
        goals["`arena rankings` whole command"] = {
            "value": round(cmd, 1),
            "goal": "<= 100 ms",
            "met": cmd <= 100,
        }
    return {"results": results, "goals": goals}
