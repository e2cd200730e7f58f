"""The bot registry: adding bots (a command, a bot directory, or remote), their versions (each a
bot row of its own: version 1 named as the bot, version N >= 2 named NAME@N; a bot named by a
user resolves to a version here, `resolve_bot`), tokens (kept only as hashes, compared in
constant time), suspension and removal, and the lookups the referee makes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from arena.tokens import hash_token, new_token

from .errors import (
    DuplicateBot,
    InvalidBotCommand,
    InvalidBotName,
    RegistryError,
    UnknownBot,
    sqlite_errors,
)
from .quotas import refuse_over_limit
from .records import Bot, BotAccess, from_row
from .schema import StoreFile, check_name, now, one_row

MAX_REASON = 500  # characters of a suspension reason (it is shown on every bot's page)

MAX_NOTE = 500  # characters of a version's note
_BOT_COLUMNS = (
    "id, name, command, directory, remote, created, suspended, suspended_reason, "
    "removed, family, version, note, status"
)
# A version's states (records.Bot.status): the ones that play, and the ones that may not.
VERIFYING, FAILED, ACTIVE, RETIRED = "verifying", "failed", "active", "retired"
NOT_PLAYING = frozenset({VERIFYING, FAILED})

# hmac and arena.botcommand are imported where they are used (and hashlib by arena.tokens):
# loading them (OpenSSL's hashes, tomllib, shutil) is ~10 ms of a command that only reads,
# `arena rankings`.


def _same_digest(a: str, b: str) -> bool:
    import hmac

    return hmac.compare_digest(a, b)  # constant time: timing tells nothing of a real token


def check_bot_name(name: str) -> None:
    check_name("bot", name, InvalidBotName)


def _checked_command(command: str, cwd: str | os.PathLike[str]) -> None:
    """Check that a bot command runs from `cwd` (arena.botcommand), as the registry refuses."""
    from arena import botcommand

    try:
        botcommand.check_command(command, cwd)
    except botcommand.BotCommandError as exc:
        raise InvalidBotCommand(str(exc)) from exc


def _bot(row: Sequence[Any]) -> Bot:
    return from_row(Bot, _BOT_COLUMNS, row, {"remote": bool, "suspended": bool})


# ------------------------------------------------------------------------------- versions


def version_name(family: str, version: int) -> str:
    """The bot row name of a version: the bot's own name for version 1, NAME@N after."""
    return family if version == 1 else f"{family}@{version}"


def parse_bot_spec(spec: str) -> tuple[str, int | None]:
    """NAME -> (NAME, None): the latest version; NAME@N -> (NAME, N)."""
    family, at, number = spec.partition("@")
    if not at:
        return spec, None
    if not family or not number.isdigit() or int(number) < 1:
        raise UnknownBot(
            f"{spec!r} names no bot: name a bot as NAME (its latest version), or "
            "one of its versions as NAME@N (N = 1, 2, ...)"
        )
    return family, int(number)


def pick_version(spec: str, versions: Sequence[Bot]) -> Bot:
    """The version `spec` names among `versions`, every row of its bot (removed ones too):
    NAME@N that version, NAME the newest active one that is not removed (a version being
    verified, failed, or rolled back from is not; with none active, the newest)."""
    family, number = parse_bot_spec(spec)
    if not versions:
        raise UnknownBot(f"there is no bot called {family!r}; see arena bot list")
    if number is None:
        live = [v for v in versions if v.removed is None]
        if not live:
            raise UnknownBot(
                f"bot {family!r} was removed (its past results stay); see arena bot list"
            )
        active = [v for v in live if v.status == ACTIVE]
        return max(active or live, key=lambda v: v.version)
    for v in versions:
        if v.version == number:
            if v.removed is not None:
                raise UnknownBot(
                    f"version {number} of bot {family!r} was removed; see arena bot show {family}"
                )
            return v
    numbers = ", ".join(str(v.version) for v in sorted(versions, key=lambda v: v.version))
    raise UnknownBot(f"bot {family!r} has versions {numbers}; no version {number}")


