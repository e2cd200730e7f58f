"""Lanes: what a process per (bot, lane) costs against one process per bot (docs/bots.md#lanes).

For tables of 2, 3 and 4: a duplicate round-robin of k + 1 random bots (the SDK's example bot)
on Balloon, played through LocalExecutor and LadderRunner (referee, sandboxed bots, store,
ratings), once with lanes and once with every rotation in one process per bot (the internal
switch RunSettings.one_process), in alternating order, in one run. While each plays, the bots'
launched processes are sampled: lanes per bot and resident memory per bot (the sum of VmRSS over
every process of its sandboxes, the guard included: shared pages count once per process, so an
upper bound). Goal: lanes' decisions/s at least 0.8 x one process's, at each k.
Then idle: with --idle-stop 1 s, the time until no bot holds a process after the ladder, and
what a relaunch costs a match (from a seat needing an ended lane to its Hello), over a second
ladder that seats the ended bots again.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.ladder.local import LocalExecutor
from arena.ladder.runner import LadderRunner
from arena.referee.lanes import bot_of
from arena.referee.launcher import children_by_parent
from arena.referee.match import Limits
from arena.store import AsyncStore, Store

from .common import ROOT

RANDOM = f"{sys.executable} {ROOT / 'example_bots' / 'random_bot.py'}"
LIMITS = Limits(move_ms=5000, time_bank_ms=10_000)
CONCURRENCY = 8


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(pid: int, children: dict[int, list[int]]) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


class Sampler:
    """Lanes and resident memory per bot, sampled while a ladder plays (the largest seen), in a
    thread, one pass over /proc a sample: the referee's event loop must not pay for it."""

    def __init__(self, executor: LocalExecutor):
        self.executor = executor
        self.lanes: dict[str, int] = {}
        self.rss_kb: dict[str, int] = {}

    def sample(self, guards: list[tuple[str, int]]) -> None:
        children = children_by_parent()
        lanes: dict[str, int] = {}
        memory: dict[str, int] = {}
        for bot, guard in guards:  # a lane's guard: every process of its sandbox is under it
            lanes[bot] = lanes.get(bot, 0) + 1
            memory[bot] = memory.get(bot, 0) + sum(rss_kb(p) for p in tree(guard, children))
        for bot, n in lanes.items():
            self.lanes[bot] = max(self.lanes.get(bot, 0), n)
            self.rss_kb[bot] = max(self.rss_kb.get(bot, 0), memory[bot])

    async def run(self, stop: asyncio.Event, period_s: float = 0.25) -> None:
        while not stop.is_set():
            guards = [
                (bot_of(key), proc.pgid)
                for key, proc in list(self.executor.referee.bots.items())
                if proc.pgid is not None
            ]
            await asyncio.to_thread(self.sample, guards)
            try:
                await asyncio.wait_for(stop.wait(), period_s)
            except TimeoutError:
                pass


def decisions(db: Path, ladder: str) -> int:
    con = sqlite3.connect(db)
    try:
        return sum(
            len(json.loads(r[0])["moves"])
            for r in con.execute(
                "SELECT m.replay FROM matches m JOIN ladders l ON l.id = m.ladder_id "
                "WHERE l.name = ? AND m.replay IS NOT NULL",
                (ladder,),
            )
        )
    finally:
        con.close()


async def play_ladder(
    directory: Path, k: int, rounds: int, one_process: bool, tag: str
) -> tuple[float, Sampler]:
    """Decisions/s of one ladder, bot start-up included, and what the sampler saw."""
    db = directory / f"{tag}.db"
    names = [f"r{i}" for i in range(k + 1)]
    with Store(db) as store:
        for name in names:
            store.add_bot(name, RANDOM)
        store.create_ladder(tag, "balloon", k, names, rounds=rounds, seed=k)
    store = await AsyncStore.open(db)
    executor = LocalExecutor(store, directory / tag, one_process=one_process)
    sampler = Sampler(executor)
    stop = asyncio.Event()
    sampling = asyncio.ensure_future(sampler.run(stop))
    try:
        bots = [await store.run(Store.get_bot, n) for n in names]
        start = time.perf_counter()
        await LadderRunner(store, executor, LIMITS, CONCURRENCY).run(tag, bots)
        elapsed = time.perf_counter() - start
    finally:
        stop.set()
        await sampling
        await executor.close()
        await store.close()
    return decisions(db, tag) / elapsed, sampler


