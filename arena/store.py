"""The store: every bot, ladder, match, result, fault and rating, in one SQLite file.

SQLite through sqlite-utils 4. Owns the schema and its migrations, the bot registry (tokens kept
only as hashes), ladder creation (the schedule written as pending matches), the match lifecycle
(start, result, infrastructure failure) and the ratings applied in schedule order, and the
rankings query. Schema and decisions: docs/store.md.

One writer: a `Store` owns one write connection and is used from one thread. `AsyncStore` runs a
`Store` on a dedicated writer thread and lets async code await its calls, so SQLite work never
blocks the event loop. Reads may use their own connection: `Store(path, readonly=True)`.

A match's result, its faults, its replay and the rating updates it unblocks are written in one
transaction. Ratings are applied strictly in schedule order: a match that finishes before its
predecessors waits (rated = 0) until they are done, so ratings never depend on which match
finished first, and a resumed ladder ends with the same ratings as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shlex
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, ParamSpec, Sequence, TypeVar

if TYPE_CHECKING:
    import concurrent.futures

    import sqlite_utils

    from arena.ladder.lease import Holder, Lease

from arena.ladder.ratings import (
    DEFAULT_RATING_MODE, RATING_MODES, SET_MODE, SETTLED_CONFIDENCE, Rater,
    RatingParams, SkillRating, adjacent_settled, p_better, set_ranks,
)
from arena.ladder.schedule import (
    DEFAULT_MAX_FULL_TABLES, SEED_BOUND, ScheduleError, check_ladder_shape, make_schedule,
    rotate,
)
from arena.results import ABANDONED, MatchResult
from arena.tokens import hash_token, new_token

DEFAULT_PATH = "arena.db"

# PRAGMA application_id of an Arena database ("Aren"): a SQLite file without it that holds
# tables is another application's (or an Arena database from before the mark: adopted).
APPLICATION_ID = 0x4172656E
# PRAGMA quick_check reads the whole file (~5-10 ms a MB): it runs at open on files up to these
# sizes. Writing opens check more, since writing to a damaged file spreads the damage.
QUICK_CHECK_READ_MAX = 4 << 20
QUICK_CHECK_WRITE_MAX = 4 << 20  # as for reading: a check at every CLI write must stay cheap

# Match statuses as stored.
PENDING = "pending"
RUNNING = "running"
COMPLETED = "completed"
INFRA_FAILED = "infra_failed"  # an attempt failed for a reason that is not the bots'; retried
STORE_ABANDONED = "abandoned"  # given up for good: never rated, the rating order skips it
MATCH_STATUSES = (PENDING, RUNNING, COMPLETED, INFRA_FAILED, STORE_ABANDONED)
RUNNABLE = (PENDING, INFRA_FAILED)
# A match that will not be played again: its duplicate set is finished when all of its are.
FINISHED = (COMPLETED, STORE_ABANDONED)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_REASON = 500  # characters of a suspension reason (it is shown on every bot's page)


# ---------------------------------------------------------------------------------------- errors

class StoreError(Exception):
    """Anything the store refuses or cannot do; the message says what to do about it."""


class SchemaTooNew(StoreError):
    """A database written by a newer Arena: a higher schema version (PRAGMA user_version), or
    migrations this Arena does not know (`unknown`)."""

    def __init__(self, path: str, found: int, supported: int, unknown: Sequence[str] = ()):
        self.found, self.supported, self.unknown = found, supported, tuple(unknown)
        if self.unknown:
            what = (f"has schema version {found} with migrations this Arena does not know "
                    f"({', '.join(self.unknown)})")
        else:
            what = f"has schema version {found}"
        super().__init__(
            f"database {path} {what}, but this Arena understands schema versions up to "
            f"{supported}; upgrade Arena, or choose another database with --db")


class NotArenaDatabase(StoreError):
    """A SQLite file that belongs to another application: Arena leaves it untouched."""


class DatabaseDamaged(StoreError):
    """SQLite found the file damaged (malformed pages): Arena reads what it can and never
    writes to it again."""

    def __init__(self, path: str, detail: str):
        self.detail = detail
        super().__init__(
            f"database {path} is damaged ({detail}); Arena will not write to it. Recover it: "
            f"use your last good copy of it, or save what can still be read with "
            f"`sqlite3 {path} .recover | sqlite3 recovered.db` and go on with --db recovered.db")


class StoreLocked(StoreError):
    """Another process holds the database's write lock longer than the busy timeout."""


class RegistryError(StoreError):
    """A bot registration or lookup that cannot be done."""


class InvalidBotName(RegistryError):
    pass


class DuplicateBot(RegistryError):
    pass


class UnknownBot(RegistryError):
    pass


class CommandNotFound(RegistryError):
    pass


class BadManifest(RegistryError):
    pass


class LadderError(StoreError):
    """A ladder that cannot be created, found or advanced as asked."""


class UnknownLadder(LadderError):
    pass


class InvalidLadderName(LadderError):
    pass


class LadderMismatch(LadderError):
    """A ladder of that name exists with another definition."""


class LadderBusy(LadderError):
    """Another run that is alive holds the ladder's lease (arena.ladder.lease)."""


class LeaseLost(LadderError):
    """This run's lease on a ladder was taken over by another run, which found it dead."""


class MatchStateError(LadderError):
    """A match asked to move to a status its current status does not allow, or a result that
    does not fit the scheduled match."""


P = ParamSpec("P")
R = TypeVar("R")


def describe_error(path: str, exc: sqlite3.Error) -> StoreError:
    """The StoreError, with what to do, for a SQLite error met on the database at `path`."""
    text = str(exc)
    lower = text.lower()
    if "locked" in lower or "busy" in lower:
        return StoreLocked(
            f"database {path} is locked by another process (another arena run using it?); "
            "wait for it to finish, or choose another database with --db")
    if "readonly" in lower or "read-only" in lower:
        return StoreError(
            f"database {path} is not writable ({text}); check the permissions of the file and "
            "its directory, or choose another database with --db")
    if "malformed" in lower or "corrupt" in lower:
        return DatabaseDamaged(path, text)
    if "not a database" in lower:
        return StoreError(
            f"{path} is not an Arena database: it is not SQLite, or its first page is damaged "
            f"({text}). If it was an Arena database, use your last good copy of it; otherwise "
            "choose another file with --db")
    if "unable to open" in lower:
        return StoreError(
            f"cannot open database {path} ({text}); check that its directory exists and is "
            "writable, or choose another database with --db")
    if "disk" in lower or "full" in lower:
        return StoreError(f"cannot write database {path} ({text}); free some disk space")
    return StoreError(f"database {path}: {text}")


def _sqlite_errors(method: Callable[P, R]) -> Callable[P, R]:
    """Turn sqlite3 errors raised by a Store method into StoreErrors with advice."""
    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as exc:
            error = describe_error(args[0].path, exc)  # type: ignore[attr-defined]
            if isinstance(error, DatabaseDamaged):
                args[0].damaged = error  # type: ignore[attr-defined]  # no more writes
            raise error from exc
    return wrapper


# ---------------------------------------------------------------------------------------- schema

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
        match_id INTEGER NOT NULL REFERENCES matches(id),
        seat INTEGER NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        score INTEGER NOT NULL,
        rank INTEGER NOT NULL,
        faults INTEGER NOT NULL,
        fault_kinds TEXT NOT NULL,
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