def playing_versions(bots: Iterable[Bot], members: Iterable[str] | None) -> list[Bot]:
    """Of these bots (not removed), the versions that play where `members` (NAME or NAME@N,
    as pick_version reads them) may: with None, every bot's latest version (its newest active
    one). A member naming no registered version is left out (it may be registered later), and
    so is a version being verified or that failed verification. In the order of `bots`."""
    bots = list(bots)
    families: dict[str, list[Bot]] = {}
    for b in bots:
        families.setdefault(b.family, []).append(b)
    chosen = set()
    for spec in families if members is None else members:
        try:
            chosen.add(pick_version(spec, families.get(parse_bot_spec(spec)[0], [])).name)
        except UnknownBot:
            continue
    return [b for b in bots if b.name in chosen and b.status not in NOT_PLAYING]


def _command_dir(command: str, cwd: str | os.PathLike[str] | None) -> str:
    """The directory a bot command runs from (`cwd`, default the working directory), once the
    command is checked to run there."""
    run_dir = str(Path(cwd or os.getcwd()).resolve())
    _checked_command(command, run_dir)
    return run_dir


def _directory_command(run_dir: str) -> str:
    """A bot directory's command line (its arena-bot.toml's), checked to run there."""
    from arena import botcommand

    try:
        manifest = botcommand.read_manifest(run_dir)
        command = manifest.command_line()
        if manifest.kind != "cpp":  # a built program is made by its build (arena.referee.build)
            botcommand.check_command(command, run_dir)
    except botcommand.CommandNotFound as exc:
        raise InvalidBotCommand(f"{Path(run_dir) / botcommand.MANIFEST}: {exc}") from exc
    except botcommand.BotCommandError as exc:
        raise InvalidBotCommand(str(exc)) from exc
    return command


def _refuse_duplicate_upload(conn: Any, family: str, digest: str) -> None:
    row = conn.execute(
        "SELECT s.version FROM submissions s JOIN bots b ON b.name = s.bot "
        "WHERE s.family = ? AND s.digest = ? AND b.removed IS NULL AND b.status != ?",
        (family, digest, FAILED),  # a failed one may be tried again (the server's fault?)
    ).fetchone()
    if row is not None:
        raise DuplicateBot(
            f"this upload is identical to version {row[0]} of bot {family!r} (same files); "
            f"to play that version again, roll back to it (arena submit --rollback {row[0]})"
        )