async def idle_and_relaunch(directory: Path, idle_stop_s: float) -> tuple[float, list[float]]:
    """Seconds from a ladder's end until no bot holds a process (idle_stop_s set), and the
    Hello waits of the lanes a second ladder launches again."""
    db = directory / "idle.db"
    names = ["a", "b", "c", "d"]
    with Store(db) as store:
        for name in names:
            store.add_bot(name, RANDOM)
        store.create_ladder("first", "balloon", 4, names, seed=1)
        store.create_ladder("second", "balloon", 4, names, seed=2)
    store = await AsyncStore.open(db)
    executor = LocalExecutor(store, directory / "idle", idle_stop_s=idle_stop_s)
    try:
        bots = [await store.run(Store.get_bot, n) for n in names]
        await LadderRunner(store, executor, LIMITS, CONCURRENCY).run("first", bots)
        ended = time.perf_counter()
        deadline = ended + idle_stop_s + 30
        while executor.referee.bots:
            if time.perf_counter() > deadline:
                raise RuntimeError("idle lanes were not ended within the idle time + 30 s")
            await asyncio.sleep(0.02)  # polling: the pool's watch ends them on its period
        gone = time.perf_counter() - ended
        before = len(executor.lanes.stats.relaunch_hello_s)
        await LadderRunner(store, executor, LIMITS, CONCURRENCY).run("second", bots)
        waits = executor.lanes.stats.relaunch_hello_s[before:]
    finally:
        await executor.close()
        await store.close()
    return gone, waits


def run(seconds: float, log) -> dict:
    results: dict = {}
    goals: dict = {}
    rounds = max(3, int(seconds * 3))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for k in (2, 3, 4):
            rates: dict[bool, list[float]] = {True: [], False: []}
            seen: dict[bool, Sampler] = {}
            for i, one in enumerate((False, True, True, False)):  # alternating order
                rate, sampler = asyncio.run(
                    play_ladder(d, k, rounds, one, f"k{k}-{i}-{'one' if one else 'lanes'}")
                )
                rates[one].append(rate)
                seen.setdefault(one, sampler)
            for one in (False, True):
                label = "one process" if one else "lanes"
                sampler = seen[one]
                lanes = max(sampler.lanes.values())
                mb = statistics.median(sampler.rss_kb.values()) / 1024
                rate = statistics.median(rates[one])
                log(
                    f"k={k} {label:11}: {rate:7.0f} decisions/s, processes per bot at most "
                    f"{lanes}, resident memory per bot {mb:6.1f} MB (median over bots)"
                )
                tag = "one_process" if one else "lanes"
                results[f"k{k}_{tag}_decisions_per_s"] = round(rate)
                results[f"k{k}_{tag}_processes_per_bot"] = lanes
                results[f"k{k}_{tag}_rss_mb_per_bot"] = round(mb, 1)
            ratio = statistics.median(rates[False]) / statistics.median(rates[True])
            goals[f"lanes decisions/s vs one process, k={k}"] = {
                "value": round(ratio, 2),
                "goal": ">= 0.8",
                "met": ratio >= 0.8,
            }
            goals[f"processes per bot at tables of {k}"] = {
                "value": max(seen[False].lanes.values()),
                "goal": f"<= {k}",
                "met": max(seen[False].lanes.values()) <= k,
            }
        idle_stop_s = 1.0
        gone, waits = asyncio.run(idle_and_relaunch(d, idle_stop_s))
        wait_ms = statistics.median(waits) * 1000 if waits else float("nan")
        log(
            f"idle stop {idle_stop_s:.0f} s: no bot process {gone:.2f} s after the ladder; a "
            f"relaunch's Hello {wait_ms:.0f} ms after the seat needed it (median of {len(waits)})"
        )
        results["idle_no_process_after_s"] = round(gone, 2)
        results["relaunch_hello_ms_median"] = round(wait_ms, 1)
        results["relaunch_hello_ms_max"] = round(max(waits) * 1000, 1) if waits else None
        goals["an idle bot holds no process after the idle time"] = {
            "value": round(gone, 2),
            "goal": f"<= {idle_stop_s:.0f} s + one watch period (0.25 s) + a stop",
            "met": gone <= idle_stop_s + 0.25 + 2.0,
        }
    return {"results": results, "goals": goals}
