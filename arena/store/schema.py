"""The database file: the schema and its migrations, and opening a file safely (Arena's mark,
PRAGMA application_id; quick_check; WAL; read-only and immutable opens). `StoreFile` owns the
one connection and the write transaction every other part of the store writes in."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from arena.results import MATCH_STATUSES

from .errors import DatabaseDamaged, NotArenaDatabase, SchemaTooNew, StoreError, describe_error

if TYPE_CHECKING:
    import sqlite_utils

DEFAULT_PATH = "arena.db"

# PRAGMA application_id of an Arena database ("Aren"): a SQLite file without it that holds
# tables is another application's (or an Arena database from before the mark: adopted).
APPLICATION_ID = 0x4172656E
# PRAGMA quick_check reads the whole file (~5-10 ms a MB): it runs at open on files up to these
# sizes. Writing opens check more, since writing to a damaged file spreads the damage.
QUICK_CHECK_READ_MAX = 4 << 20
QUICK_CHECK_WRITE_MAX = 4 << 20  # as for reading: a check at every CLI write must stay cheap


def _m0001_initial(db: sqlite_utils.Database) -> None:
    statuses = ", ".join(f"'{s}'" for s in MATCH_STATUSES)
    db.executescript(f"""
    CREATE TABLE bots (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        command TEXT,
        directory TEXT,
        remote INTEGER NOT NULL DEFAULT 0,
        token_hash TEXT UNIQUE,
        created REAL NOT NULL,
        suspended INTEGER NOT NULL DEFAULT 0,
        suspended_reason TEXT,
        removed REAL
    );
    CREATE TABLE ladders (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        table_size INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        rounds INTEGER NOT NULL,
        rating_mode TEXT NOT NULL,
        settings TEXT NOT NULL,
        created REAL NOT NULL,
        num_matches INTEGER NOT NULL DEFAULT 0,
        completed INTEGER NOT NULL DEFAULT 0,
        rated_through INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE ladder_bots (
        ladder_id INTEGER NOT NULL REFERENCES ladders(id),
        position INTEGER NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        PRIMARY KEY (ladder_id, position),
        UNIQUE (ladder_id, bot_id)
    );
    CREATE TABLE matches (
        id INTEGER PRIMARY KEY,
        ladder_id INTEGER NOT NULL REFERENCES ladders(id),
        idx INTEGER NOT NULL,
        set_index INTEGER NOT NULL,
        round INTEGER NOT NULL,
        rotation INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        seats TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ({statuses})),
        attempts INTEGER NOT NULL DEFAULT 0,
        node TEXT,
        started REAL,
        finished REAL,
        duration_ms REAL,
        match_key TEXT,
        reason TEXT,
        engine_version TEXT,
        rated INTEGER NOT NULL DEFAULT 0,
        rating_note TEXT,
        replay TEXT,
        UNIQUE (ladder_id, idx)
    );
    CREATE INDEX matches_by_status ON matches (ladder_id, status, idx);
    CREATE TABLE results (
        match_id INTEGER NOT NULL REFERENCES matches(id), seat INTEGER NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        score INTEGER NOT NULL, rank INTEGER NOT NULL,
        faults INTEGER NOT NULL, fault_kinds TEXT NOT NULL,
        PRIMARY KEY (match_id, seat)
    );
    CREATE INDEX results_by_bot ON results (bot_id);
    CREATE TABLE faults (
        id INTEGER PRIMARY KEY,
        match_id INTEGER NOT NULL REFERENCES matches(id),
        seat INTEGER NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        kind TEXT NOT NULL,
        move INTEGER NOT NULL,
        elapsed_ms REAL NOT NULL,
        detail TEXT NOT NULL
    );
    CREATE INDEX faults_by_match ON faults (match_id);
    CREATE TABLE infra_failures (
        id INTEGER PRIMARY KEY,
        match_id INTEGER NOT NULL REFERENCES matches(id),
        attempt INTEGER NOT NULL,
        node TEXT,
        detail TEXT NOT NULL,
        at REAL NOT NULL
    );
    CREATE INDEX infra_failures_by_match ON infra_failures (match_id);
    CREATE TABLE ratings (
        ladder_id INTEGER NOT NULL REFERENCES ladders(id),
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        conservative REAL NOT NULL,
        matches INTEGER NOT NULL DEFAULT 0,
        wins INTEGER NOT NULL DEFAULT 0,
        score_sum INTEGER NOT NULL DEFAULT 0,
        faults INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (ladder_id, bot_id)
    );
    CREATE INDEX ratings_by_rank ON ratings (ladder_id, conservative DESC);
    CREATE TABLE rating_history (
        match_id INTEGER NOT NULL REFERENCES matches(id),
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        PRIMARY KEY (match_id, bot_id)
    );
    CREATE INDEX rating_history_by_bot ON rating_history (bot_id, match_id);
    PRAGMA user_version = 1;
    """)


def _m0002_ladder_leases(db: sqlite_utils.Database) -> None:
    # Keyed by name: a run takes the lease before it creates the ladder. What the columns mean
    # and how a dead holder is told from a live one: arena/ladder/lease.py.
    db.executescript("""
    CREATE TABLE ladder_leases (
        ladder TEXT PRIMARY KEY,
        run TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        machine TEXT NOT NULL,
        pid_start INTEGER,
        since REAL NOT NULL,
        heartbeat REAL NOT NULL
    );
    PRAGMA user_version = 2;
    """)


def _m0003_bot_versions(db: sqlite_utils.Database) -> None:
    # A version of a bot is a bot row of its own (rated, scheduled and recorded as any bot):
    # `family` is the bot's name, `version` counts from 1. Version 1 keeps the plain name (so
    # existing ladders and replays stay valid); version N >= 2 is named NAME@N (registry.py).
    db.executescript("""
    ALTER TABLE bots ADD COLUMN family TEXT;
    ALTER TABLE bots ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE bots ADD COLUMN note TEXT;
    UPDATE bots SET family = name;
    CREATE UNIQUE INDEX bots_by_version ON bots (family, version);
    PRAGMA user_version = 3;
    """)


def _m0004_submissions(db: sqlite_utils.Database) -> None:
    # Submitted versions (arena/service/submissions.py): a version's status (verifying, failed,
    # active, retired; every earlier version is active), the owner keys of bots (one per bot,
    # kept as a hash, apart from the play tokens), and each upload's digest and verification.
    db.executescript("""
    ALTER TABLE bots ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
    CREATE TABLE bot_owners (
        family TEXT PRIMARY KEY,
        key_hash TEXT NOT NULL,
        created REAL NOT NULL
    );
    CREATE TABLE submissions (
        bot TEXT PRIMARY KEY,
        family TEXT NOT NULL,
        version INTEGER NOT NULL,
        digest TEXT NOT NULL,
        submitted REAL NOT NULL,
        verdict TEXT,
        log_excerpt TEXT,
        opponents TEXT,
        replay TEXT,
        finished REAL
    );
    CREATE INDEX submissions_by_digest ON submissions (family, digest);
    PRAGMA user_version = 4;
    """)


def _m0005_fault_logs(db: sqlite_utils.Database) -> None:
    # The end of a launched bot's log when its seat faulted, one per faulted seat of a match:
    # private to the bot's owner and the organiser (arena/web/owners.py decides who may read
    # it); no public query reads this table (docs/web.md).
    db.executescript("""
    CREATE TABLE fault_logs (
        match_id INTEGER NOT NULL REFERENCES matches(id),
        seat INTEGER NOT NULL,
        excerpt TEXT NOT NULL,
        PRIMARY KEY (match_id, seat)
    );
    PRAGMA user_version = 5;
    """)


def _m0006_secrets(db: sqlite_utils.Database) -> None:
    # The store's private secrets: the key of the bot seeds (arena.seeds), made here, with the
    # database or at the first writing open of an older one. No query other than
    # Store.bot_seed_key reads this table: no browse query, page, API, replay, report or log.
    import os

    db.execute("CREATE TABLE secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL)")
    db.execute("INSERT INTO secrets (name, value) VALUES (?, ?)", (BOT_SEED_KEY, os.urandom(32)))
    db.execute("PRAGMA user_version = 6")


# The secrets table's row of the bot seeds' key.
BOT_SEED_KEY = "bot_seed_key"


def _m0007_service_settings(db: sqlite_utils.Database) -> None:
    # Settings of `arena serve` that hold across its restarts, by name (uploads per day:
    # quotas.py). A value is JSON.
    db.executescript("""
    CREATE TABLE service_settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX submissions_by_time ON submissions (family, submitted);
    PRAGMA user_version = 7;
    """)


def _m0008_competitions(db: sqlite_utils.Database) -> None:
    # Competitions (competitions.py): the definition and phase, each phase step with its time,
    # the entrants fixed at the freeze; once published, the standings and the results archive,
    # which the trigger keeps as they are.
    db.executescript("""
    CREATE TABLE competitions (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        game TEXT NOT NULL,
        table_size INTEGER NOT NULL,
        options TEXT NOT NULL,
        config TEXT NOT NULL,
        created REAL NOT NULL,
        freeze_at REAL NOT NULL,
        finals_at REAL NOT NULL,
        phase TEXT NOT NULL CHECK (phase IN ('open', 'frozen', 'finals', 'published')),
        finals_end TEXT,
        standings TEXT,
        archive BLOB
    );
    CREATE TABLE competition_steps (
        competition_id INTEGER NOT NULL REFERENCES competitions(id),
        phase TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (competition_id, phase)
    );
    CREATE TABLE competition_entrants (
        competition_id INTEGER NOT NULL REFERENCES competitions(id),
        position INTEGER NOT NULL,
        family TEXT NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        PRIMARY KEY (competition_id, position),
        UNIQUE (competition_id, family)
    );
    CREATE TRIGGER competitions_published_stay BEFORE UPDATE ON competitions
    WHEN OLD.phase = 'published'
    BEGIN SELECT RAISE(ABORT, 'a published competition cannot be changed'); END;
    PRAGMA user_version = 8;
    """)


def _m0009_match_logs(db: sqlite_utils.Database) -> None:
    # What each launched bot wrote during each match, split by its moves (arena.store.match_log:
    # JSON), one row per launched seat: private as fault_logs (arena/web/owners.py decides who
    # may read it; no public query reads this table). `bytes` and `created` serve the rotation
    # the organiser sets (Store.prune_match_logs).
    db.executescript("""
    CREATE TABLE match_logs (
        match_id INTEGER NOT NULL REFERENCES matches(id),
        seat INTEGER NOT NULL,
        bot_id INTEGER NOT NULL,
        log TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        created REAL NOT NULL,
        PRIMARY KEY (match_id, seat)
    );
    CREATE INDEX match_logs_by_age ON match_logs (created);
    PRAGMA user_version = 9;
    """)


def _m0010_margin_models(db: sqlite_utils.Database) -> None:
    # A margins-mode ladder's rating model (arena.margins), kept whole: every bot's mean and the
    # full covariance, and the noise estimates (MarginModel.dumps). The ratings table holds each
    # bot's mean and sigma from it, for the queries that rank.
    db.executescript("""
    CREATE TABLE margin_models (
        ladder_id INTEGER PRIMARY KEY REFERENCES ladders(id),
        state BLOB NOT NULL
    );
    PRAGMA user_version = 10;
    """)


def _m0011_scrimmages(db: sqlite_utils.Database) -> None:
    # Scrimmages (scrimmages.py): unrated duplicate sets an owner asks for, with their schedule
    # and, as they are played, each match's result and replay. No ladder's: nothing public
    # reads these tables.
    db.executescript("""
    CREATE TABLE scrimmages (
        id INTEGER PRIMARY KEY,
        family TEXT NOT NULL,
        bot TEXT NOT NULL,
        opponents TEXT NOT NULL,
        sets INTEGER NOT NULL,
        ladder TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
        requested REAL NOT NULL,
        finished REAL,
        note TEXT
    );
    CREATE INDEX scrimmages_by_family ON scrimmages (family, requested);
    CREATE TABLE scrimmage_matches (
        scrimmage_id INTEGER NOT NULL REFERENCES scrimmages(id),
        idx INTEGER NOT NULL,
        set_index INTEGER NOT NULL,
        rotation INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        seats TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
        scores TEXT,
        ranks TEXT,
        faults TEXT,
        replay TEXT,
        note TEXT,
        PRIMARY KEY (scrimmage_id, idx)
    );
    PRAGMA user_version = 11;
    """)


# A reader of a database from before versions or submissions (which it cannot migrate) sees
# its bots as the migrations would make them: each its own version 1, active. A TEMP view is the
# connection's own (it writes nothing to the file) and is found before the file's table of the
# same name.
_BOTS_COLUMNS_ADDED = {
    "family": "name AS family",
    "version": "1 AS version",
    "note": "NULL AS note",
    "status": "'active' AS status",
}


# Each migration ends by setting PRAGMA user_version to its number; add one, bump this.
SCHEMA_VERSION = 11
# The oldest schema the reading queries work on: a read-only open (which cannot migrate, say in
# a read-only folder) accepts it. Raise it when a migration changes what they read.
READABLE_FROM = 1
_MIGRATION_STEPS = (
    ("0001_initial", _m0001_initial),
    ("0002_ladder_leases", _m0002_ladder_leases),
    ("0003_bot_versions", _m0003_bot_versions),
    ("0004_submissions", _m0004_submissions),
    ("0005_fault_logs", _m0005_fault_logs),
    ("0006_secrets", _m0006_secrets),
    ("0007_service_settings", _m0007_service_settings),
    ("0008_competitions", _m0008_competitions),
    ("0009_match_logs", _m0009_match_logs),
    ("0010_margin_models", _m0010_margin_models),
    ("0011_scrimmages", _m0011_scrimmages),
)
_MIGRATION_NAMES = tuple(name for name, _ in _MIGRATION_STEPS)
# The tables of the first migration: with it recorded as applied, an Arena database from before
# the application_id mark.
_ARENA_TABLES = frozenset(
    {
        "bots",
        "ladders",
        "ladder_bots",
        "matches",
        "results",
        "faults",
        "infra_failures",
        "ratings",
        "rating_history",
        "_sqlite_migrations",
    }
)
_MIGRATION_SET = "arena"


# sqlite-utils imports pandas and numpy when they are installed (numpy comes with the `ray`
# extra), only to accept their types in inserts, which Arena never does. With this switch on they
# are hidden from it while it is imported (they stay importable afterwards). What it buys, with
# both installed (sqlite-utils 4.2.1, numpy 2.4, pandas 3.1; `python -X importtime -c "import
# sqlite_utils"`, cumulative, three runs on a busy 2-core machine): 585, 816, 711 ms as it is,
# 307, 201, 187 ms with them hidden: 0.3 to 0.6 s off every command that writes. Without
# them installed (Arena's own environment) it changes nothing.
HIDE_PANDAS_FROM_SQLITE_UTILS = True


def _sqlite_utils():
    """sqlite-utils, imported on first use: only opening for writing needs it, and a read-only
    command (`arena rankings`) starts ~40 ms sooner without it (pandas and numpy hidden from it:
    HIDE_PANDAS_FROM_SQLITE_UTILS)."""
    import sys

    if "sqlite_utils" not in sys.modules:
        hidden = [
            name
            for name in ("pandas", "numpy")
            if HIDE_PANDAS_FROM_SQLITE_UTILS and name not in sys.modules
        ]
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]  # `import name` raises
        try:
            import sqlite_utils  # noqa: F401
        finally:
            for name in hidden:
                sys.modules.pop(name, None)
    return sys.modules["sqlite_utils"]


@functools.cache
def _migrations():
    migrations = _sqlite_utils().Migrations(_MIGRATION_SET)
    for name, step in _MIGRATION_STEPS:
        migrations(name=name)(step)
    return migrations


class _ReadOnlyDatabase:
    """The part of sqlite_utils.Database that the store's queries use, over a read-only
    connection, so that reading never imports sqlite-utils."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def execute(
        self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ()
    ) -> sqlite3.Cursor:
        return self.conn.execute(sql, parameters)

    def close(self) -> None:
        self.conn.close()


