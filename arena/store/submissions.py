"""Owners and submitted versions as stored: each bot's owner key (kept only as a hash, apart
from its play tokens: the key lets a person submit versions and read their logs), each upload's
verification verdict, and which passed version a ladder naming the bot plays (the newest active
one: a pass makes the new version active and retires the older, a rollback makes an earlier
passed version the active one again). The uploads themselves are versions made by
Registry.update_bot, the one way a version is made."""

from __future__ import annotations

import json
from typing import Any, Sequence

from arena.tokens import hash_token, new_owner_key

from .errors import DuplicateBot, RegistryError, UnknownBot, sqlite_errors
from .records import Submission
from .registry import ACTIVE, FAILED, RETIRED, VERIFYING, _same_digest, check_bot_name
from .schema import StoreFile, now

MAX_LOG_EXCERPT = 4000  # characters of a failed version's log kept for its owner

_SUBMISSION_COLUMNS = (
    "bot, family, version, digest, submitted, verdict, log_excerpt, opponents, finished, "
    "replay IS NOT NULL"
)


def _submission(row: Sequence[Any]) -> Submission:
    verdict = row[5]
    return Submission(
        bot=row[0],
        family=row[1],
        version=row[2],
        digest=row[3],
        submitted=row[4],
        passed=None if verdict is None else verdict == "passed",
        verdict=verdict,
        log_excerpt=row[6],
        opponents=tuple(json.loads(row[7])) if row[7] else (),
        finished=row[8],
        replayed=bool(row[9]),
    )


