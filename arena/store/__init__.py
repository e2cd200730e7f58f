"""The store: every bot, ladder, match, result, fault and rating, in one SQLite file.

SQLite through sqlite-utils 4. Schema and decisions: docs/store.md. Each concern is a module:

    schema.py     the file: schema, migrations, opening (Arena's mark, quick_check, WAL,
                  read-only opens) and the write transaction (StoreFile)
    registry.py   the bot registry: versions (resolve_bot), tokens kept only as hashes,
                  suspension, removal
    submissions.py  owner keys, uploaded versions' verdicts, rollback
    quotas.py     uploads per bot per day: arena serve's setting, and the count
    scrimmages.py  unrated duplicate sets an owner asks for: schedule, quota, results
    snapshots.py  the copies of bot directories that versions run from
    leases.py     ladder leases as stored (one run per ladder; arena.ladder.lease decides)
    competitions.py  competitions: definition, phase steps, entrants, finals' ladder,
                  published standings and archive (immutable)
    ladders.py    ladder creation (the schedule written as pending matches), continuous
                  ladders, comparisons' ladders
    matches.py    the match lifecycle: start, take back, result, infrastructure failure
    rating.py     rating application: finished matches rated in schedule order
    rankings.py   the read queries on a ladder: rankings, progress, rating history
    browse.py     the browsing queries of the web's pages and API (BrowseQueries)
    records.py    the dataclasses the store returns;  errors.py  what it raises
    aio.py        AsyncStore: a Store on its own writer thread, for async code

One writer: a `Store` owns one write connection and is used from one thread. `AsyncStore` runs a
`Store` on a dedicated writer thread and lets async code await its calls
(`await astore.run(Store.record_result, ...)`), so SQLite work never blocks the event loop.
Reads may use their own connection: `Store(path, readonly=True)`.

A match's result, its faults, its replay and the rating updates it unblocks are written in one
transaction (rating.py). The store owns its SQL; the maths it calls is pure and below it
(arena/schedule.py, arena/ratings.py). It imports nothing of arena.ladder, which is above it
(docs/architecture.md, "Layers").
"""

from __future__ import annotations

import os

from arena.results import (
    ABANDONED,
    COMPLETED,
    FINISHED,
    INFRA_FAILED,
    MATCH_STATUSES,
    PENDING,
    RUNNABLE,
    RUNNING,
)

from .aio import AsyncStore
from .competitions import (
    Competition,
    CompetitionError,
    Competitions,
    UnknownCompetition,
    UploadsClosed,
)
from .errors import (
    DatabaseDamaged,
    DuplicateBot,
    InvalidBotCommand,
    InvalidBotName,
    InvalidLadderName,
    LadderBusy,
    LadderError,
    LadderMismatch,
    LeaseLost,
    MatchStateError,
    NotArenaDatabase,
    RegistryError,
    SchemaTooNew,
    StoreError,
    StoreLocked,
    UnknownBot,
    UnknownLadder,
    describe_error,
)
from .ladders import check_ladder_name
from .leases import Lease, Leases
from .matches import (
    FAULT_LOG_BYTES,
    MATCH_LOG_BYTES,
    Matches,
    clean_log,
    encode_replay,
    log_excerpt,
    match_log,
)
from .quotas import DEFAULT_UPLOADS_PER_DAY, UploadLimitReached
from .rankings import RankingQueries
from .records import (
    Bot,
    BotAccess,
    Ladder,
    LadderInfo,
    MatchScores,
    Rankings,
    RecordOutcome,
    Standing,
    StoredMatch,
    Submission,
)
from .registry import (
    MAX_NOTE,
    MAX_REASON,
    Registry,
    check_bot_name,
    parse_bot_spec,
    pick_version,
    playing_versions,
    version_name,
)
from .schema import (
    APPLICATION_ID,
    DEFAULT_PATH,
    QUICK_CHECK_READ_MAX,
    QUICK_CHECK_WRITE_MAX,
    READABLE_FROM,
    SCHEMA_VERSION,
    StoreFile,
)
from .scrimmages import (
    Scrimmage,
    ScrimmageLimitReached,
    Scrimmages,
    UnknownScrimmage,
)
from .submissions import Submissions


class Store(
    Registry,
    Submissions,
    Scrimmages,  # and Quotas, whose service settings it keeps too
    Leases,
    Competitions,
    RankingQueries,
    Matches,
    StoreFile,
):
    """The SQLite store. Owns one connection; use it from one thread (see AsyncStore).

    `path` defaults to arena.db in the working directory. `timeout` is how long a write waits for
    another process's lock before StoreLocked. `readonly` opens without writing anything (no
    migration, no WAL switch): for queries alongside a running writer, and for a database in a
    folder this user may not write to (opened immutable there).

    Opening refuses a SQLite file of another application (NotArenaDatabase) before writing
    anything, and a damaged one (DatabaseDamaged, from PRAGMA quick_check on files small enough
    to check at every open, or from any later SQLite error saying so: no write follows it).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_PATH,
        *,
        timeout: float = 5.0,
        readonly: bool = False,
    ):
        Matches.__init__(self)
        StoreFile.__init__(self, path, timeout=timeout, readonly=readonly)


__all__ = [
    "ABANDONED",
    "APPLICATION_ID",
    "MAX_NOTE",
    "parse_bot_spec",
    "pick_version",
    "playing_versions",
    "version_name",
    "AsyncStore",
    "Competition",
    "CompetitionError",
    "UnknownCompetition",
    "UploadsClosed",
    "Bot",
    "BotAccess",
    "COMPLETED",
    "DEFAULT_PATH",
    "DatabaseDamaged",
    "DuplicateBot",
    "FINISHED",
    "INFRA_FAILED",
    "InvalidBotCommand",
    "InvalidBotName",
    "InvalidLadderName",
    "Ladder",
    "LadderBusy",
    "LadderError",
    "LadderInfo",
    "MatchScores",
    "LadderMismatch",
    "Lease",
    "LeaseLost",
    "MATCH_STATUSES",
    "MAX_REASON",
    "MatchStateError",
    "NotArenaDatabase",
    "PENDING",
    "QUICK_CHECK_READ_MAX",
    "QUICK_CHECK_WRITE_MAX",
    "READABLE_FROM",
    "RUNNABLE",
    "RUNNING",
    "Rankings",
    "RecordOutcome",
    "RegistryError",
    "SCHEMA_VERSION",
    "SchemaTooNew",
    "Standing",
    "Store",
    "StoreError",
    "Submission",
    "StoreLocked",
    "StoredMatch",
    "UnknownBot",
    "UnknownLadder",
    "UploadLimitReached",
    "DEFAULT_UPLOADS_PER_DAY",
    "Scrimmage",
    "ScrimmageLimitReached",
    "UnknownScrimmage",
    "check_bot_name",
    "check_ladder_name",
    "describe_error",
    "encode_replay",
    "log_excerpt",
    "MATCH_LOG_BYTES",
    "clean_log",
    "match_log",
    "FAULT_LOG_BYTES",
]
