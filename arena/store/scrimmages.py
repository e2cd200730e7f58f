"""Scrimmages: unrated duplicate sets a bot's owner asks for against opponents of their choice
(docs/competitions.md, "Scrimmages"). A scrimmage is stored with its whole schedule when it is
asked for (each set one deal, the seats rotated through every position), then its matches are
played one after another by the service (arena/service/scrimmages.py) and recorded here. They
are no ladder's matches: nothing here touches a rating, a ladder or a public page; their
results and replays are the owner's (the owners' API, key only).

The quota is in sets per bot per 24 hours (a setting of `arena serve`, kept in the store as the
uploads' is): checked in the transaction that stores the request, so that two requests at once
cannot both take the last sets.

A set's replays are shown only once every match of the set has finished: its deal is that of
the set's later rotations (as on the web: docs/web.md, disclosure).
"""

from __future__ import annotations

import json
import math
import random
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Sequence

from arena.results import MatchResult

from .errors import RegistryError, StoreError, sqlite_errors
from .quotas import DAY_S, Quotas, _duration
from .schema import now

DEFAULT_SCRIMMAGE_SETS_PER_DAY = 10
SCRIMMAGE_SETS_PER_DAY = "scrimmage_sets_per_day"  # its name in service_settings

PENDING = "pending"  # asked for, no match played yet
RUNNING = "running"  # some of its matches played
DONE = "done"  # every match played (or failed)
FAILED = "failed"  # it could not go on (an opponent removed, say): `note` says why
SCRIMMAGE_STATUSES = (PENDING, RUNNING, DONE, FAILED)


class ScrimmageLimitReached(RegistryError):
    """The bot has had its scrimmage sets for the last 24 hours."""

    def __init__(self, family: str, per_day: int, used: int, asked: int, retry_at: float | None):
        self.retry_at = retry_at
        when = (
            ""
            if retry_at is None
            else f"; more may be asked for at "
            f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(math.ceil(retry_at)))} (in "
            f"{_duration(retry_at - now())})"
        )
        super().__init__(
            f"bot {family!r} may have {per_day} scrimmage set{'s' if per_day != 1 else ''} in 24 "
            f"hours; it has had {used}, and asked for {asked} more{when}"
        )

    def retry_after_s(self) -> int:
        return max(1, math.ceil((self.retry_at or now()) - now()))


class UnknownScrimmage(StoreError):
    """No such scrimmage of this bot."""


@dataclass(frozen=True, slots=True)
class ScrimmageMatch:
    index: int
    set_index: int
    rotation: int
    seed: int
    seats: tuple[str, ...]
    status: str  # pending, completed or failed
    scores: tuple[int, ...] | None
    ranks: tuple[int, ...] | None
    faults: tuple[dict[str, Any], ...]
    note: str | None  # why a failed match was not played


@dataclass(frozen=True, slots=True)
class Scrimmage:
    id: int
    family: str
    bot: str  # the version that plays (its newest that passed, when asked for)
    opponents: tuple[str, ...]
    sets: int
    ladder: str  # whose game, variant and table size it plays
    status: str
    requested: float
    finished: float | None
    note: str | None
    matches: tuple[ScrimmageMatch, ...] = ()

    def to_dict(self, replays: dict[int, dict] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "bot": self.bot,
            "opponents": list(self.opponents),
            "sets": self.sets,
            "ladder": self.ladder,
            "status": self.status,
            "requested": self.requested,
            "finished": self.finished,
            "note": self.note,
            "rated": False,
        }
        if self.matches:
            out["matches"] = [
                {
                    "index": m.index,
                    "set": m.set_index,
                    "rotation": m.rotation,
                    "seats": list(m.seats),
                    "status": m.status,
                    "scores": None if m.scores is None else list(m.scores),
                    "ranks": None if m.ranks is None else list(m.ranks),
                    "faults": list(m.faults),
                    "note": m.note,
                    **({"replay": replays[m.index]} if replays and m.index in replays else {}),
                }
                for m in self.matches
            ]
            out["summary"] = summary(self)
        return out


def summary(scrimmage: Scrimmage) -> dict[str, Any]:
    """Per bot over the completed matches: matches, mean score, wins, faults; and the bot's
    mean margin over each opponent (its score minus theirs, a match, in the same matches)."""
    per: dict[str, dict[str, float]] = {}
    margins: dict[str, list[float]] = {o: [] for o in scrimmage.opponents}
    for m in scrimmage.matches:
        if m.scores is None or m.ranks is None:
            continue
        faulted = {f["seat"] for f in m.faults}
        for seat, bot in enumerate(m.seats):
            row = per.setdefault(bot, {"matches": 0, "score": 0.0, "wins": 0, "faults": 0})
            row["matches"] += 1
            row["score"] += m.scores[seat]
            row["wins"] += m.ranks[seat] == 0
            row["faults"] += seat in faulted
        mine = m.scores[m.seats.index(scrimmage.bot)]
        for seat, bot in enumerate(m.seats):
            if bot in margins:
                margins[bot].append(mine - m.scores[seat])
    return {
        "bots": {
            bot: {
                "matches": int(r["matches"]),
                "mean_score": r["score"] / r["matches"],
                "wins": int(r["wins"]),
                "faults": int(r["faults"]),
            }
            for bot, r in per.items()
        },
        "margin_over": {o: (sum(v) / len(v) if v else None) for o, v in margins.items()},
    }