class StoreFile:
    """One SQLite connection to an Arena database, opened as Store's docstring says; use it from
    one thread. Subclasses write through `_write()`."""

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_PATH,
        *,
        timeout: float = 5.0,
        readonly: bool = False,
    ):
        self.path = str(path)
        self.readonly = readonly
        file = Path(self.path)
        if not file.parent.is_dir():
            raise StoreError(
                f"cannot open database {self.path}: directory {file.parent} does not exist; "
                "create it, or choose another path with --db"
            )
        if readonly and not file.is_file():
            raise StoreError(
                f"there is no database at {self.path} (nothing stored yet); start "
                "one with arena bot add or arena ladder run, or choose another "
                "path with --db"
            )
        self.damaged: DatabaseDamaged | None = None  # once seen, nothing more is written
        try:
            conn = self._connect(file, timeout)
        except sqlite3.Error as exc:
            raise describe_error(self.path, exc) from exc
        try:
            if readonly:
                self.db: Any = _ReadOnlyDatabase(conn)
            else:
                self.db = _sqlite_utils().Database(conn, execute_plugins=False)
            self._open(file)
        except sqlite3.Error as exc:
            conn.close()
            raise describe_error(self.path, exc) from exc
        except BaseException:
            conn.close()
            raise

    def _connect(self, file: Path, timeout: float) -> sqlite3.Connection:
        if not self.readonly:
            return sqlite3.connect(self.path, timeout=timeout)
        uri = file.resolve().as_uri()
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=timeout)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.Error as exc:
            conn.close()
            # A WAL database needs its -shm file, which a reader cannot make in a folder it may
            # not write to. Opened as immutable, SQLite needs none; that is only right when no
            # log holds commits the file lacks (a writer could not run here anyway).
            wal = Path(f"{file}-wal")
            if (
                not isinstance(exc, sqlite3.OperationalError)
                or os.access(file.parent, os.W_OK)
                or (wal.exists() and wal.stat().st_size > 0)
            ):
                raise
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=timeout)

    def _open(self, file: Path) -> None:
        # Nothing is written before the file is known to be Arena's (or empty) and sound.
        adopt = self._check_identity()
        self._check_integrity(file)
        version = self.schema_version()
        unknown = [m for m in self._applied_migrations() if m not in _MIGRATION_NAMES]
        if version > SCHEMA_VERSION or unknown:
            raise SchemaTooNew(self.path, version, SCHEMA_VERSION, unknown)
        self.db.execute("PRAGMA foreign_keys = ON")
        if self.readonly:
            if version < READABLE_FROM:
                raise StoreError(
                    f"database {self.path} has schema version {version} and needs upgrading to "
                    f"{SCHEMA_VERSION}; open it once for writing (any arena command that writes)"
                )
            columns = {row[1] for row in self.db.execute("PRAGMA main.table_info(bots)")}
            added = [sql for column, sql in _BOTS_COLUMNS_ADDED.items() if column not in columns]
            if added:
                self.db.execute(
                    f"CREATE TEMP VIEW bots AS SELECT *, {', '.join(added)} FROM main.bots"
                )
            return
        # WAL: readers never block the writer nor the writer them. synchronous=NORMAL: in WAL a
        # commit survives a killed process; only a power cut can lose the last commits.
        self.db.enable_wal()
        self.db.execute("PRAGMA synchronous = NORMAL")
        _migrations().apply(self.db)
        if adopt:
            self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def _check_identity(self) -> bool:
        """Refuse a SQLite file of another application (NotArenaDatabase). True when the file
        is to be marked as Arena's: it is empty, or an Arena database from before the mark."""
        app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        if app_id == APPLICATION_ID:
            return False
        if app_id != 0:
            raise NotArenaDatabase(
                f"{self.path} belongs to another application (its SQLite application_id is "
                f"{app_id:#x}, not Arena's {APPLICATION_ID:#x}); Arena leaves it untouched. "
                "Choose another file with --db (a new one is created)"
            )
        tables = {
            name
            for (name,) in self.db.execute(
                "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            )
        }
        if not tables or (_ARENA_TABLES <= tables and "0001_initial" in self._applied_migrations()):
            return True
        shown = ", ".join(sorted(tables)[:6]) + (", ..." if len(tables) > 6 else "")
        raise NotArenaDatabase(
            f"{self.path} is not an Arena database: it is a SQLite database of something else "
            f"(it holds {shown}); Arena leaves it untouched. Choose another file with --db "
            "(a new one is created)"
        )

    def _check_integrity(self, file: Path) -> None:
        try:
            size = file.stat().st_size
        except OSError:
            return  # a new database: nothing to check
        if size > (QUICK_CHECK_READ_MAX if self.readonly else QUICK_CHECK_WRITE_MAX):
            return  # too big to read at every open: damage shows as errors on use
        problems = [row[0] for row in self.db.execute("PRAGMA quick_check(3)").fetchall()]
        if problems != ["ok"]:
            raise DatabaseDamaged(self.path, "; ".join(problems))

    def _applied_migrations(self) -> list[str]:
        # As sqlite_utils.Migrations.applied, in plain SQL: a read-only open does not import it.
        if (
            self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlite_migrations'"
            ).fetchone()
            is None
        ):
            return []
        return [
            name
            for (name,) in self.db.execute(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid",
                [_MIGRATION_SET],
            )
        ]

    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def has_table(self, table: str) -> bool:
        """Whether the database has `table` (a read-only open of an older schema, which cannot
        migrate, may lack the newer ones)."""
        return bool(
            self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
        )

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, holding the write lock from its start (BEGIN IMMEDIATE; inside
        another one, a savepoint of it). A deferred one that reads before it writes fails at
        its first write, at once and whatever the busy timeout, when another process has
        committed since its read (SQLITE_BUSY_SNAPSHOT in WAL mode): `arena serve` stopped so
        while `arena competition advance` wrote (a fresh-clone run beside two CPU spinners).
        Taking the lock first, a writer waits up to the timeout for another's to end."""
        if self.readonly:
            raise StoreError(f"database {self.path} was opened read-only; open it for writing")
        if self.damaged is not None:
            raise self.damaged
        conn = self.db.conn
        if conn.in_transaction:
            with self.db.atomic():
                yield conn
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            conn.rollback()  # a no-op if the error ended the transaction already
            raise


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_name(kind: str, name: str, error: type[StoreError]) -> None:
    """A bot's or a ladder's name as the store accepts it, or `error` saying what is allowed."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise error(
            f"{kind} name {name!r} is not allowed; use 1 to 64 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit"
        )


def one_row(db: Any, sql: str, args: Sequence[Any], missing: Exception) -> Any:
    """The first row `sql` finds on `db` (a connection or the store's database), or raise
    `missing`: the error that says what was not there and what to do."""
    row = db.execute(sql, args).fetchone()
    if row is None:
        raise missing
    return row


def now() -> float:
    return time.time()