# Each migration ends by setting PRAGMA user_version to its number; add one, bump this.
SCHEMA_VERSION = 2
# The oldest schema the reading queries work on: a read-only open (which cannot migrate, say in
# a read-only folder) accepts it. Raise it when a migration changes what they read.
READABLE_FROM = 1
_MIGRATION_STEPS = (("0001_initial", _m0001_initial),
                    ("0002_ladder_leases", _m0002_ladder_leases))
_MIGRATION_NAMES = tuple(name for name, _ in _MIGRATION_STEPS)
# The tables of the first migration: with it recorded as applied, an Arena database from before
# the application_id mark.
_ARENA_TABLES = frozenset({"bots", "ladders", "ladder_bots", "matches", "results", "faults",
                           "infra_failures", "ratings", "rating_history", "_sqlite_migrations"})
_MIGRATION_SET = "arena"


def _sqlite_utils():
    """sqlite-utils, imported on first use: only opening for writing needs it, and a read-only
    command (`arena rankings`) starts ~40 ms sooner without it. It is imported without pandas
    and numpy: sqlite-utils imports them when installed (to accept their types in inserts, which
    Arena never does), at a quarter of a second's cost; they stay importable afterwards."""
    import sys

    if "sqlite_utils" not in sys.modules:
        blocked = [name for name in ("pandas", "numpy") if name not in sys.modules]
        for name in blocked:
            sys.modules[name] = None  # type: ignore[assignment]  # `import name` raises
        try:
            import sqlite_utils  # noqa: F401
        finally:
            for name in blocked:
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

    def execute(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, parameters)

    def close(self) -> None:
        self.conn.close()


# ------------------------------------------------------------------------------------ records

@dataclass(frozen=True, slots=True)
class Bot:
    id: int
    name: str
    command: str | None
    directory: str | None  # the working directory its command runs in
    remote: bool
    created: float
    suspended: bool
    suspended_reason: str | None
    removed: float | None

    @property
    def argv(self) -> list[str]:
        """The command split into arguments (empty for a remote bot)."""
        return shlex.split(self.command) if self.command else []


@dataclass(frozen=True, slots=True)
class BotAccess:
    """A registered bot's current token (as its hash) and suspension: what a stream that
    authenticated earlier is checked against (Store.bot_access)."""
    token_hash: str | None
    suspended: bool
    suspended_reason: str | None


@dataclass(frozen=True, slots=True)
class Ladder:
    id: int
    name: str
    game: str
    options: dict[str, Any]
    table_size: int
    seed: int
    rounds: int
    rating_mode: str
    settings: dict[str, Any]
    created: float
    bots: tuple[str, ...]  # in ladder order (the order the schedule was drawn with)
    num_matches: int
    completed: int
    rated_through: int  # matches with index below this have been rated (or skipped)

    @property
    def config(self) -> dict[str, Any]:
        """The Game.config() of the ladder's matches."""
        return {"game": self.game, "num_players": self.table_size, "options": dict(self.options)}

    @property
    def rating_params(self) -> RatingParams:
        return RatingParams.from_dict(self.settings.get("rating_params", {}))


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A scheduled match as stored; `seats` are bot names."""

    ladder: str
    index: int
    set_index: int
    round: int
    rotation: int
    seed: int
    seats: tuple[str, ...]
    status: str
    attempts: int
    node: str | None
    started: float | None
    finished: float | None
    rated: bool
    rating_note: str | None


@dataclass(frozen=True, slots=True)
class RecordOutcome:
    """What a record call did: whether it stored anything (False when the match had already been
    recorded: a result is never counted twice) and which match indexes got rated by it."""

    recorded: bool
    rated: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    bot: str
    conservative: float
    mu: float
    sigma: float
    matches: int
    mean_score: float | None
    wins: int
    faults: int
    # P(this bot's skill > the next one's), from the posteriors (ratings.p_better); None last.
    p_better_than_next: float | None
    settled: bool  # better than the next and worse than the previous at the confidence

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "bot": self.bot, "conservative": self.conservative,
                "mu": self.mu, "sigma": self.sigma, "matches": self.matches,
                "mean_score": self.mean_score, "wins": self.wins, "faults": self.faults,
                "p_better_than_next": self.p_better_than_next, "settled": self.settled}


@dataclass(frozen=True, slots=True)
class Rankings:
    ladder: str
    game: str
    options: dict[str, Any]
    table_size: int
    rating_mode: str
    scheduled: int
    completed: int
    rated: int
    standings: tuple[Standing, ...] = field(default=())
    confidence: float = SETTLED_CONFIDENCE  # at which a standing is `settled`

    @property
    def all_settled(self) -> bool:
        """Every rank settled: each bot better than the next at the confidence."""
        return all(s.settled for s in self.standings)

    def to_dict(self) -> dict[str, Any]:
        return {"ladder": self.ladder, "game": self.game, "options": self.options,
                "table_size": self.table_size, "rating_mode": self.rating_mode,
                "scheduled": self.scheduled, "completed": self.completed, "rated": self.rated,
                "confidence": self.confidence, "all_settled": self.all_settled,
                "standings": [s.to_dict() for s in self.standings]}


# ------------------------------------------------------------------------------------ helpers

# hmac, secrets and arena.botcommand are imported where they are used (and hashlib by
# arena.tokens): loading them (OpenSSL's hashes, tomllib, shutil) is ~10 ms of a command that
# only reads, `arena rankings`.

def _same_digest(a: str, b: str) -> bool:
    import hmac

    return hmac.compare_digest(a, b)  # constant time: timing tells nothing of a real token


def _random_seed() -> int:
    import secrets

    return secrets.randbelow(SEED_BOUND)


def encode_replay(result: MatchResult) -> str:
    """The compact JSON replay stored with a match: arena.replay's format without the per-seat
    views (they are recomputed from config, seed and moves)."""
    from arena import replay

    return json.dumps(replay.to_dict(result, with_views=False), separators=(",", ":"))


def _check_name(kind: str, name: str, error: type[StoreError]) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise error(
            f"{kind} name {name!r} is not allowed; use 1 to 64 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit")


def check_bot_name(name: str) -> None:
    _check_name("bot", name, InvalidBotName)


def check_ladder_name(name: str) -> None:
    _check_name("ladder", name, InvalidLadderName)


def resolve_command(command: str, cwd: str | os.PathLike[str]) -> list[str]:
    """Check a bot command as arena.botcommand does, raising the registry's CommandNotFound."""
    from arena import botcommand

    try:
        return botcommand.check_command(command, cwd)
    except botcommand.BotCommandError as exc:
        raise CommandNotFound(str(exc)) from None


def read_manifest(directory: str | os.PathLike[str]) -> str:
    """A bot directory's command, raising the registry's BadManifest."""
    from arena import botcommand

    try:
        return botcommand.read_manifest(directory)
    except botcommand.BotCommandError as exc:
        raise BadManifest(str(exc)) from None


def _now() -> float:
    return time.time()


# -------------------------------------------------------------------------------------- store

@dataclass(slots=True)
class _LadderInfo:
    """What recording needs of a ladder and never changes once it exists."""

    id: int
    name: str
    table_size: int
    rating_mode: str
    rater: Rater
    bot_names: dict[int, str]


