"""Measure the store: per-match store + rating cost, and `rankings` over 100,000 stored matches.

Used by the ladder benchmark suite (scripts/bench.py ladder); nothing is timed in the tests.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.results import MatchResult, MoveRecord, demote_faulted
from arena.store import Store


def _result(m, config, rng, moves_per_match: int) -> MatchResult:
    k = len(m.seats)
    scores = tuple(rng.randrange(40) for _ in range(k))
    moves = tuple(MoveRecord(i % k, rng.randrange(10), 1.5) for i in range(moves_per_match))
    return MatchResult(
        f"{m.ladder}:{m.index}",
        config,
        m.seed,
        m.seats,
        scores,
        demote_faulted(scores, set()),
        (),
        moves,
    )


def per_match_ms(
    directory: Path, table_size: int = 4, matches: int = 2000, moves_per_match: int = 100
) -> float:
    """Mean ms to record one result (status, results, replay, rating update, commit)."""
    with Store(directory / f"per-match-{table_size}.db") as store:
        bots = [f"b{i}" for i in range(8)]
        for b in bots:
            store.add_bot(b, remote=True)
        ladder = store.create_ladder("m", "balloon", table_size, bots, seed=1, rounds=40)
        rng = random.Random(0)
        todo = [
            (m.index, _result(m, ladder.config, rng, moves_per_match))
            for m in store.matches("m", limit=matches)
        ]
        t = time.perf_counter()
        for index, result in todo:
            store.record_result("m", index, result)
        return (time.perf_counter() - t) / len(todo) * 1000


def rankings_ms(directory: Path, total: int = 100_000, repeat: int = 50) -> tuple[int, float]:
    """(stored matches, median ms of Store.rankings) on a ladder with `total` recorded matches,
    through a fresh read-only connection as `arena rankings` would open."""
    path = directory / "rankings.db"
    with Store(path) as store:
        bots = [f"b{i}" for i in range(6)]
        for b in bots:
            store.add_bot(b, remote=True)
        per_round = 15 * 2
        ladder = store.create_ladder(
            "big", "balloon", 2, bots, seed=1, rounds=-(-total // per_round)
        )
        rng = random.Random(0)
        batch = []
        for m in store.matches("big"):
            batch.append((m.index, _result(m, ladder.config, rng, 20)))
            if len(batch) == 5000:
                store.record_results("big", batch)
                batch = []
        store.record_results("big", batch)
        stored = store.rankings("big").completed
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        with Store(path, readonly=True) as reader:
            reader.rankings("big")
        times.append((time.perf_counter() - t) * 1000)
    return stored, statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        figures = {
            f"store_and_rating_ms_per_match_k{k}": round(per_match_ms(d, k), 3) for k in (2, 4)
        }
        stored, ms = rankings_ms(d)
        figures["rankings_matches"] = stored
        figures["rankings_ms_open_and_query"] = round(ms, 3)
    if "--json" in sys.argv:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
