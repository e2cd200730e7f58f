"""How many uploads a bot's owner may make: the limit per day, a setting of `arena serve` kept
in the store (it holds across restarts), and the count of a bot's uploads in the last 24 hours,
checked before an upload is read and again in the transaction that makes it a version
(Registry.update_bot), so that two uploads at once cannot both take the last one. An owner key
is a bot's, so the limit is per bot. What counts is an upload that became a version (whatever
its verdict, and removed or not); a refused one leaves nothing, and counts for nothing."""

from __future__ import annotations

import json
import math
import sqlite3
import time

from .errors import RegistryError, sqlite_errors
from .schema import StoreFile, now

DAY_S = 24 * 3600.0
DEFAULT_UPLOADS_PER_DAY = 5  # as Kaggle's competitions allow
UPLOADS_PER_DAY = "uploads_per_day"  # its name in service_settings


class UploadLimitReached(RegistryError):
    """The bot has had its uploads for the last 24 hours; `retry_at` is when the next may be."""

    def __init__(self, family: str, per_day: int, retry_at: float):
        self.retry_at = retry_at
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(math.ceil(retry_at)))
        super().__init__(
            f"bot {family!r} has had {per_day} upload{'s' if per_day != 1 else ''} in the last "
            f"24 hours, the most this server takes; the next may be uploaded at {when} (in "
            f"{_duration(retry_at - now())}). Test a version locally first (arena match)"
        )

    def retry_after_s(self) -> int:
        """Whole seconds until the next upload may be made (at least 1): for Retry-After."""
        return max(1, math.ceil(self.retry_at - now()))


def _duration(seconds: float) -> str:
    hours, minutes = divmod(max(1, round(seconds / 60)), 60)
    return " ".join(([f"{hours} h"] if hours else []) + ([f"{minutes} min"] if minutes else []))


def refuse_over_limit(conn: sqlite3.Connection, family: str, per_day: int) -> None:
    """Raise UploadLimitReached if the bot `family` has had `per_day` uploads in the last 24
    hours (inside the caller's transaction, when it is the one that adds the upload)."""
    since = now() - DAY_S
    rows = conn.execute(
        "SELECT submitted FROM submissions WHERE family = ? AND submitted > ? "
        "ORDER BY submitted DESC LIMIT ?",
        (family, since, per_day),
    ).fetchall()
    if len(rows) >= per_day:  # the oldest of the last `per_day` leaves the window first
        raise UploadLimitReached(family, per_day, rows[-1][0] + DAY_S)


class Quotas(StoreFile):
    """The upload limit's part of the Store."""

    def service_setting(self, name: str, given: int | None, default: int, least: int) -> int:
        """An integer setting of `arena serve` kept in the store: `given` (its flag), which is
        stored and so holds across restarts; else the one stored last; else `default`."""
        if given is not None:
            if given < least:
                raise RegistryError(f"{name.replace('_', ' ')} is at least {least}, not {given}")
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO service_settings (name, value, updated) VALUES (?, ?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET value = excluded.value, "
                    "updated = excluded.updated",
                    (name, json.dumps(given), now()),
                )
            return given
        if not self.has_table("service_settings"):  # a read-only open of an older schema
            return default
        row = self.db.execute(
            "SELECT value FROM service_settings WHERE name = ?", (name,)
        ).fetchone()
        return json.loads(row[0]) if row is not None else default

    @sqlite_errors
    def uploads_per_day(self, given: int | None = None) -> int:
        """The uploads a bot's owner may make in 24 hours (service_setting)."""
        return self.service_setting(UPLOADS_PER_DAY, given, DEFAULT_UPLOADS_PER_DAY, 1)

    @sqlite_errors
    def check_upload_allowed(self, family: str, per_day: int) -> None:
        """UploadLimitReached if the bot may not upload now (before its upload is read)."""
        refuse_over_limit(self.db.conn, family, per_day)