class Store:
    """The SQLite store. Owns one connection; use it from one thread (see AsyncStore).

    `path` defaults to arena.db in the working directory. `timeout` is how long a write waits for
    another process's lock before StoreLocked. `readonly` opens without writing anything (no
    migration, no WAL switch): for queries alongside a running writer, and for a database in a
    folder this user may not write to (opened immutable there).

    Opening refuses a SQLite file of another application (NotArenaDatabase) before writing
    anything, and a damaged one (DatabaseDamaged, from PRAGMA quick_check on files small enough
    to check at every open, or from any later SQLite error saying so: no write follows it).
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_PATH, *, timeout: float = 5.0,
                 readonly: bool = False):
        self.path = str(path)
        self.readonly = readonly
        self._ladders: dict[str, _LadderInfo] = {}
        file = Path(self.path)
        if not file.parent.is_dir():
            raise StoreError(
                f"cannot open database {self.path}: directory {file.parent} does not exist; "
                "create it, or choose another path with --db")
        if readonly and not file.is_file():
            raise StoreError(f"there is no database at {self.path} (nothing stored yet); start "
                             "one with arena bot add or arena ladder run, or choose another "
                             "path with --db")
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
            if (not isinstance(exc, sqlite3.OperationalError) or os.access(file.parent, os.W_OK)
                    or (wal.exists() and wal.stat().st_size > 0)):
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
                    f"{SCHEMA_VERSION}; open it once for writing (any arena command that writes)")
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
                "Choose another file with --db (a new one is created)")
        tables = {name for (name,) in self.db.execute(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}
        if not tables or (_ARENA_TABLES <= tables
                          and "0001_initial" in self._applied_migrations()):
            return True
        shown = ", ".join(sorted(tables)[:6]) + (", ..." if len(tables) > 6 else "")
        raise NotArenaDatabase(
            f"{self.path} is not an Arena database: it is a SQLite database of something else "
            f"(it holds {shown}); Arena leaves it untouched. Choose another file with --db "
            "(a new one is created)")

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
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                           "name = '_sqlite_migrations'").fetchone() is None:
            return []
        return [name for (name,) in self.db.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid",
            [_MIGRATION_SET])]

    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self, immediate: bool = False) -> Iterator[sqlite3.Connection]:
        """A write transaction. `immediate` takes the write lock at its start, for a
        read-then-write that another process must not interleave with (a lease)."""
        if self.readonly:
            raise StoreError(f"database {self.path} was opened read-only; open it for writing")
        if self.damaged is not None:
            raise self.damaged
        if not immediate:
            with self.db.atomic():
                yield self.db.conn
            return
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            conn.rollback()  # a no-op if the error ended the transaction already
            raise

    # ------------------------------------------------------------------------ ladder leases

    @_sqlite_errors
    def acquire_lease(self, ladder: str, me: "Holder", now: float | None = None) -> "Lease":
        """Take the lease of the ladder called `ladder` (which need not exist yet) for the run
        `me`: at once if it is free or its holder is dead (arena.ladder.lease says how that is
        known), else LadderBusy naming the holder."""
        from arena.ladder.lease import Lease, holder_alive

        now = _now() if now is None else now
        with self._write(immediate=True) as conn:
            row = conn.execute(f"SELECT {_LEASE_COLUMNS} FROM ladder_leases WHERE ladder = ?",
                               (ladder,)).fetchone()
            taken_over = None
            if row is not None:
                holder, since, heartbeat = _lease_holder(row), row[5], row[6]
                if holder.run != me.run:
                    described = holder.describe(since, heartbeat, now)
                    if holder_alive(holder, heartbeat, now, me):
                        raise LadderBusy(
                            f"ladder {ladder!r} is being run by another arena process: "
                            f"{described}. Wait for it to finish, or stop it (Ctrl-C, or kill "
                            f"{holder.pid} on {holder.host}) and run this again to resume")
                    taken_over = described
            conn.execute(
                f"INSERT OR REPLACE INTO ladder_leases (ladder, {_LEASE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (ladder, me.run, me.host, me.pid, me.machine, me.pid_start, now, now))
        return Lease(ladder, me, now, taken_over)

    @_sqlite_errors
    def renew_lease(self, ladder: str, me: "Holder") -> None:
        """Record that the run `me` is alive; LeaseLost if another run has taken its lease."""
        with self._write() as conn:
            if conn.execute("UPDATE ladder_leases SET heartbeat = ? WHERE ladder = ? AND run = ?",
                            (_now(), ladder, me.run)).rowcount == 0:
                raise LeaseLost(
                    f"another run took over ladder {ladder!r} (this one had not renewed its "
                    "lease for too long and looked dead); this run stops")

    @_sqlite_errors
    def release_lease(self, ladder: str, me: "Holder") -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM ladder_leases WHERE ladder = ? AND run = ?",
                         (ladder, me.run))

    # ------------------------------------------------------------------------- bot registry

    @_sqlite_errors
    def add_bot(self, name: str, command: str | None = None, *, directory: str | None = None,
                remote: bool = False, cwd: str | os.PathLike[str] | None = None) -> str:
        """Register a bot and return its token (shown once: only its hash is stored).

        Exactly one of: `command` (run from `cwd`, default the working directory), `directory`
        (a bot directory whose arena-bot.toml gives the command, run from that directory), or
        `remote=True` (a bot its owner runs, which connects with the token)."""
        check_bot_name(name)
        if sum((command is not None, directory is not None, bool(remote))) != 1:
            raise RegistryError(
                "give exactly one of: a command, a bot directory, or remote (for a bot its "
                "owner runs)")
        run_dir: str | None = None
        if directory is not None:
            run_dir = str(Path(directory).resolve())
            command = read_manifest(run_dir)
            try:
                resolve_command(command, run_dir)
            except CommandNotFound as exc:
                from arena.botcommand import MANIFEST

                raise BadManifest(f"{Path(run_dir) / MANIFEST}: {exc}") from None
        elif command is not None:
            run_dir = str(Path(cwd or os.getcwd()).resolve())
            resolve_command(command, run_dir)
        token = new_token()
        with self._write() as conn:
            row = conn.execute("SELECT removed FROM bots WHERE name = ?", (name,)).fetchone()
            if row is not None:
                if row[0] is not None:
                    raise DuplicateBot(
                        f"a removed bot was called {name!r} and keeps its past results under "
                        "that name; choose another name")
                raise DuplicateBot(
                    f"a bot called {name!r} already exists; choose another name, or remove it "
                    "first (arena bot remove), or rotate its token (arena bot rotate-token)")
            conn.execute(
                "INSERT INTO bots (name, command, directory, remote, token_hash, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (name, command, run_dir, int(bool(remote)), hash_token(token), _now()))
        return token

    @_sqlite_errors
    def list_bots(self, include_removed: bool = False) -> list[Bot]:
        where = "" if include_removed else "WHERE removed IS NULL"
        return [_bot(row) for row in self.db.execute(
            f"SELECT {_BOT_COLUMNS} FROM bots {where} ORDER BY name")]

    @_sqlite_errors
    def get_bot(self, name: str) -> Bot:
        row = self.db.execute(
            f"SELECT {_BOT_COLUMNS} FROM bots WHERE name = ? AND removed IS NULL",
            (name,)).fetchone()
        if row is None:
            raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")
        return _bot(row)

    @_sqlite_errors
    def remove_bot(self, name: str) -> None:
        """Retire a bot: its token stops working and it leaves the bot list; its past matches,
        results and ratings stay (and keep its name, which cannot be reused)."""
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE bots SET removed = ?, token_hash = NULL "
                "WHERE name = ? AND removed IS NULL", (_now(), name))
            if cur.rowcount == 0:
                raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")

    @_sqlite_errors
    def rotate_token(self, name: str) -> str:
        """Give a bot a new token (returned once) and make the old one stop working."""
        token = new_token()
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE bots SET token_hash = ? WHERE name = ? AND removed IS NULL",
                (hash_token(token), name))
            if cur.rowcount == 0:
                raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")
        return token

    @_sqlite_errors
    def bot_for_token(self, token: str) -> Bot | None:
        """The (not removed) bot this token belongs to, or None. Suspension is the caller's
        business: the returned Bot says whether it is suspended."""
        digest = hash_token(token)
        row = self.db.execute(
            f"SELECT {_BOT_COLUMNS}, token_hash FROM bots "
            "WHERE token_hash = ? AND removed IS NULL", (digest,)).fetchone()
        if row is None or not _same_digest(row[-1], digest):
            return None
        return _bot(row[:-1])

    @_sqlite_errors
    def bot_access(self, names: Sequence[str]) -> dict[str, "BotAccess"]:
        """What the referee needs to tell whether these bots may still play (their current
        token's hash and suspension), in one query. A removed or unknown bot is left out."""
        names = list(names)
        if not names:
            return {}
        marks = ", ".join("?" * len(names))
        return {name: BotAccess(token_hash, bool(suspended), reason) for
                name, token_hash, suspended, reason in self.db.execute(
                    "SELECT name, token_hash, suspended, suspended_reason FROM bots "
                    f"WHERE removed IS NULL AND name IN ({marks})", names)}

    @_sqlite_errors
    def suspend_bot(self, name: str, reason: str | None) -> None:
        """Suspend a bot (reason given) or lift its suspension (reason None). A reason is shown
        on the public pages, so it is kept to MAX_REASON characters."""
        if reason is not None and len(reason) > MAX_REASON:
            raise RegistryError(
                f"a suspension reason is at most {MAX_REASON} characters, not {len(reason)}; "
                "say it in fewer words (the owner reads it on the bot's page)")
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE bots SET suspended = ?, suspended_reason = ? "
                "WHERE name = ? AND removed IS NULL", (int(reason is not None), reason, name))
            if cur.rowcount == 0:
                raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")

    # ------------------------------------------------------------------------------ ladders

    @_sqlite_errors
    def create_ladder(
        self,
        name: str,
        game: str,
        table_size: int,
        bots: Sequence[str],
        *,
        options: Mapping[str, Any] | None = None,
        rounds: int = 1,
        seed: int | None = None,
        rating_mode: str | None = None,
        rating_params: RatingParams | None = None,
        max_full_tables: int = DEFAULT_MAX_FULL_TABLES,
        settings: Mapping[str, Any] | None = None,
    ) -> Ladder:
        """Create a ladder and write its whole schedule as pending matches, in one transaction.

        Validates the game and its options for `table_size` players (arena.games), the bots
        (registered, not removed, distinct), the shape (2 <= k <= 5, k <= number of bots) and
        the rating mode (None: DEFAULT_RATING_MODE); any error leaves the database unchanged.
        `seed` None draws one.
        `settings` holds the runner's own settings (limits, concurrency...), stored as JSON."""
        check_ladder_name(name)
        resolved_options = _resolve_game(game, table_size, options or {})
        if rating_mode is None:
            rating_mode = DEFAULT_RATING_MODE
        if rating_mode not in RATING_MODES:
            raise LadderError(f"rating mode {rating_mode!r} is not one of {list(RATING_MODES)}")
        if len(set(bots)) != len(bots):
            raise LadderError("a ladder's bots must be distinct; a bot is listed twice")
        try:
            check_ladder_shape(len(bots), table_size, rounds)
        except ScheduleError as exc:
            raise LadderError(str(exc)) from None
        if seed is None:
            seed = _random_seed()
        params = rating_params or RatingParams()
        all_settings = dict(settings or {})
        all_settings["rating_params"] = params.to_dict()
        all_settings["max_full_tables"] = max_full_tables
        rater = Rater(params)
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM ladders WHERE name = ?", (name,)).fetchone():
                raise LadderError(f"a ladder called {name!r} already exists; choose another name")
            bot_ids = [self._bot_id(conn, b) for b in bots]
            cur = conn.execute(
                "INSERT INTO ladders (name, game, options, table_size, seed, rounds, rating_mode,"
                " settings, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (name, game, json.dumps(resolved_options), table_size, seed, rounds,
                 rating_mode, json.dumps(all_settings), _now()))
            ladder_id = int(cur.lastrowid)  # type: ignore[arg-type]
            self.db["ladder_bots"].insert_all(
                {"ladder_id": ladder_id, "position": i, "bot_id": b}
                for i, b in enumerate(bot_ids))
            start = rater.initial()
            self.db["ratings"].insert_all(
                {"ladder_id": ladder_id, "bot_id": b, "mu": start.mu, "sigma": start.sigma,
                 "conservative": rater.conservative(start)} for b in bot_ids)
            self._add_matches(conn, ladder_id, bot_ids, table_size, 0, rounds, seed,
                              max_full_tables)
        return self.get_ladder(name)

    def _add_matches(self, conn: sqlite3.Connection, ladder_id: int, bot_ids: list[int],
                     k: int, from_round: int, rounds: int, seed: int,
                     max_full_tables: int) -> None:
        schedule = make_schedule(bot_ids, k, rounds, seed, max_full_tables=max_full_tables)
        conn.executemany(
            "INSERT INTO matches (ladder_id, idx, set_index, round, rotation, seed, seats) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((ladder_id, m.index, m.set_index, m.round, m.rotation, m.seed,
              json.dumps(m.seats)) for m in schedule if m.round >= from_round))
        conn.execute("UPDATE ladders SET num_matches = ?, rounds = ? WHERE id = ?",
                     (len(schedule), rounds, ladder_id))

    # ------------------------------------------------------------ continuous (open) ladders

    @_sqlite_errors
    def ensure_open_ladder(self, name: str, game: str, table_size: int, *,
                           options: Mapping[str, Any] | None = None,
                           rating_params: RatingParams | None = None,
                           rating_mode: str = DEFAULT_RATING_MODE) -> Ladder:
        """A continuous ladder for `arena serve`: no schedule drawn in advance; bots join it
        (join_ladder) and the service appends each table it chooses as a duplicate set
        (add_set). Rated in the order matches were added, per match or per set (`rating_mode`,
        for a new ladder; an existing one keeps its own). Returns the existing one if the
        definition matches (LadderMismatch otherwise)."""
        if rating_mode not in RATING_MODES:
            raise LadderError(f"rating mode {rating_mode!r} is not one of {list(RATING_MODES)}")
        check_ladder_name(name)
        resolved = _resolve_game(game, table_size, options or {})
        try:
            ladder = self.get_ladder(name)
        except UnknownLadder:
            ladder = None
        if ladder is not None:
            if (ladder.game, ladder.table_size, ladder.options) != (game, table_size, resolved) \
                    or not ladder.settings.get("open"):
                raise LadderMismatch(
                    f"ladder {name!r} exists with another definition ({ladder.game}, tables of "
                    f"{ladder.table_size}, options {ladder.options}); choose another name")
            return ladder
        params = rating_params or RatingParams()
        settings = {"open": True, "rating_params": params.to_dict(),
                    "max_full_tables": DEFAULT_MAX_FULL_TABLES}
        with self._write() as conn:
            conn.execute(
                "INSERT INTO ladders (name, game, options, table_size, seed, rounds, rating_mode,"
                " settings, created) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)",
                (name, game, json.dumps(resolved), table_size, _random_seed(),
                 rating_mode, json.dumps(settings), _now()))
        return self.get_ladder(name)

    @_sqlite_errors
    def join_ladder(self, ladder: str, bot: str) -> bool:
        """Add a bot to a ladder with a fresh rating; False if it was already in it."""
        info = self._info(ladder)
        full = self.get_ladder(ladder)
        rater = Rater(full.rating_params)
        with self._write() as conn:
            bot_id = self._bot_id(conn, bot)
            if bot_id in info.bot_names:
                return False
            position = conn.execute("SELECT coalesce(max(position) + 1, 0) FROM ladder_bots "
                                    "WHERE ladder_id = ?", (info.id,)).fetchone()[0]
            conn.execute("INSERT INTO ladder_bots (ladder_id, position, bot_id) VALUES (?, ?, ?)",
                         (info.id, position, bot_id))
            start = rater.initial()
            conn.execute("INSERT INTO ratings (ladder_id, bot_id, mu, sigma, conservative) "
                         "VALUES (?, ?, ?, ?, ?)",
                         (info.id, bot_id, start.mu, start.sigma, rater.conservative(start)))
        info.bot_names[bot_id] = bot
        return True

    @_sqlite_errors
    def add_set(self, ladder: str, table: Sequence[str], seed: int) -> list[StoredMatch]:
        """Append a duplicate set to an open ladder: `table`'s bots (they must have joined) play
        one deal (`seed`) k times, the seats rotated as in a scheduled ladder
        (schedule.rotate), as consecutive matches sharing a new set index, rotations 0..k-1."""
        info = self._info(ladder)
        ids = {name: i for i, name in info.bot_names.items()}
        missing = [s for s in table if s not in ids]
        if missing:
            raise LadderError(f"{', '.join(missing)} did not join ladder {ladder!r}")
        k = info.table_size
        if len(table) != k or len(set(table)) != len(table):
            raise LadderError(f"a match of ladder {ladder!r} needs {k} distinct bots")
        with self._write() as conn:
            # Sets are appended, so the last match holds the highest set index so far.
            first, set_index = conn.execute(
                "SELECT l.num_matches, coalesce((SELECT set_index + 1 FROM matches WHERE "
                "ladder_id = l.id ORDER BY idx DESC LIMIT 1), 0) FROM ladders l WHERE l.id = ?",
                (info.id,)).fetchone()
            conn.executemany(
                "INSERT INTO matches (ladder_id, idx, set_index, round, rotation, seed, seats) "
                "VALUES (?, ?, ?, 0, ?, ?, ?)",
                [(info.id, first + r, set_index, r, seed,
                  json.dumps([ids[s] for s in rotate(table, r)])) for r in range(k)])
            conn.execute("UPDATE ladders SET num_matches = num_matches + ? WHERE id = ?",
                         (k, info.id))
        return [self.get_match(ladder, first + r) for r in range(k)]

    @_sqlite_errors
    def ensure_ladder(self, name: str, game: str, table_size: int, bots: Sequence[str],
                      **kwargs: Any) -> Ladder:
        """The ladder `name`: created as create_ladder does if absent; if it exists, checked
        against the request (LadderMismatch says what differs) so that running the same command
        again resumes it. Asking for more rounds than it has extends its schedule (the
        schedule with more rounds begins with the one with fewer)."""
        try:
            ladder = self.get_ladder(name)
        except UnknownLadder:
            return self.create_ladder(name, game, table_size, bots, **kwargs)
        wanted = {
            "game": game, "table size": table_size, "bots": tuple(bots),
            "options": _resolve_game(game, table_size, kwargs.get("options") or {}),
        }
        have = {"game": ladder.game, "table size": ladder.table_size, "bots": ladder.bots,
                "options": ladder.options}
        # A ladder keeps the mode it was created with: asked for none, it resumes in its own.
        if kwargs.get("rating_mode") is not None:
            wanted["rating mode"], have["rating mode"] = kwargs["rating_mode"], ladder.rating_mode
        if kwargs.get("seed") is not None:
            wanted["seed"], have["seed"] = kwargs["seed"], ladder.seed
        if kwargs.get("rating_params") is not None:
            wanted["rating parameters"] = kwargs["rating_params"]
            have["rating parameters"] = ladder.rating_params
        diff = [f"{key} is {have[key]!r}, not {wanted[key]!r}"
                for key in wanted if wanted[key] != have[key]]
        rounds = kwargs.get("rounds", ladder.rounds)
        if rounds < ladder.rounds:
            diff.append(f"rounds is {ladder.rounds}, not {rounds}")
        if diff:
            raise LadderMismatch(
                f"ladder {name!r} exists with another definition: {'; '.join(diff)}. Run it "
                "with its own definition to resume it, or choose another ladder name")
        if rounds > ladder.rounds:
            with self._write() as conn:
                ids = [r[0] for r in conn.execute(
                    "SELECT bot_id FROM ladder_bots WHERE ladder_id = ? ORDER BY position",
                    (ladder.id,))]
                self._add_matches(conn, ladder.id, ids, ladder.table_size, ladder.rounds,
                                  rounds, ladder.seed, ladder.settings["max_full_tables"])
            ladder = self.get_ladder(name)
        return ladder

    @_sqlite_errors
    def get_ladder(self, name: str) -> Ladder:
        row = self.db.execute(
            "SELECT id, name, game, options, table_size, seed, rounds, rating_mode, settings, "
            "created, num_matches, completed, rated_through FROM ladders WHERE name = ?",
            (name,)).fetchone()
        if row is None:
            raise UnknownLadder(f"there is no ladder called {name!r}; see arena ladder list")
        bots = tuple(r[0] for r in self.db.execute(
            "SELECT b.name FROM ladder_bots lb JOIN bots b ON b.id = lb.bot_id "
            "WHERE lb.ladder_id = ? ORDER BY lb.position", (row[0],)))
        return Ladder(id=row[0], name=row[1], game=row[2], options=json.loads(row[3]),
                      table_size=row[4], seed=row[5], rounds=row[6], rating_mode=row[7],
                      settings=json.loads(row[8]), created=row[9], bots=bots,
                      num_matches=row[10], completed=row[11], rated_through=row[12])

    @_sqlite_errors
    def list_ladders(self) -> list[Ladder]:
        names = [r[0] for r in self.db.execute("SELECT name FROM ladders ORDER BY created, id")]
        return [self.get_ladder(n) for n in names]

    def _bot_id(self, conn: sqlite3.Connection, name: str) -> int:
        row = conn.execute("SELECT id FROM bots WHERE name = ? AND removed IS NULL",
                           (name,)).fetchone()
        if row is None:
            raise UnknownBot(f"there is no bot called {name!r}; add it first with arena bot add")
        return int(row[0])

    def _info(self, ladder: str) -> _LadderInfo:
        info = self._ladders.get(ladder)
        if info is None:
            full = self.get_ladder(ladder)
            ids = self.db.execute(
                "SELECT lb.bot_id, b.name FROM ladder_bots lb JOIN bots b ON b.id = lb.bot_id "
                "WHERE lb.ladder_id = ?", (full.id,))
            info = _LadderInfo(full.id, full.name, full.table_size, full.rating_mode,
                               Rater(full.rating_params), {i: n for i, n in ids})
            self._ladders[ladder] = info
        return info

    # ---------------------------------------------------------------------- match lifecycle

    @_sqlite_errors
    def matches(self, ladder: str, statuses: Sequence[str] | None = None,
                limit: int | None = None) -> list[StoredMatch]:
        """The ladder's matches in schedule order, optionally only those with these statuses
        (RUNNABLE = pending or infra_failed: what a runner still has to play)."""
        info = self._info(ladder)
        sql = (f"SELECT {_MATCH_COLUMNS} FROM matches WHERE ladder_id = ?")
        params: list[Any] = [info.id]
        if statuses is not None:
            sql += f" AND status IN ({', '.join('?' for _ in statuses)})"
            params += list(statuses)
        sql += " ORDER BY idx"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [self._match(info, row) for row in self.db.execute(sql, params)]

    @_sqlite_errors
    def get_match(self, ladder: str, index: int) -> StoredMatch:
        info = self._info(ladder)
        row = self.db.execute(f"SELECT {_MATCH_COLUMNS} FROM matches WHERE ladder_id = ? "
                              "AND idx = ?", (info.id, index)).fetchone()
        if row is None:
            raise MatchStateError(f"ladder {ladder!r} has no match {index}")
        return self._match(info, row)

    @_sqlite_errors
    def replay(self, ladder: str, index: int) -> dict[str, Any] | None:
        """The stored replay of a completed match (arena.replay's format, without views)."""
        info = self._info(ladder)
        row = self.db.execute("SELECT replay FROM matches WHERE ladder_id = ? AND idx = ?",
                              (info.id, index)).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def _match(self, info: _LadderInfo, row: Sequence[Any]) -> StoredMatch:
        return StoredMatch(
            ladder=info.name, index=row[0], set_index=row[1], round=row[2], rotation=row[3],
            seed=row[4], seats=tuple(info.bot_names[b] for b in json.loads(row[5])),
            status=row[6], attempts=row[7], node=row[8], started=row[9], finished=row[10],
            rated=bool(row[11]), rating_note=row[12])

    @_sqlite_errors
    def start_match(self, ladder: str, index: int, node: str | None = None) -> StoredMatch:
        """Mark a runnable match running on `node` and count the attempt."""
        info = self._info(ladder)
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE matches SET status = 'running', attempts = attempts + 1, node = ?, "
                "started = ? WHERE ladder_id = ? AND idx = ? AND status IN ('pending', "
                "'infra_failed')", (node, _now(), info.id, index))
            if cur.rowcount == 0:
                match = self.get_match(ladder, index)
                raise MatchStateError(
                    f"match {index} of ladder {ladder!r} is {match.status}, so it cannot start")
        return self.get_match(ladder, index)

    @_sqlite_errors
    def release_match(self, ladder: str, index: int) -> None:
        """Put a running match back to pending without blaming anyone (the run was stopped):
        the attempt it had started is not counted."""
        info = self._info(ladder)
        with self._write() as conn:
            conn.execute(f"UPDATE matches SET {_UNCOUNT} WHERE ladder_id = ? AND idx = ? "
                         "AND status = 'running'", (info.id, index))

    @_sqlite_errors
    def reset_running(self, ladder: str) -> int:
        """Put every running match of the ladder back to pending: what a resumed run does first,
        since a match left running belongs to a run that was killed (the ladder's lease says
        none is alive). The attempts they had started are not counted. Returns how many."""
        info = self._info(ladder)
        with self._write() as conn:
            return conn.execute(f"UPDATE matches SET {_UNCOUNT} WHERE ladder_id = ? AND "
                                "status = 'running'", (info.id,)).rowcount

    @_sqlite_errors
    def record_result(self, ladder: str, index: int, result: MatchResult,
                      node: str | None = None) -> RecordOutcome:
        """Store a finished match: its status, timings and replay, a result row per seat, its
        faults, and the rating updates of every completed match now next in schedule order
        (this one included, if its predecessors are done), all in one transaction.

        A match already completed is left as it is (recorded=False): a result is never counted
        twice. A result whose status is abandoned (the platform stopped it) is recorded as an
        infrastructure failure instead (see record_infra_failure)."""
        if result.status == ABANDONED:
            return self.record_infra_failure(ladder, index, f"abandoned: {result.reason}",
                                             node=node)
        info = self._info(ladder)
        with self._write() as conn:
            recorded = self._record(conn, info, index, result, node)
            rated = self._advance_ratings(conn, info) if recorded else ()
        return RecordOutcome(recorded=recorded, rated=rated)

    @_sqlite_errors
    def record_results(self, ladder: str,
                       items: Sequence[tuple[int, MatchResult]],
                       node: str | None = None) -> RecordOutcome:
        """record_result for many (index, result) pairs in one transaction (all or nothing):
        for a runner that batches results under a high match rate. Abandoned results are not
        accepted here. `recorded` is True if any was new."""
        info = self._info(ladder)
        with self._write() as conn:
            recorded = False
            for index, result in items:
                if result.status == ABANDONED:
                    raise MatchStateError(
                        f"match {index} was abandoned; record it with record_infra_failure")
                recorded |= self._record(conn, info, index, result, node)
            rated = self._advance_ratings(conn, info) if recorded else ()
        return RecordOutcome(recorded=recorded, rated=rated)

    def _record(self, conn: sqlite3.Connection, info: _LadderInfo, index: int,
                result: MatchResult, node: str | None) -> bool:
        k = info.table_size
        if not (len(result.seat_names) == len(result.scores) == len(result.ranks) == k):
            raise MatchStateError(
                f"a result for ladder {info.name!r} needs {k} seats of names, scores and ranks")
        row = conn.execute(
            "SELECT id, status, seats FROM matches WHERE ladder_id = ? AND idx = ?",
            (info.id, index)).fetchone()
        if row is None:
            raise MatchStateError(f"ladder {info.name!r} has no match {index}")
        match_id, status, seats_json = row
        if status == COMPLETED:
            return False
        if status == STORE_ABANDONED:
            raise MatchStateError(
                f"match {index} of ladder {info.name!r} was abandoned; its result is not taken")
        seats = json.loads(seats_json)
        names = tuple(info.bot_names[b] for b in seats)
        if tuple(result.seat_names) != names:
            raise MatchStateError(
                f"the result's seats {list(result.seat_names)} are not match {index}'s "
                f"scheduled seats {list(names)}")
        started = result.started_at or None
        finished = result.finished_at or _now()
        conn.execute(
            "UPDATE matches SET status = 'completed', started = coalesce(?, started), "
            "finished = ?, duration_ms = ?, match_key = ?, reason = ?, engine_version = ?, "
            "node = coalesce(?, node), replay = ? WHERE id = ?",
            (started, finished, (finished - started) * 1000.0 if started else None,
             result.match_id, result.reason, result.engine_version, node,
             encode_replay(result), match_id))
        kinds: dict[int, list[str]] = {}
        for f in result.faults:
            kinds.setdefault(f.seat, []).append(f.kind)
        conn.executemany(
            "INSERT INTO results (match_id, seat, bot_id, score, rank, faults, fault_kinds) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(match_id, seat, bot, result.scores[seat], result.ranks[seat],
              len(kinds.get(seat, ())), ",".join(sorted(set(kinds.get(seat, ())))))
             for seat, bot in enumerate(seats)])
        if result.faults:
            conn.executemany(
                "INSERT INTO faults (match_id, seat, bot_id, kind, move, elapsed_ms, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(match_id, f.seat, seats[f.seat], f.kind, f.move, f.elapsed_ms, f.detail)
                 for f in result.faults])
        conn.execute("UPDATE ladders SET completed = completed + 1 WHERE id = ?", (info.id,))
        return True

    @_sqlite_errors
    def record_infra_failure(self, ladder: str, index: int, detail: str, *,
                             node: str | None = None, give_up: bool = False) -> RecordOutcome:
        """Keep an infrastructure failure (referee or worker, not a bot) of a match's attempt.
        The match becomes infra_failed, to be retried; with `give_up` it becomes abandoned for
        good: never rated, and the rating order moves past it (which may rate later matches,
        in the same transaction)."""
        info = self._info(ladder)
        with self._write() as conn:
            row = conn.execute(
                "SELECT id, status, attempts FROM matches WHERE ladder_id = ? AND idx = ?",
                (info.id, index)).fetchone()
            if row is None:
                raise MatchStateError(f"ladder {ladder!r} has no match {index}")
            match_id, status, attempts = row
            if status in FINISHED:
                return RecordOutcome(recorded=False)
            conn.execute(
                "INSERT INTO infra_failures (match_id, attempt, node, detail, at) "
                "VALUES (?, ?, ?, ?, ?)", (match_id, attempts, node, detail, _now()))
            conn.execute("UPDATE matches SET status = ?, rating_note = ? WHERE id = ?",
                         (STORE_ABANDONED if give_up else INFRA_FAILED,
                          f"abandoned: {detail}" if give_up else None, match_id))
            rated = self._advance_ratings(conn, info) if give_up else ()
        return RecordOutcome(recorded=True, rated=rated)

    # ------------------------------------------------------------------------------ ratings

    def _advance_ratings(self, conn: sqlite3.Connection, info: _LadderInfo) -> tuple[int, ...]:
        """Rate every match (or set) that is next in schedule order and finished; stop at the
        first one that is not. Runs inside the caller's transaction."""
        cursor = conn.execute("SELECT rated_through FROM ladders WHERE id = ?",
                              (info.id,)).fetchone()[0]
        step = info.table_size if info.rating_mode == SET_MODE else 1
        rated: list[int] = []
        while True:
            rows = conn.execute(
                "SELECT id, idx, status FROM matches WHERE ladder_id = ? AND idx >= ? AND "
                "idx < ? ORDER BY idx", (info.id, cursor, cursor + step)).fetchall()
            if not rows or any(r[2] not in FINISHED for r in rows):
                break
            done = [r for r in rows if r[2] == COMPLETED]
            if done:
                self._rate(conn, info, [r[0] for r in done])
                rated.extend(r[1] for r in done)
            cursor += len(rows)
        conn.execute("UPDATE ladders SET rated_through = ? WHERE id = ?", (cursor, info.id))
        return tuple(rated)

    def _rate(self, conn: sqlite3.Connection, info: _LadderInfo, match_ids: list[int]) -> None:
        """Apply one rating update from these completed matches: one match, or the completed
        matches of one duplicate set (set mode). Also adds their results to the standings."""
        per_match = []
        for match_id in match_ids:
            rows = conn.execute("SELECT seat, bot_id, score, rank, faults FROM results "
                                "WHERE match_id = ? ORDER BY seat", (match_id,)).fetchall()
            per_match.append(rows)
        bots = [r[1] for r in per_match[0]]
        found = conn.execute(
            f"SELECT bot_id, mu, sigma FROM ratings WHERE ladder_id = ? AND bot_id IN "
            f"({', '.join('?' for _ in bots)})", (info.id, *bots)).fetchall()
        before = {b: SkillRating(mu, sigma) for b, mu, sigma in found}
        if len(per_match) == 1:
            ranks = {r[1]: r[3] for r in per_match[0]}
        else:
            ranks = set_ranks(
                ([r[1] for r in rows], [r[2] for r in rows], [r[0] for r in rows if r[4]])
                for rows in per_match)
        update = info.rater.rate(before, ranks)
        stats: dict[int, list[int]] = {b: [0, 0, 0, 0] for b in bots}  # matches wins score faults
        for rows in per_match:
            for _seat, bot, score, rank, faults in rows:
                s = stats[bot]
                s[0] += 1
                s[1] += rank == 0
                s[2] += score
                s[3] += faults
        conn.executemany(
            "UPDATE ratings SET mu = ?, sigma = ?, conservative = ?, matches = matches + ?, "
            "wins = wins + ?, score_sum = score_sum + ?, faults = faults + ? "
            "WHERE ladder_id = ? AND bot_id = ?",
            [(r.mu, r.sigma, info.rater.conservative(r), *stats[b], info.id, b)
             for b, r in update.ratings.items()])
        last = match_ids[-1]  # in set mode the history hangs on the set's last rated match
        if not update.skipped:
            conn.executemany(
                "INSERT INTO rating_history (match_id, bot_id, mu, sigma) VALUES (?, ?, ?, ?)",
                [(last, b, r.mu, r.sigma) for b, r in update.ratings.items()])
        conn.executemany("UPDATE matches SET rated = 1, rating_note = ? WHERE id = ?",
                         [(update.note or None, m) for m in match_ids])

    # ------------------------------------------------------------------------------ queries

    @_sqlite_errors
    def rankings(self, ladder: str | None = None,
                 confidence: float = SETTLED_CONFIDENCE) -> Rankings:
        """The standings of a ladder (default: the most recently created), best first by the
        conservative rating mu - 3 sigma, each with the probability that it is better than the
        next (ratings.p_better) and whether its rank is settled at `confidence`. Reads only the
        ladder's per-bot standings rows, so it costs the same with 100 or 100,000 stored
        matches."""
        if ladder is None:
            row = self.db.execute(
                "SELECT name FROM ladders ORDER BY created DESC, id DESC LIMIT 1").fetchone()
            if row is None:
                raise UnknownLadder("there are no ladders yet; run one with arena ladder run")
            ladder = row[0]
        head = self.db.execute(
            "SELECT id, name, game, options, table_size, rating_mode, num_matches, completed, "
            "rated_through FROM ladders WHERE name = ?", (ladder,)).fetchone()
        if head is None:
            raise UnknownLadder(f"there is no ladder called {ladder!r}; see arena ladder list")
        rows = self.db.execute(
            "SELECT b.name, r.conservative, r.mu, r.sigma, r.matches, r.score_sum, r.wins, "
            "r.faults FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE r.ladder_id = ? "
            "ORDER BY r.conservative DESC, r.mu DESC, b.name", (head[0],)).fetchall()
        skills = [SkillRating(r[2], r[3]) for r in rows]
        p_next = [p_better(a, b) for a, b in zip(skills, skills[1:])]
        settled = adjacent_settled(p_next, confidence)
        standings = tuple(
            Standing(rank=i + 1, bot=name, conservative=cons, mu=mu, sigma=sigma,
                     matches=matches, mean_score=(score_sum / matches) if matches else None,
                     wins=wins, faults=faults,
                     p_better_than_next=p_next[i] if i < len(p_next) else None,
                     settled=settled[i])
            for i, (name, cons, mu, sigma, matches, score_sum, wins, faults) in enumerate(rows))
        return Rankings(ladder=head[1], game=head[2], options=json.loads(head[3]),
                        table_size=head[4], rating_mode=head[5], scheduled=head[6],
                        completed=head[7], rated=head[8], standings=standings,
                        confidence=confidence)

    @_sqlite_errors
    def progress(self, ladder: str) -> dict[str, int]:
        """How many of the ladder's matches have each status (a scan of the ladder's matches:
        for progress reports, not for the rankings)."""
        info = self._info(ladder)
        counts = {s: 0 for s in MATCH_STATUSES}
        for status, n in self.db.execute(
                "SELECT status, count(*) FROM matches WHERE ladder_id = ? GROUP BY status",
                (info.id,)):
            counts[status] = n
        return counts

    @_sqlite_errors
    def rating_history(self, ladder: str, bot: str) -> list[tuple[int, float, float]]:
        """A bot's rating after each rated match of a ladder: (match index, mu, sigma)."""
        info = self._info(ladder)
        return [tuple(r) for r in self.db.execute(  # type: ignore[misc]
            "SELECT m.idx, h.mu, h.sigma FROM rating_history h "
            "JOIN matches m ON m.id = h.match_id JOIN bots b ON b.id = h.bot_id "
            "WHERE m.ladder_id = ? AND b.name = ? ORDER BY m.idx", (info.id, bot))]


