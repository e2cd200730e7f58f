"""Building stores, ladders and hand-made match results for the store and ladder tests; looking
at (and damaging) database files as they are on disk."""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple

from arena.results import CRASH, TIMEOUT, Fault, MatchResult, MoveRecord, demote_faulted
from arena.store import Ladder, Store, StoredMatch
from tests.cli import ROOT

# The random example bot, by a path that works from any folder.
RANDOM = f"python {ROOT / 'example_bots' / 'random_bot.py'}"

# The bot-seed key tests give databases whose runs they compare (use_seed_key).
TEST_SEED_KEY = bytes(range(32))


def use_seed_key(db: Path, key: bytes = TEST_SEED_KEY) -> None:
    """Give the database `db` (made already) this bot-seed key. Each database makes a secret key
    of its own (arena.seeds), so bots seeded from their bot seeds play differently in two
    databases; tests that compare a run in one with a run in another (a killed and resumed
    ladder against an uninterrupted one) give both the same key, as a copy of one database
    would have."""
    con = sqlite3.connect(db)
    try:
        with con:
            updated = con.execute(
                "UPDATE secrets SET value = ? WHERE name = 'bot_seed_key'", (key,)
            ).rowcount
    finally:
        con.close()
    assert updated == 1, f"{db} has no bot-seed key to replace"


# What a migration made, removed by as_before when it forgets the migration (so that a test
# written before it need not know it).
UNDO = {
    "0008_competitions": "DROP TABLE IF EXISTS competition_steps; "
    "DROP TABLE IF EXISTS competition_entrants; DROP TABLE IF EXISTS competitions;",
}


def as_before(path: Path, migration: str, drop: str) -> int:
    """Make the database file as Arena left it before `migration` (a name of
    arena.store.schema's migrations): run `drop` (the SQL that removes what that migration and
    the later ones made, but those in UNDO), forget those migrations, and set user_version
    back. Its version."""
    from arena.store.schema import _MIGRATION_STEPS

    before = [name for name, _ in _MIGRATION_STEPS].index(migration)
    con = sqlite3.connect(path)
    try:
        con.executescript(drop)
        for name, _ in _MIGRATION_STEPS[before:]:
            con.executescript(UNDO.get(name, ""))
            con.execute("DELETE FROM _sqlite_migrations WHERE name = ?", (name,))
        con.execute(f"PRAGMA user_version = {before}")
        con.commit()
    finally:
        con.close()
    return before


def new_store(tmp_path: Path, name: str = "arena.db") -> Store:
    return Store(tmp_path / name)


def add_remote_bots(store: Store, n: int, prefix: str = "bot") -> list[str]:
    names = [f"{prefix}{i}" for i in range(n)]
    for name in names:
        store.add_bot(name, remote=True)
    return names


def make_result(
    match: StoredMatch, config: dict, scores: tuple[int, ...], faults: tuple[Fault, ...] = ()
) -> MatchResult:
    ranks = demote_faulted(scores, {f.seat for f in faults})
    moves = tuple(MoveRecord(i % len(scores), i, 1.25) for i in range(6))
    return MatchResult(
        match_id=f"{match.ladder}:{match.index}",
        config=config,
        seed=match.seed,
        seat_names=match.seats,
        scores=scores,
        ranks=ranks,
        faults=faults,
        moves=moves,
        started_at=1_700_000_000.0 + match.index,
        finished_at=1_700_000_000.5 + match.index,
    )


def random_results(
    matches: list[StoredMatch], config: dict, seed: int, skill: dict[str, int] | None = None
) -> dict[int, MatchResult]:
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


class LadderWithResults(NamedTuple):
    store: Store
    bots: list[str]
    ladder: Ladder
    matches: list[StoredMatch]
    results: dict[int, MatchResult]  # by match index, none recorded yet


def ladder_with_results(
    tmp_path: Path,
    bots: int,
    table_size: int,
    results_seed: int,
    db: str = "arena.db",
    **ladder: Any,
) -> LadderWithResults:
    """A new store (file `db`) with `bots` remote bots in the Balloon ladder "l" of tables of
    `table_size` (create_ladder's other arguments: `ladder`), its matches, and a result for
    each (random_results, seeded with `results_seed`)."""
    store = new_store(tmp_path, db)
    names = add_remote_bots(store, bots)
    made = store.create_ladder("l", "balloon", table_size, names, **ladder)
    matches = store.matches("l")
    results = random_results(matches, made.config, results_seed)
    return LadderWithResults(store, names, made, matches, results)


# ------------------------------------------------------------------ files as found on disk


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pragma(path: Path, name: str):
    con = sqlite3.connect(path)
    try:
        return con.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        con.close()


def schema(path: Path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return [r[0] for r in con.execute("SELECT name FROM sqlite_master ORDER BY name")]
    finally:
        con.close()


def foreign_db(path: Path, tables: str = "CREATE TABLE notes (id INTEGER, body TEXT);") -> Path:
    con = sqlite3.connect(path)
    con.executescript(tables + "INSERT INTO notes VALUES (1, 'mine');")
    con.commit()
    con.close()
    return path


def damage(path: Path, table: str = "matches", size: int = 8192) -> None:
    """Overwrite `size` bytes from the root page of `table` (as a disk or a stray write would)."""
    con = sqlite3.connect(path)
    root, page = con.execute(
        "SELECT rootpage, (SELECT page_size FROM pragma_page_size) "
        "FROM sqlite_master WHERE name = ?",
        (table,),
    ).fetchone()
    con.close()
    with open(path, "r+b") as f:
        f.seek((root - 1) * page)
        f.write(bytes(range(256)) * (size // 256))
