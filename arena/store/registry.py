"""The bot registry: adding bots (a command, a bot directory, or remote), tokens (kept only as
hashes, compared in constant time), suspension and removal, and the lookups the referee makes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from arena.tokens import hash_token, new_token

from .errors import (
    BadManifest,
    CommandNotFound,
    DuplicateBot,
    InvalidBotName,
    RegistryError,
    UnknownBot,
    sqlite_errors,
)
from .records import Bot, BotAccess
from .schema import StoreFile, check_name, now

MAX_REASON = 500  # characters of a suspension reason (it is shown on every bot's page)

_BOT_COLUMNS = ("id, name, command, directory, remote, created, suspended, suspended_reason, "
                "removed")

# hmac and arena.botcommand are imported where they are used (and hashlib by arena.tokens):
# loading them (OpenSSL's hashes, tomllib, shutil) is ~10 ms of a command that only reads,
# `arena rankings`.


def _same_digest(a: str, b: str) -> bool:
    import hmac

    return hmac.compare_digest(a, b)  # constant time: timing tells nothing of a real token


def check_bot_name(name: str) -> None:
    check_name("bot", name, InvalidBotName)


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


def _bot(row: Sequence[Any]) -> Bot:
    return Bot(id=row[0], name=row[1], command=row[2], directory=row[3], remote=bool(row[4]),
               created=row[5], suspended=bool(row[6]), suspended_reason=row[7], removed=row[8])


class Registry(StoreFile):
    """The bot registry's part of the Store."""

    @sqlite_errors
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
                (name, command, run_dir, int(bool(remote)), hash_token(token), now()))
        return token

    @sqlite_errors
    def list_bots(self, include_removed: bool = False) -> list[Bot]:
        where = "" if include_removed else "WHERE removed IS NULL"
        return [_bot(row) for row in self.db.execute(
            f"SELECT {_BOT_COLUMNS} FROM bots {where} ORDER BY name")]

    @sqlite_errors
    def get_bot(self, name: str) -> Bot:
        row = self.db.execute(
            f"SELECT {_BOT_COLUMNS} FROM bots WHERE name = ? AND removed IS NULL",
            (name,)).fetchone()
        if row is None:
            raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")
        return _bot(row)

    @sqlite_errors
    def remove_bot(self, name: str) -> None:
        """Retire a bot: its token stops working and it leaves the bot list; its past matches,
        results and ratings stay (and keep its name, which cannot be reused)."""
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE bots SET removed = ?, token_hash = NULL "
                "WHERE name = ? AND removed IS NULL", (now(), name))
            if cur.rowcount == 0:
                raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")

    @sqlite_errors
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

    @sqlite_errors
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

    @sqlite_errors
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

    @sqlite_errors
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
