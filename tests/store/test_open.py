"""Opening a database: Arena's mark (application_id), foreign and damaged files. Real SQLite
files, damaged on disk."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena import store as store_module
from arena.store import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    DatabaseDamaged,
    NotArenaDatabase,
    Store,
)
from arena.web.sample import build_demo
from tests.store.helpers import damage, digest, foreign_db, pragma, schema

# ------------------------------------------------------------------------- Arena's mark


def test_a_new_database_is_marked_as_arenas(tmp_path):
    Store(tmp_path / "a.db").close()
    assert pragma(tmp_path / "a.db", "application_id") == APPLICATION_ID


@pytest.mark.parametrize(
    "tables",
    [
        "CREATE TABLE notes (id INTEGER, body TEXT);",
        # Another application's table named like one of Arena's: the migration used to fail
        # half-way and leave _sqlite_migrations behind.
        "CREATE TABLE notes (id INTEGER, body TEXT); CREATE TABLE bots (id INTEGER, owner TEXT);",
    ],
)
@pytest.mark.parametrize("readonly", [False, True])
def test_a_database_of_another_application_is_refused_and_left_untouched(
    tmp_path, tables, readonly
):
    path = foreign_db(tmp_path / "other_app.db", tables)
    before = digest(path)
    with pytest.raises(NotArenaDatabase) as err:
        Store(path, readonly=readonly)
    assert "is not an Arena database" in str(err.value) and "notes" in str(err.value)
    assert "Arena leaves it untouched" in str(err.value)
    assert digest(path) == before and "_sqlite_migrations" not in schema(path)
    assert not Path(f"{path}-wal").exists()  # not even switched to WAL
    assert pragma(path, "journal_mode") == "delete"


def test_a_file_marked_by_another_application_is_refused_even_empty(tmp_path):
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA application_id = 1234")
    con.close()
    with pytest.raises(NotArenaDatabase, match="application_id is 0x4d2"):
        Store(path)
    assert schema(path) == []


def test_an_arena_database_from_before_the_mark_is_adopted(tmp_path):
    """A database made by the Arena of schema 1 (no application_id, no leases table) opens
    read-only as it is, and is migrated and marked by the first writing open."""
    path = tmp_path / "old.db"
    build_demo(str(path))
    con = sqlite3.connect(path)
    con.executescript(
        "DROP TABLE ladder_leases; DROP INDEX bots_by_version; "
        "DROP TABLE bot_owners; DROP TABLE fault_logs; DROP TABLE submissions; "
        "DROP TABLE service_settings; DROP TABLE secrets; DROP TABLE competition_steps; "
        "DROP TABLE competition_entrants; DROP TABLE competitions; DROP TABLE match_logs; "
        "DROP TABLE margin_models; DROP TABLE scrimmage_matches; DROP TABLE scrimmages; "
        "UPDATE ladders SET rating_mode = 'set'; "
        "ALTER TABLE bots DROP COLUMN status; "
        "ALTER TABLE bots DROP COLUMN family; ALTER TABLE bots DROP COLUMN version; "
        "ALTER TABLE bots DROP COLUMN note; DELETE FROM _sqlite_migrations WHERE "
        "name IN ('0002_ladder_leases', '0003_bot_versions', '0004_submissions', "
        "'0005_fault_logs', '0006_secrets', '0007_service_settings', '0008_competitions', "
        "'0009_match_logs', '0010_margin_models', '0011_scrimmages'); "
        "PRAGMA application_id = 0; PRAGMA user_version = 1;"
    )
    con.close()
    with Store(path, readonly=True) as reader:
        assert reader.schema_version() == 1
        assert [s.bot for s in reader.rankings("balloon3").standings]
        assert [b.version for b in reader.list_bots()] == [1] * 6
    assert pragma(path, "application_id") == 0  # reading changed nothing
    with Store(path) as writer:
        assert writer.schema_version() == SCHEMA_VERSION
        assert len(writer.list_bots()) == 6
    assert pragma(path, "application_id") == APPLICATION_ID


# ---------------------------------------------------------------------------- damage


def test_a_damaged_database_is_refused_at_open_and_never_written(tmp_path):
    path = tmp_path / "a.db"
    build_demo(str(path))
    damage(path)
    before = digest(path)
    for readonly in (True, False):
        with pytest.raises(DatabaseDamaged) as err:
            Store(path, readonly=readonly)
        message = str(err.value)
        assert f"database {path} is damaged" in message
        assert "Arena will not write to it" in message
        assert f"sqlite3 {path} .recover | sqlite3 recovered.db" in message
    assert digest(path) == before


def test_damage_met_after_open_stops_every_later_write(tmp_path, monkeypatch):
    # A file too big to check at every open: the damage is found by the query that meets it.
    monkeypatch.setattr(store_module.schema, "QUICK_CHECK_WRITE_MAX", 0)
    path = tmp_path / "a.db"
    build_demo(str(path))
    damage(path)
    store = Store(path)
    try:
        with pytest.raises(DatabaseDamaged, match="malformed"):
            store.matches("balloon3")
        with pytest.raises(DatabaseDamaged):  # the bots' pages are sound, yet no write now
            store.add_bot("late", remote=True)
    finally:
        store.close()
    con = sqlite3.connect(path)
    assert con.execute("SELECT count(*) FROM bots WHERE name = 'late'").fetchone()[0] == 0
    con.close()


def test_a_file_that_is_not_sqlite_says_so(tmp_path):
    path = tmp_path / "a.db"
    path.write_bytes(b"PK\x03\x04 a zip file, perhaps" * 200)
    with pytest.raises(store_module.StoreError, match="is not an Arena database: it is not SQLite"):
        Store(path, readonly=True)


def test_a_write_that_reads_first_holds_the_lock_so_another_process_cannot_slip_in(tmp_path):
    """A store's write transaction takes the write lock at its start. Deferred, a transaction
    that read before writing failed at its first write, at once and whatever the busy timeout,
    when another process had committed since its read (SQLITE_BUSY_SNAPSHOT): `arena serve`
    stopped so while `arena competition advance` wrote. Now the other writer waits (here, with
    no timeout, it is refused), and the store's transaction goes through."""
    db = tmp_path / "arena.db"
    Store(db).close()
    setup = sqlite3.connect(db)
    setup.execute("CREATE TABLE scratch (x INTEGER)")
    setup.commit()
    setup.close()
    store = Store(db)
    other = sqlite3.connect(db, timeout=0)  # another process's connection, as the CLI's
    try:
        with store._write() as conn:
            conn.execute("SELECT count(*) FROM scratch").fetchone()  # read first
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("INSERT INTO scratch VALUES (2)")
            conn.execute("INSERT INTO scratch VALUES (1)")  # then write: not refused
        assert other.execute("SELECT x FROM scratch").fetchall() == [(1,)]
    finally:
        other.close()
        store.close()
