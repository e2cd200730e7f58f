"""The store's errors: what it refuses or cannot do, each message saying what to do about it,
and the translation of SQLite's errors into them (`describe_error`, `sqlite_errors`)."""

from __future__ import annotations

import functools
import sqlite3
from typing import Callable, ParamSpec, Sequence, TypeVar


class StoreError(Exception):
    """Anything the store refuses or cannot do; the message says what to do about it."""


class SchemaTooNew(StoreError):
    """A database written by a newer Arena: a higher schema version (PRAGMA user_version), or
    migrations this Arena does not know (`unknown`)."""

    def __init__(self, path: str, found: int, supported: int, unknown: Sequence[str] = ()):
        self.found, self.supported, self.unknown = found, supported, tuple(unknown)
        if self.unknown:
            what = (
                f"has schema version {found} with migrations this Arena does not know "
                f"({', '.join(self.unknown)})"
            )
        else:
            what = f"has schema version {found}"
        super().__init__(
            f"database {path} {what}, but this Arena understands schema versions up to "
            f"{supported}; upgrade Arena, or choose another database with --db"
        )


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
            f"`sqlite3 {path} .recover | sqlite3 recovered.db` and go on with --db recovered.db"
        )


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


class InvalidBotCommand(RegistryError):
    """A bot whose command or arena-bot.toml cannot run: arena.botcommand's CommandNotFound or
    BadManifest (its `__cause__`), refused by the registry with its message."""


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
            "wait for it to finish, or choose another database with --db"
        )
    if "readonly" in lower or "read-only" in lower:
        return StoreError(
            f"database {path} is not writable ({text}); check the permissions of the file and "
            "its directory, or choose another database with --db"
        )
    if "malformed" in lower or "corrupt" in lower:
        return DatabaseDamaged(path, text)
    if "not a database" in lower:
        return StoreError(
            f"{path} is not an Arena database: it is not SQLite, or its first page is damaged "
            f"({text}). If it was an Arena database, use your last good copy of it; otherwise "
            "choose another file with --db"
        )
    if "unable to open" in lower:
        return StoreError(
            f"cannot open database {path} ({text}); check that its directory exists and is "
            "writable, or choose another database with --db"
        )
    if "disk" in lower or "full" in lower:
        return StoreError(f"cannot write database {path} ({text}); free some disk space")
    return StoreError(f"database {path}: {text}")


def sqlite_errors(method: Callable[P, R]) -> Callable[P, R]:
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