class Registry(StoreFile):
    """The bot registry's part of the Store."""

    @sqlite_errors
    def has_owner(self, family: str) -> bool:
        """Whether the bot `family` has an owner key (submissions.py keeps them)."""
        query = "SELECT 1 FROM bot_owners WHERE family = ?"
        return self.db.execute(query, (family,)).fetchone() is not None

    @sqlite_errors
    def add_bot(
        self,
        name: str,
        command: str | None = None,
        *,
        directory: str | None = None,
        remote: bool = False,
        cwd: str | os.PathLike[str] | None = None,
    ) -> str:
        """Register a bot and return its token (shown once: only its hash is stored).

        Exactly one of: `command` (run from `cwd`, default the working directory), `directory`
        (a bot directory whose arena-bot.toml gives the command, run from that directory), or
        `remote=True` (a bot its owner runs, which connects with the token)."""
        check_bot_name(name)
        if sum((command is not None, directory is not None, bool(remote))) != 1:
            raise RegistryError(
                "give exactly one of: a command, a bot directory, or remote (for a bot its "
                "owner runs)"
            )
        run_dir: str | None = None
        if directory is not None:
            run_dir = str(Path(directory).resolve())
            command = _directory_command(run_dir)
        elif command is not None:
            run_dir = _command_dir(command, cwd)
        token = new_token()
        with self._write() as conn:
            row = conn.execute("SELECT removed FROM bots WHERE name = ?", (name,)).fetchone()
            if row is None and self.has_owner(name):
                raise DuplicateBot(
                    f"bot {name!r} has an owner key and awaits its first upload (arena submit); "
                    "choose another name"
                )
            if row is not None:
                if row[0] is not None:
                    raise DuplicateBot(
                        f"a removed bot was called {name!r} and keeps its past results under "
                        "that name; choose another name"
                    )
                raise DuplicateBot(
                    f"a bot called {name!r} already exists; choose another name, or remove it "
                    "first (arena bot remove), rotate its token (arena bot rotate-token), or "
                    "register a new version of it (arena bot update)"
                )
            conn.execute(
                "INSERT INTO bots (name, command, directory, remote, token_hash, created, "
                "family, version) VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
                (name, command, run_dir, int(bool(remote)), hash_token(token), now(), name),
            )
        return token

    @sqlite_errors
    def update_bot(
        self,
        name: str,
        command: str | None = None,
        *,
        directory: str | os.PathLike[str] | None = None,
        note: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        status: str = ACTIVE,
        digest: str | None = None,
        uploads_per_day: int | None = None,
    ) -> tuple[Bot, str]:
        """Register a new version of the bot `name`, numbered after its last one, and return it
        with its token (shown once). Exactly one of: `command` (run from `cwd`, default the
        working directory), or `directory`, a bot directory that is copied beside the
        database (snapshots.py), so that later edits of it leave this version as it was; the
        copy's arena-bot.toml gives the command. A remote bot, and a removed one, get no new
        versions. An upload (`digest` given) may be limited to `uploads_per_day` in 24 hours
        (quotas.py): past it, UploadLimitReached, and nothing is kept."""
        from . import snapshots

        if "@" in name:
            raise RegistryError(
                f"{name!r} names a version; update the bot, "
                f"{name.partition('@')[0]!r}: its new version is numbered "
                "after its last"
            )
        check_bot_name(name)
        if (command is None) == (directory is None):
            raise RegistryError(
                "give exactly one of: a command, or a bot directory (copied as this version's own)"
            )
        if note is not None and len(note) > MAX_NOTE:
            raise RegistryError(
                f"a version's note is at most {MAX_NOTE} characters, not "
                f"{len(note)}; say it in fewer words"
            )
        versions = self.versions(name)
        live = [v for v in versions if v.removed is None]
        if not versions and not (digest is not None and self.has_owner(name)):
            raise UnknownBot(
                f"there is no bot called {name!r} to update; register it first with arena bot add"
            )
        if versions and not live:
            raise RegistryError(
                f"bot {name!r} was removed; a removed bot gets no new "
                "versions (register a new bot under another name)"
            )
        if any(v.remote for v in versions):
            raise RegistryError(
                f"bot {name!r} is remote: it runs on its author's machine and connects with its "
                "token, so Arena has no command or files of it to version; its author updates "
                "it there"
            )
        staged: Path | None = None
        if directory is not None:
            _directory_command(str(Path(directory).resolve()))  # its errors name `directory`
            staged = snapshots.copy_to_staging(directory, snapshots.snapshot_root(self.path) / name)
            try:
                command = _directory_command(str(staged))  # the copy's: what this version runs
            except BaseException:
                snapshots.discard_staging(staged)
                raise
            run_dir = None
        else:
            assert command is not None
            run_dir = _command_dir(command, cwd)
        token = new_token()
        placed: Path | None = None
        try:
            with self._write() as conn:  # the number, then the row: one writer
                if digest is not None and uploads_per_day is not None:
                    refuse_over_limit(conn, name, uploads_per_day)
                if digest is not None:
                    _refuse_duplicate_upload(conn, name, digest)
                last = conn.execute(
                    "SELECT max(version) FROM bots WHERE family = ?", (name,)
                ).fetchone()[0]
                version = 1 + (last or 0)
                if staged is not None:
                    placed = snapshots.snapshot_dir(self.path, name, version)
                    snapshots.discard(placed)  # left by an update that failed to commit
                    staged.rename(placed)
                    run_dir = str(placed)
                conn.execute(
                    "INSERT INTO bots (name, command, directory, remote, token_hash, created, "
                    "family, version, note, status) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?)",
                    (
                        version_name(name, version),
                        command,
                        run_dir,
                        hash_token(token),
                        now(),
                        name,
                        version,
                        note,
                        status,
                    ),
                )
                if digest is not None:
                    conn.execute(
                        "INSERT INTO submissions (bot, family, version, digest, submitted) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (version_name(name, version), name, version, digest, now()),
                    )
        except BaseException:
            if placed is not None:
                snapshots.discard(placed)
            raise
        finally:
            if staged is not None:
                snapshots.discard_staging(staged)
        return self.get_bot(version_name(name, version)), token

    @sqlite_errors
    def versions(self, name: str) -> list[Bot]:
        """Every version of the bot `name` (removed ones too), oldest first; [] if none."""
        return [
            _bot(row)
            for row in self.db.execute(
                f"SELECT {_BOT_COLUMNS} FROM bots WHERE family = ? ORDER BY version", (name,)
            )
        ]

    def resolve_bot(self, spec: str) -> Bot:
        """The version a user names: NAME@N that version (NAME@1 is the row named NAME), NAME
        its latest version that is not removed. UnknownBot says what exists when none fits."""
        return pick_version(spec, self.versions(parse_bot_spec(spec)[0]))

    @sqlite_errors
    def list_bots(self, include_removed: bool = False) -> list[Bot]:
        where = "" if include_removed else "WHERE removed IS NULL"
        return [
            _bot(row)
            for row in self.db.execute(f"SELECT {_BOT_COLUMNS} FROM bots {where} ORDER BY name")
        ]

    @sqlite_errors
    def get_bot(self, name: str) -> Bot:
        return _bot(
            one_row(
                self.db,
                f"SELECT {_BOT_COLUMNS} FROM bots WHERE name = ? AND removed IS NULL",
                (name,),
                UnknownBot(f"there is no bot called {name!r}; see arena bot list"),
            )
        )

    @sqlite_errors
    def remove_bot(self, name: str) -> None:
        """Retire a bot, every version of it (NAME), or one version (NAME@N; NAME then names
        its latest version left): tokens stop working and it leaves the bot list; past matches,
        results and ratings stay (and keep their names, which cannot be reused)."""
        family, number = parse_bot_spec(name)
        if number is not None:
            target = "name = ?"
            key = self.resolve_bot(name).name  # says which versions there are
        else:
            target, key = "family = ?", family
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE bots SET removed = ?, token_hash = NULL "
                f"WHERE {target} AND removed IS NULL",
                (now(), key),
            )
            if cur.rowcount == 0:
                raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")

    @sqlite_errors
    def rotate_token(self, name: str) -> str:
        """Give a bot a new token (returned once) and make the old one stop working."""
        token = new_token()
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE bots SET token_hash = ? WHERE name = ? AND removed IS NULL",
                (hash_token(token), name),
            )
            if cur.rowcount == 0:
                raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")
        return token

    @sqlite_errors
    def bot_for_token(self, token: str) -> Bot | None:
        """The (not removed) bot this token belongs to, or None. Suspension is the caller's
        business: the returned Bot says whether it is suspended."""
        digest = hash_token(token)
        row = self.db.execute(
            f"SELECT {_BOT_COLUMNS}, token_hash FROM bots WHERE token_hash = ? AND removed IS NULL",
            (digest,),
        ).fetchone()
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
        return {
            name: BotAccess(token_hash, bool(suspended), reason)
            for name, token_hash, suspended, reason in self.db.execute(
                "SELECT name, token_hash, suspended, suspended_reason FROM bots "
                f"WHERE removed IS NULL AND name IN ({marks})",
                names,
            )
        }

    @sqlite_errors
    def suspend_bot(self, name: str, reason: str | None) -> None:
        """Suspend a bot (reason given) or lift its suspension (reason None). A reason is shown
        on the public pages, so it is kept to MAX_REASON characters."""
        if reason is not None and len(reason) > MAX_REASON:
            raise RegistryError(
                f"a suspension reason is at most {MAX_REASON} characters, not {len(reason)}; "
                "say it in fewer words (the owner reads it on the bot's page)"
            )
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE bots SET suspended = ?, suspended_reason = ? "
                "WHERE name = ? AND removed IS NULL",
                (int(reason is not None), reason, name),
            )
            if cur.rowcount == 0:
                raise UnknownBot(f"there is no bot called {name!r}; see arena bot list")

    # ------------------------------------------------------------------------------ ladders