class Submissions(StoreFile):
    """The owners' and submissions' part of the Store."""

    # ------------------------------------------------------------------------- owner keys

    @sqlite_errors
    def new_owner_key(self, family: str, *, rotate: bool = False) -> str:
        """Give the bot `family` an owner key and return it (shown once: only its hash is
        kept). rotate=False: the bot must have none yet (a bot with no version yet may be given
        one: its first upload is its version 1); rotate=True: it replaces the bot's key, and
        the old one stops working at once."""
        check_bot_name(family)
        key = new_owner_key()
        with self._write() as conn:
            had = conn.execute("SELECT 1 FROM bot_owners WHERE family = ?", (family,)).fetchone()
            rows = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE removed IS NULL) FROM bots "
                "WHERE family = ?",
                (family,),
            ).fetchone()
            if rows[0] and not rows[1]:
                raise UnknownBot(f"bot {family!r} was removed; it takes no owner key")
            if rotate and not had:
                raise RegistryError(
                    f"bot {family!r} has no owner key to rotate; give it one with "
                    f"arena bot add-owner {family}"
                )
            if not rotate and had:
                raise DuplicateBot(
                    f"bot {family!r} already has an owner key; to replace it, rotate it "
                    f"(arena bot rotate-owner-key {family})"
                )
            conn.execute(
                "INSERT INTO bot_owners (family, key_hash, created) VALUES (?, ?, ?) "
                "ON CONFLICT (family) DO UPDATE SET key_hash = excluded.key_hash, "
                "created = excluded.created",
                (family, hash_token(key), now()),
            )
        return key

    @sqlite_errors
    def owner_key_matches(self, family: str, key: str) -> bool:
        """Whether `key` is the bot `family`'s current owner key: the one check of an owner key
        (the owners' API's, arena/service/owners.py, and the web's, arena/web/owners.py), its
        hash compared with the kept one in constant time (hmac.compare_digest). False for a
        bot without one, and for a database from before owner keys (a read-only open of an
        older schema, which cannot migrate)."""
        if not self.has_table("bot_owners"):
            return False
        row = self.db.execute(
            "SELECT key_hash FROM bot_owners WHERE family = ?", (family,)
        ).fetchone()
        return row is not None and _same_digest(row[0], hash_token(key))

    # ------------------------------------------------------------------------ submissions

    @sqlite_errors
    def submissions(self, family: str) -> list[Submission]:
        """The bot's uploaded versions, oldest first."""
        return [
            _submission(row)
            for row in self.db.execute(
                f"SELECT {_SUBMISSION_COLUMNS} FROM submissions WHERE family = ? ORDER BY version",
                (family,),
            )
        ]

    @sqlite_errors
    def verification_replay(self, bot: str) -> dict[str, Any] | None:
        """The replay of the version `bot`'s verification match (None: none played)."""
        row = self.db.execute("SELECT replay FROM submissions WHERE bot = ?", (bot,)).fetchone()
        return json.loads(row[0]) if row is not None and row[0] else None

    @sqlite_errors
    def record_verification(
        self,
        bot: str,
        passed: bool,
        verdict: str,
        log_excerpt: str | None = None,
        opponents: Sequence[str] = (),
        replay: dict[str, Any] | None = None,
    ) -> str:
        """Store the verdict of the version `bot` (being verified) and return its new status:
        failed; or, passed, active (the older active versions retired) unless a newer version
        passed meanwhile (then it is retired at once: the newest passed version plays)."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT family, version, status FROM bots WHERE name = ? AND removed IS NULL",
                (bot,),
            ).fetchone()
            if row is None:
                raise UnknownBot(f"there is no bot called {bot!r}; see arena bot list")
            family, version, status = row
            if status != VERIFYING:
                raise RegistryError(f"version {bot} is {status}, not being verified")
            if not passed:
                status = FAILED
            else:
                newer = conn.execute(
                    "SELECT 1 FROM bots WHERE family = ? AND version > ? AND status = ? "
                    "AND removed IS NULL",
                    (family, version, ACTIVE),
                ).fetchone()
                status = RETIRED if newer else ACTIVE
                if status == ACTIVE:
                    conn.execute(
                        "UPDATE bots SET status = ? WHERE family = ? AND version < ? "
                        "AND status = ?",
                        (RETIRED, family, version, ACTIVE),
                    )
            conn.execute("UPDATE bots SET status = ? WHERE name = ?", (status, bot))
            conn.execute(
                "UPDATE submissions SET verdict = ?, log_excerpt = ?, opponents = ?, "
                "replay = ?, finished = ? WHERE bot = ?",
                (
                    "passed" if passed else verdict,
                    (log_excerpt or "")[-MAX_LOG_EXCERPT:] or None,
                    json.dumps(list(opponents)),
                    json.dumps(replay) if replay is not None else None,
                    now(),
                    bot,
                ),
            )
        return status

    @sqlite_errors
    def versions_verifying(self) -> list[str]:
        """The versions left being verified (by a server that stopped meanwhile)."""
        query = "SELECT name FROM bots WHERE status = ? AND removed IS NULL ORDER BY id"
        return [row[0] for row in self.db.execute(query, (VERIFYING,))]

    @sqlite_errors
    def rollback(self, family: str, version: int) -> str:
        """Make the version `version` of the bot `family`, one that passed (or was made before
        verification existed), the one a ladder naming the bot plays again; every other active
        version of it is retired. Returns that version's bot row name."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT name, status FROM bots WHERE family = ? AND version = ? "
                "AND removed IS NULL",
                (family, version),
            ).fetchone()
            if row is None:
                raise UnknownBot(
                    f"bot {family!r} has no version {version} (or it was removed); see "
                    f"arena bot show {family}"
                )
            name, status = row
            if status not in (ACTIVE, RETIRED):
                raise RegistryError(
                    f"version {version} of bot {family!r} is {status}: only a version that "
                    "passed its verification can be rolled back to"
                )
            conn.execute(
                "UPDATE bots SET status = ? WHERE family = ? AND status = ? AND name != ?",
                (RETIRED, family, ACTIVE, name),
            )
            conn.execute("UPDATE bots SET status = ? WHERE name = ?", (ACTIVE, name))
        return name