# A match taken back from a stopped or killed run: its attempt did not fail, so it does not count
# against the runner's max_attempts (resumes would otherwise use up a match's retries).
_UNCOUNT = "status = 'pending', attempts = max(attempts - 1, 0)"

_LEASE_COLUMNS = "run, host, pid, machine, pid_start, since, heartbeat"


def _lease_holder(row: Sequence[Any]) -> "Holder":
    from arena.ladder.lease import Holder

    return Holder(run=row[0], host=row[1], pid=row[2], machine=row[3], pid_start=row[4])


_BOT_COLUMNS = ("id, name, command, directory, remote, created, suspended, suspended_reason, "
                "removed")
_MATCH_COLUMNS = ("idx, set_index, round, rotation, seed, seats, status, attempts, node, "
                  "started, finished, rated, rating_note")


def _bot(row: Sequence[Any]) -> Bot:
    return Bot(id=row[0], name=row[1], command=row[2], directory=row[3], remote=bool(row[4]),
               created=row[5], suspended=bool(row[6]), suspended_reason=row[7], removed=row[8])


def _resolve_game(game: str, table_size: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """The game's full option set (defaults filled in), or LadderError saying what is wrong."""
    from arena.games import ConfigError, make_game

    try:
        return dict(make_game(game, table_size, **dict(options)).config()["options"])
    except ConfigError as exc:
        raise LadderError(str(exc)) from None


# -------------------------------------------------------------------------------- async store

T = TypeVar("T")


def _wrap(future):
    import asyncio  # imported late: only async callers need it

    return asyncio.wrap_future(future)


class AsyncStore:
    """A Store on its own writer thread, for async code: every call runs there, in order, and
    the caller awaits its result, so SQLite never blocks the event loop and there is exactly one
    writer (the datasette pattern). Open with `await AsyncStore.open(path)`; close with
    `await store.close()` (or `async with`).

    `run(fn, *args)` runs fn(store, *args) on the writer thread; the named methods below are the
    ones a ladder runner and the referee need. Threads may use `submit` for a
    concurrent.futures.Future instead."""

    def __init__(self, executor: concurrent.futures.ThreadPoolExecutor, store: Store):
        self._executor = executor
        self.store = store  # touch only from the writer thread (through run/submit)

    @classmethod
    async def open(cls, path: str | os.PathLike[str] = DEFAULT_PATH, **kwargs: Any) -> "AsyncStore":
        import concurrent.futures  # here: `arena rankings` need not pay for it

        executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="arena-store")
        try:
            # The connection must be made on the thread that will use it.
            store = await _wrap(executor.submit(Store, path, **kwargs))
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(executor, store)

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        return self._executor.submit(fn, self.store, *args, **kwargs)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await _wrap(self.submit(fn, *args, **kwargs))

    async def close(self) -> None:
        try:
            await self.run(Store.close)
        finally:
            self._executor.shutdown(wait=True)

    async def __aenter__(self) -> "AsyncStore":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def ensure_ladder(self, name: str, game: str, table_size: int, bots: Sequence[str],
                            **kwargs: Any) -> Ladder:
        return await self.run(Store.ensure_ladder, name, game, table_size, bots, **kwargs)

    async def get_ladder(self, name: str) -> Ladder:
        return await self.run(Store.get_ladder, name)

    async def matches(self, ladder: str, statuses: Sequence[str] | None = None,
                      limit: int | None = None) -> list[StoredMatch]:
        return await self.run(Store.matches, ladder, statuses, limit)

    async def reset_running(self, ladder: str) -> int:
        return await self.run(Store.reset_running, ladder)

    async def start_match(self, ladder: str, index: int, node: str | None = None) -> StoredMatch:
        return await self.run(Store.start_match, ladder, index, node)

    async def release_match(self, ladder: str, index: int) -> None:
        return await self.run(Store.release_match, ladder, index)

    async def record_result(self, ladder: str, index: int, result: MatchResult,
                            node: str | None = None) -> RecordOutcome:
        return await self.run(Store.record_result, ladder, index, result, node)

    async def record_infra_failure(self, ladder: str, index: int, detail: str, *,
                                   node: str | None = None,
                                   give_up: bool = False) -> RecordOutcome:
        return await self.run(Store.record_infra_failure, ladder, index, detail, node=node,
                              give_up=give_up)

    async def record_results(self, ladder: str, items: Sequence[tuple[int, MatchResult]],
                             node: str | None = None) -> RecordOutcome:
        return await self.run(Store.record_results, ladder, items, node)

    async def ensure_open_ladder(self, name: str, game: str, table_size: int,
                                 **kwargs: Any) -> Ladder:
        return await self.run(Store.ensure_open_ladder, name, game, table_size, **kwargs)

    async def join_ladder(self, ladder: str, bot: str) -> bool:
        return await self.run(Store.join_ladder, ladder, bot)

    async def add_set(self, ladder: str, table: Sequence[str], seed: int) -> list[StoredMatch]:
        return await self.run(Store.add_set, ladder, table, seed)

    async def rankings(self, ladder: str | None = None,
                       confidence: float = SETTLED_CONFIDENCE) -> Rankings:
        return await self.run(Store.rankings, ladder, confidence)

    async def bot_for_token(self, token: str) -> Bot | None:
        return await self.run(Store.bot_for_token, token)

    async def get_bot(self, name: str) -> Bot:
        return await self.run(Store.get_bot, name)