class Scrimmages(Quotas):
    """The scrimmages' part of the Store."""

    @sqlite_errors
    def scrimmage_sets_per_day(self, given: int | None = None) -> int:
        """The scrimmage sets a bot's owner may ask for in 24 hours (service_setting; 0: none)."""
        return self.service_setting(
            SCRIMMAGE_SETS_PER_DAY, given, DEFAULT_SCRIMMAGE_SETS_PER_DAY, 0
        )

    @sqlite_errors
    def request_scrimmage(
        self,
        family: str,
        bot: str,
        opponents: Sequence[str],
        sets: int,
        ladder: str,
        per_day: int,
    ) -> Scrimmage:
        """Store a scrimmage of `sets` duplicate sets of the version `bot` (of `family`)
        against `opponents` (bot rows, as resolved by the caller), with its schedule: each set
        a fresh deal, the seats in random order, then rotated through every position. Raises
        ScrimmageLimitReached if that takes the bot past `per_day` sets in 24 hours."""
        if sets < 1:
            raise RegistryError(f"a scrimmage is at least one set, not {sets}")
        seats = [bot, *opponents]
        if len(set(seats)) != len(seats):
            raise RegistryError(f"a scrimmage seats each bot once: {seats}")
        # The operating system's randomness: one set's deal, shown once the set is over, must
        # tell nothing of the next set's (a seeded generator's outputs would, in numbers).
        rng = random.SystemRandom()
        with self._write() as conn:
            since = now() - DAY_S
            rows = conn.execute(
                "SELECT requested, sets FROM scrimmages WHERE family = ? AND requested > ? "
                "ORDER BY requested",
                (family, since),
            ).fetchall()
            used = sum(r[1] for r in rows)
            if used + sets > per_day:
                # when enough of the window's sets have left it for these to fit
                retry_at, freed = None, per_day - used
                for requested, n in rows:
                    freed += n
                    if freed >= sets:
                        retry_at = requested + DAY_S
                        break
                raise ScrimmageLimitReached(family, per_day, used, sets, retry_at)
            cur = conn.execute(
                "INSERT INTO scrimmages (family, bot, opponents, sets, ladder, status, "
                "requested) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (family, bot, json.dumps(list(opponents)), sets, ladder, PENDING, now()),
            )
            scrimmage_id = int(cur.lastrowid)  # type: ignore[arg-type]
            rows_out: list[tuple] = []
            for s in range(sets):
                seating = list(seats)
                rng.shuffle(seating)
                seed = rng.randrange(2**53)
                for r in range(len(seating)):
                    rotated = seating[r:] + seating[:r]
                    rows_out.append(
                        (scrimmage_id, len(rows_out), s, r, seed, json.dumps(rotated), PENDING)
                    )
            conn.executemany(
                "INSERT INTO scrimmage_matches (scrimmage_id, idx, set_index, rotation, seed, "
                "seats, status) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows_out,
            )
        return self.get_scrimmage(family, scrimmage_id)

    @sqlite_errors
    def scrimmages_of(self, family: str) -> list[Scrimmage]:
        """The bot's scrimmages, newest first (without their matches)."""
        return [
            _scrimmage(r)
            for r in self.db.execute(
                f"SELECT {_COLUMNS} FROM scrimmages WHERE family = ? ORDER BY id DESC", (family,)
            )
        ]

    @sqlite_errors
    def get_scrimmage(self, family: str, scrimmage_id: int) -> Scrimmage:
        """One of the bot's scrimmages with its matches (UnknownScrimmage: none such)."""
        row = self.db.execute(
            f"SELECT {_COLUMNS} FROM scrimmages WHERE id = ? AND family = ?",
            (scrimmage_id, family),
        ).fetchone()
        if row is None:
            raise UnknownScrimmage(f"bot {family!r} has no scrimmage {scrimmage_id}")
        matches = tuple(
            ScrimmageMatch(
                index=r[0],
                set_index=r[1],
                rotation=r[2],
                seed=r[3],
                seats=tuple(json.loads(r[4])),
                status=r[5],
                scores=None if r[6] is None else tuple(json.loads(r[6])),
                ranks=None if r[7] is None else tuple(json.loads(r[7])),
                faults=tuple(json.loads(r[8] or "[]")),
                note=r[9],
            )
            for r in self.db.execute(
                "SELECT idx, set_index, rotation, seed, seats, status, scores, ranks, faults, "
                "note FROM scrimmage_matches WHERE scrimmage_id = ? ORDER BY idx",
                (scrimmage_id,),
            )
        )
        return _scrimmage(row, matches)

    @sqlite_errors
    def scrimmage_replays(self, family: str, scrimmage_id: int) -> dict[int, dict]:
        """The replays of the scrimmage's matches whose set has finished, by match index."""
        scrimmage = self.get_scrimmage(family, scrimmage_id)
        open_sets = {m.set_index for m in scrimmage.matches if m.status == PENDING}
        out = {}
        for idx, set_index, doc in self.db.execute(
            "SELECT idx, set_index, replay FROM scrimmage_matches WHERE scrimmage_id = ? "
            "AND replay IS NOT NULL ORDER BY idx",
            (scrimmage_id,),
        ):
            if set_index not in open_sets:
                out[idx] = json.loads(doc)
        return out

    @sqlite_errors
    def unfinished_scrimmages(self) -> list[tuple[int, str]]:
        """(id, family) of every scrimmage still to play (at a start: those a stop left)."""
        return [
            (r[0], r[1])
            for r in self.db.execute(
                "SELECT id, family FROM scrimmages WHERE status IN (?, ?) ORDER BY id",
                (PENDING, RUNNING),
            )
        ]

    @sqlite_errors
    def record_scrimmage_match(
        self, scrimmage_id: int, index: int, result: MatchResult, replay: dict[str, Any]
    ) -> None:
        """A played scrimmage match's result and replay (the match stays unrated)."""
        faults = [
            {"seat": f.seat, "kind": f.kind, "move": f.move, "detail": f.detail}
            for f in result.faults
        ]
        with self._write() as conn:
            self._settle_scrimmage_match(
                conn,
                scrimmage_id,
                index,
                "completed",
                (json.dumps(list(result.scores)), json.dumps(list(result.ranks)),
                 json.dumps(faults), json.dumps(replay), None),
            )  # fmt: skip

    @sqlite_errors
    def fail_scrimmage_match(self, scrimmage_id: int, index: int, why: str) -> None:
        """A scrimmage match that could not be played (the server's fault, not a bot's)."""
        with self._write() as conn:
            self._settle_scrimmage_match(
                conn, scrimmage_id, index, "failed", (None, None, None, None, why)
            )

    @staticmethod
    def _settle_scrimmage_match(
        conn: sqlite3.Connection, scrimmage_id: int, index: int, status: str, values: tuple
    ) -> None:
        changed = conn.execute(
            "UPDATE scrimmage_matches SET status = ?, scores = ?, ranks = ?, faults = ?, "
            "replay = ?, note = ? WHERE scrimmage_id = ? AND idx = ? AND status = ?",
            (status, *values, scrimmage_id, index, PENDING),
        ).rowcount
        if not changed:
            raise StoreError(f"scrimmage {scrimmage_id} has no pending match {index}")
        left = conn.execute(
            "SELECT count(*) FROM scrimmage_matches WHERE scrimmage_id = ? AND status = ?",
            (scrimmage_id, PENDING),
        ).fetchone()[0]
        conn.execute(
            "UPDATE scrimmages SET status = ?, finished = ? WHERE id = ?",
            (RUNNING if left else DONE, None if left else now(), scrimmage_id),
        )

    @sqlite_errors
    def fail_scrimmage(self, scrimmage_id: int, why: str) -> None:
        """End a scrimmage that cannot go on: its pending matches fail, saying why."""
        with self._write() as conn:
            conn.execute(
                "UPDATE scrimmage_matches SET status = 'failed', note = ? "
                "WHERE scrimmage_id = ? AND status = ?",
                (why, scrimmage_id, PENDING),
            )
            conn.execute(
                "UPDATE scrimmages SET status = ?, note = ?, finished = ? WHERE id = ?",
                (FAILED, why, now(), scrimmage_id),
            )


_COLUMNS = "id, family, bot, opponents, sets, ladder, status, requested, finished, note"


def _scrimmage(row: Sequence[Any], matches: tuple[ScrimmageMatch, ...] = ()) -> Scrimmage:
    return Scrimmage(
        id=row[0],
        family=row[1],
        bot=row[2],
        opponents=tuple(json.loads(row[3])),
        sets=row[4],
        ladder=row[5],
        status=row[6],
        requested=row[7],
        finished=row[8],
        note=row[9],
        matches=matches,
    )
