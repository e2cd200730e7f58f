"""Building stores, ladders and hand-made match results for the store and ladder tests."""

from __future__ import annotations

import random
from pathlib import Path

from arena.results import CRASH, TIMEOUT, Fault, MatchResult, MoveRecord, demote_faulted
from arena.store import Store, StoredMatch


def new_store(tmp_path: Path, name: str = "arena.db") -> Store:
    return Store(tmp_path / name)


def add_remote_bots(store: Store, n: int, prefix: str = "bot") -> list[str]:
    names = [f"{prefix}{i}" for i in range(n)]
    for name in names:
        store.add_bot(name, remote=True)
    return names


def make_result(match: StoredMatch, config: dict, scores: tuple[int, ...],
                faults: tuple[Fault, ...] = ()) -> MatchResult:
    ranks = demote_faulted(scores, {f.seat for f in faults})
    moves = tuple(MoveRecord(i % len(scores), i, 1.25) for i in range(6))
    return MatchResult(
        match_id=f"{match.ladder}:{match.index}", config=config, seed=match.seed,
        seat_names=match.seats, scores=scores, ranks=ranks, faults=faults, moves=moves,
        started_at=1_700_000_000.0 + match.index, finished_at=1_700_000_000.5 + match.index)


def random_results(matches: list[StoredMatch], config: dict, seed: int,
                   skill: dict[str, int] | None = None) -> dict[int, MatchResult]:
    """A result for each match: scores drawn from the bots' skills, ties and faults included."""
    rng = random.Random(seed)
    out = {}
    for m in matches:
        scores = tuple(rng.randrange(8) + (skill or {}).get(bot, 0) for bot in m.seats)
        faults: tuple[Fault, ...] = ()
        if rng.random() < 0.1:
            seat = rng.randrange(len(m.seats))
            faults = (Fault(seat, rng.choice((TIMEOUT, CRASH)), 3, 1000.0, "test fault"),)
        out[m.index] = make_result(m, config, scores, faults)
    return out
