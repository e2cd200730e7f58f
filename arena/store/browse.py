"""The browsing queries of the web's pages and API (`BrowseQueries`, on a Store opened read-only):
ladders, standings, bots, a filtered and paginated match list, one match with its results and
faults, a bot's recent results, faults and rating history; with the records they return.

Nothing here writes. Each query is shaped to use the store's indexes (docs/web.md lists which,
and the two more indexes that would help).

Match order. Lists are newest first by match id (the order matches were scheduled in). Within one
ladder, ids grow with the schedule index (the store inserts a ladder's matches in index order and
appends later rounds), so a ladder's slice is read through the (ladder_id, status, idx) index in
idx order, which is id order, and stops after a page.
"""

from __future__ import annotations

import heapq
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from arena.results import COMPLETED, FINISHED, MATCH_STATUSES, RUNNING

from .errors import UnknownBot, UnknownLadder
from .rankings import LADDER_HEAD, LADDER_HEAD_SQL, standing_of
from .records import OpeningRound, Standing, from_row
from .schema import one_row

if TYPE_CHECKING:
    from . import Store

# Whether a match's duplicate set is finished (every match of it completed or abandoned: only
# then is its deal shown, arena/web/disclosure.py), in SQL for a match row `m` of ladder `l`. A
# set's matches are consecutive (the schedule writes them so, and so do Store.add_set and
# Store.append_matches), so they are looked for among the set size - 1 matches either side of
# `m`, through the (ladder_id, idx) index, whatever the size of the ladder. A set has
# table_size matches, or `set_size` in the ladder's settings (a comparison's deal is played by
# both versions: 2k matches, arena/compare), or one (a ladder's opening round, arena.schedule:
# the window then finds it alone, the only match with its set index).
SET_SIZE_SQL = "coalesce(json_extract(l.settings, '$.set_size'), l.table_size)"
SET_FINISHED_SQL = (
    "NOT EXISTS (SELECT 1 FROM matches o WHERE o.ladder_id = m.ladder_id AND o.idx BETWEEN "
    f"m.idx - {SET_SIZE_SQL} + 1 AND m.idx + {SET_SIZE_SQL} - 1 AND o.set_index = m.set_index AND "
    f"o.status NOT IN ({', '.join(repr(s) for s in FINISHED)}))"
)


def set_finished(statuses: Sequence[str]) -> bool:
    """Whether a set whose matches have these statuses is finished."""
    return all(s in FINISHED for s in statuses)


class UnknownMatch(LookupError):
    """No match with that ladder and index."""


def _no_ladder(ladder: str) -> UnknownLadder:
    return UnknownLadder(f"there is no ladder called {ladder!r}")


def _no_bot(bot: str) -> UnknownBot:
    return UnknownBot(f"there is no bot called {bot!r}")


def _no_match(ladder: str, index: int) -> UnknownMatch:
    return UnknownMatch(f"ladder {ladder!r} has no match {index}")


# ------------------------------------------------------------------------------------ records


@dataclass(slots=True)
class LadderRow:
    name: str
    game: str
    options: dict[str, Any]
    table_size: int
    rating_mode: str
    bots: int
    scheduled: int
    completed: int
    rated: int
    created: float
    leader: str | None
    comparison: bool = False  # the matches of an `arena compare` (its own page: /comparisons/)
    # Its remote bots (arena/ladder/remote.py): its page says what they mean for fair play.
    remote_bots: int = 0
    # Its opening round's matches (0: none) and how many completed (records.OpeningRound).
    opening: int = 0
    opening_completed: int = 0

    @property
    def opening_round(self) -> OpeningRound | None:
        return OpeningRound.of(self)


@dataclass(slots=True)
class BotRow:
    name: str
    remote: bool
    created: float
    suspended: bool
    suspended_reason: str | None
    removed: bool
    family: str  # the bot's name; this row is its version `version` (docs/bots.md#versions)
    version: int
    note: str | None
    status: str = "active"  # verifying, failed, active, retired (records.Bot.status)


@dataclass(slots=True)
class BotVersion:
    """One version of a bot and its standing in each ladder it plays in."""

    bot: BotRow
    ladders: list[Standing]


@dataclass(slots=True)
class SeatRow:
    seat: int
    bot: str
    score: int | None
    rank: int | None
    faults: int
    fault_kinds: list[str]


@dataclass(slots=True)
class MatchRow:
    id: int
    ladder: str
    index: int
    status: str
    set_index: int  # the duplicate set: its rotations share it (one deal, seats rotated)
    rotation: int
    set_finished: bool  # every match of the set completed or abandoned (see disclosure.py)
    seats: list[SeatRow]
    started: float | None
    finished: float | None
    duration_ms: float | None
    rated: bool
    reason: str | None


@dataclass(slots=True)
class MatchPage:
    matches: list[MatchRow]
    next: int | None  # pass as `before` for the next (older) page; None on the last page
    filters: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class FaultRow:
    ladder: str
    index: int
    seat: int
    bot: str
    kind: str
    move: int
    elapsed_ms: float
    detail: str
    set_finished: bool


@dataclass(slots=True)
class SetMember:
    """One match of a duplicate set, as the match page lists its set."""

    index: int
    rotation: int
    status: str


@dataclass(slots=True)
class MatchDetail:
    match: MatchRow
    game: str
    table_size: int
    options: dict[str, Any]
    set_index: int
    round: int
    rotation: int
    seed: int | None  # None where it is withheld (disclosure.py)
    attempts: int
    node: str | None
    engine_version: str | None
    rating_note: str | None
    faults: list[FaultRow]
    infra_failures: list[dict[str, Any]]
    replay: dict[str, Any] | None
    set_matches: list[SetMember]  # the matches of its set, this one included, by rotation

    @property
    def set_finished(self) -> bool:
        return set_finished([s.status for s in self.set_matches])


@dataclass(slots=True)
class HistoryPoint:
    """A bot's rating after one rated match of a ladder (the match's index)."""

    index: int
    mu: float
    sigma: float


# How the bots table's values become BotRow's fields.
_BOT_CONVERT = {"remote": bool, "suspended": bool, "removed": lambda removed: removed is not None}

# The matches, with their ladders, a bot's rating history lists (h: its rating_history rows).
_HISTORY_OF_BOT = (
    "FROM rating_history h JOIN matches m ON m.id = h.match_id "
    "JOIN ladders l ON l.id = m.ladder_id WHERE h.bot_id = ?"
)
# A bot's most recent faulted seats (r: match_id, seat; parameters: the bot's id and how many),
# through its result rows that counted faults, so the bot index is used rather than a scan of
# every fault.
_FAULTED_SEATS = (
    "(SELECT match_id, seat FROM results WHERE bot_id = ? AND faults > 0 "
    "ORDER BY match_id DESC LIMIT ?) r"
)
_FAULT_ROW = "ladder index seat kind move elapsed_ms detail set_finished"
# The match columns matches_by_id reads, as MatchRow's fields (seats: replaced by SeatRows).
_MATCH_ROW = (
    "id ladder index status seats started finished duration_ms rated reason set_index rotation "
    "set_finished"
)
_MATCH_CONVERT = {"rated": bool, "set_finished": bool}

# ------------------------------------------------------------------------------------ queries


@dataclass(frozen=True, slots=True)
class ExportRow:
    """A completed match of a finished set, as the public export writes it."""

    ladder: str
    index: int
    set_index: int
    round: int
    rotation: int
    finished: float
    replay: dict[str, Any]


@dataclass(frozen=True, slots=True)
class MatchLog:
    """What a launched bot wrote during one match (arena.store.match_log's data: moves, tail,
    dropped), for its owner."""

    seat: int
    bot: str
    log: dict[str, Any]
    created: float


class BrowseQueries:
    """The browsing queries (the web's pages and API) on one Store, opened read-only."""

    def __init__(self, store: "Store"):
        self.store = store
        self.db = store.db

    def _ladder_id(self, ladder: str) -> tuple[int, str, int, str]:
        row = one_row(
            self.db,
            "SELECT id, game, table_size, options FROM ladders WHERE name = ?",
            (ladder,),
            _no_ladder(ladder),
        )
        return row[0], row[1], row[2], row[3]

    def _set_size(self, ladder_id: int) -> int:
        """How many matches a set of the ladder has (SET_SIZE_SQL)."""
        return int(
            self.db.execute(
                f"SELECT {SET_SIZE_SQL} FROM ladders l WHERE l.id = ?", (ladder_id,)
            ).fetchone()[0]
        )

    def _bot_id(self, bot: str) -> int:
        return int(one_row(self.db, "SELECT id FROM bots WHERE name = ?", (bot,), _no_bot(bot))[0])

    def _bot_names(self) -> dict[int, str]:
        return dict(self.db.execute("SELECT id, name FROM bots").fetchall())

    # ---------------------------------------------------------------------------- ladders

    def ladders(self) -> list[LadderRow]:
        rows = self.db.execute(
            f"SELECT {LADDER_HEAD_SQL}, l.created, "
            "(SELECT count(*) FROM ladder_bots lb WHERE lb.ladder_id = l.id), "
            "CASE WHEN l.rated_through THEN (SELECT b.name FROM ratings r "
            " JOIN bots b ON b.id = r.bot_id WHERE r.ladder_id = l.id "
            " ORDER BY r.conservative DESC, r.mu DESC, b.name LIMIT 1) END,"
            " json_extract(l.settings, '$.comparison') IS NOT NULL,"
            " (SELECT count(*) FROM ladder_bots lb JOIN bots b ON b.id = lb.bot_id"
            "  WHERE lb.ladder_id = l.id AND (b.remote OR b.command IS NULL))"
            " FROM ladders l ORDER BY l.created DESC, l.id DESC"
        ).fetchall()
        return [
            from_row(
                LadderRow,
                f"name {LADDER_HEAD} created bots leader comparison remote_bots",
                r,
                {"options": json.loads, "comparison": bool},
            )
            for r in rows
        ]

    def ladder_pace(self, recent: int = 20) -> dict[str, "LadderPace"]:
        """Each ladder's matches running now and its recent pace: completed matches an hour
        over its last `recent` completed ones (None with fewer than 3 of them, or all finished
        at once). Read through the matches' status index: no scan of a big ladder."""
        running = dict(
            self.db.execute(
                "SELECT l.name, count(m.id) FROM ladders l LEFT JOIN matches m "
                "ON m.ladder_id = l.id AND m.status = ? GROUP BY l.id",
                (RUNNING,),
            ).fetchall()
        )
        out = {}
        for ladder_id, name in self.db.execute("SELECT id, name FROM ladders"):
            times = [
                r[0]
                for r in self.db.execute(
                    "SELECT finished FROM matches WHERE ladder_id = ? AND status = ? "
                    "ORDER BY idx DESC LIMIT ?",
                    (ladder_id, COMPLETED, recent),
                )
                if r[0] is not None
            ]
            span = max(times) - min(times) if len(times) >= 3 else 0.0
            per_hour = (len(times) - 1) / span * 3600 if span > 0 else None
            out[name] = LadderPace(running.get(name, 0), per_hour)
        return out

    def ratings_back(self, ladder: str, back: int) -> dict[str, tuple[float, float]] | None:
        """Each bot's rating (mu, sigma) in the ladder as it stood `back` completed matches
        ago (a bot rated only since: absent), or None if the ladder has not completed more
        than `back`. One indexed look-up a bot (rating_history_by_bot): no scan of the
        ladder's history."""
        ladder_id = self._ladder_id(ladder)[0]
        cut = self.db.execute(
            "SELECT id FROM matches WHERE ladder_id = ? AND status = ? "
            "ORDER BY idx DESC LIMIT 1 OFFSET ?",
            (ladder_id, COMPLETED, back),
        ).fetchone()
        if cut is None:
            return None
        names = self._bot_names()
        out = {}
        for (bot_id,) in self.db.execute(
            "SELECT bot_id FROM ladder_bots WHERE ladder_id = ?", (ladder_id,)
        ).fetchall():
            row = self.db.execute(
                "SELECT h.mu, h.sigma FROM rating_history h JOIN matches m ON m.id = h.match_id "
                "WHERE h.bot_id = ? AND h.match_id <= ? AND m.ladder_id = ? "
                "ORDER BY h.match_id DESC LIMIT 1",
                (bot_id, cut[0], ladder_id),
            ).fetchone()
            if row is not None:
                out[names.get(bot_id, f"#{bot_id}")] = (row[0], row[1])
        return out

    def ladder_history(self, ladder: str, bots: Sequence[str]) -> dict[str, list[HistoryPoint]]:
        """The rating history in the ladder of each of `bots` (match index order), each
        through the bots' history index."""
        ladder_id = self._ladder_id(ladder)[0]
        out = {}
        for bot in bots:
            out[bot] = [
                HistoryPoint(idx, mu, sigma)
                for idx, mu, sigma in self.db.execute(
                    "SELECT m.idx, h.mu, h.sigma FROM rating_history h "
                    "JOIN matches m ON m.id = h.match_id "
                    "WHERE h.bot_id = ? AND m.ladder_id = ? ORDER BY h.match_id",
                    (self._bot_id(bot), ladder_id),
                )
            ]
        return out

    def bot_health(self) -> list["BotHealth"]:
        """Every bot not removed, for the organiser: suspended or not (and why), its completed
        matches, those it faulted in, its faults and their kinds, the last match it faulted in;
        suspended ones first, then by fault rate."""
        rows = self.db.execute(
            "SELECT b.name, b.suspended, b.suspended_reason, b.remote, count(r.match_id), "
            "coalesce(sum(r.faults > 0), 0), coalesce(sum(r.faults), 0), "
            "group_concat(nullif(r.fault_kinds, '')), max(CASE WHEN r.faults > 0 THEN "
            "r.match_id END) FROM bots b LEFT JOIN results r ON r.bot_id = b.id "
            "WHERE b.removed IS NULL GROUP BY b.id"
        ).fetchall()
        last = {
            r[0]: (r[1], r[2])
            for r in self.db.execute(
                "SELECT m.id, l.name, m.idx FROM matches m JOIN ladders l ON l.id = m.ladder_id "
                f"WHERE m.id IN ({', '.join(str(int(r[8])) for r in rows if r[8]) or 'NULL'})"
            )
        }
        out = []
        for name, suspended, reason, remote, matches, faulted, faults, kinds, last_id in rows:
            counted: dict[str, int] = {}
            for kind in (kinds or "").split(","):
                if kind:
                    counted[kind] = counted.get(kind, 0) + 1
            out.append(
                BotHealth(
                    bot=name,
                    suspended=bool(suspended),
                    suspended_reason=reason,
                    remote=bool(remote),
                    matches=matches,
                    faulted=faulted,
                    faults=faults,
                    fault_kinds=dict(sorted(counted.items())),
                    last_fault=last.get(last_id),
                )
            )
        out.sort(key=lambda h: (not h.suspended, -h.fault_rate, h.bot))
        return out

    def ladder(self, ladder: str) -> LadderRow:
        for row in self.ladders():
            if row.name == ladder:
                return row
        raise _no_ladder(ladder)

    def standings(self, ladder: str) -> tuple[LadderRow, tuple[Standing, ...]]:
        """The ladder and its standings (Store.rankings'), best first by the conservative
        rating."""
        try:
            table = self.store.rankings(ladder)
        except UnknownLadder:
            raise _no_ladder(ladder) from None
        return self.ladder(ladder), table.standings

    # ------------------------------------------------------------------------------- bots

    _BOT_COLUMNS = (
        "name, remote, created, suspended, suspended_reason, removed, family, version, note, status"
    )
    _BOT_ROW = f"SELECT {_BOT_COLUMNS} FROM bots"

    @classmethod
    def _bot_row(cls, r: Sequence[Any]) -> BotRow:
        return from_row(BotRow, cls._BOT_COLUMNS, r, _BOT_CONVERT)

    def bots(self) -> list[BotRow]:
        """Every bot row, each version of a bot its own (NAME, NAME@2, ...)."""
        return [
            self._bot_row(r) for r in self.db.execute(f"{self._BOT_ROW} ORDER BY family, version")
        ]

    def bot(self, bot: str) -> BotRow:
        return self._bot_row(
            one_row(self.db, f"{self._BOT_ROW} WHERE name = ?", (bot,), _no_bot(bot))
        )

    def versions(self, bot: str) -> list[BotVersion]:
        """Every version of the bot whose row (any version's) is named `bot`, oldest first,
        each with its standing in every ladder it plays in."""
        family = self.bot(bot).family
        return [
            BotVersion(row, self.bot_ladders(row.name))
            for row in (
                self._bot_row(r)
                for r in self.db.execute(
                    f"{self._BOT_ROW} WHERE family = ? ORDER BY version", (family,)
                )
            )
        ]

    def bot_ladders(self, bot: str) -> list[Standing]:
        """The bot's standing in each ladder it plays in (rank among that ladder's bots), newest
        ladder first."""
        row = one_row(
            self.db, "SELECT id, suspended FROM bots WHERE name = ?", (bot,), _no_bot(bot)
        )
        rows = self.db.execute(
            "SELECT l.name, l.game, "
            "(SELECT count(*) FROM ratings o WHERE o.ladder_id = r.ladder_id AND "
            " (o.conservative > r.conservative OR (o.conservative = r.conservative AND "
            "  o.mu > r.mu))), "
            "(SELECT count(*) FROM ratings o WHERE o.ladder_id = r.ladder_id), "
            "r.conservative, r.mu, r.sigma, r.matches, r.score_sum, r.wins, r.faults "
            "FROM ratings r JOIN ladders l ON l.id = r.ladder_id WHERE r.bot_id = ? "
            "ORDER BY l.created DESC, l.id DESC",
            (row[0],),
        ).fetchall()
        return [standing_of(r[0], r[1], r[2] + 1, r[3], (bot, *r[4:], row[1])) for r in rows]

    def rating_history(self, bot: str, ladder: str | None = None) -> dict[str, list[HistoryPoint]]:
        """The bot's rating after each rated match, per ladder (in match index order)."""
        bot_id = self._bot_id(bot)
        sql = f"SELECT l.name, m.idx, h.mu, h.sigma {_HISTORY_OF_BOT}"
        params: list[Any] = [bot_id]
        if ladder is not None:
            sql += " AND m.ladder_id = ?"
            params.append(self._ladder_id(ladder)[0])
        out: dict[str, list[HistoryPoint]] = {}
        for name, idx, mu, sigma in self.db.execute(sql + " ORDER BY h.match_id", params):
            out.setdefault(name, []).append(HistoryPoint(idx, mu, sigma))
        for points in out.values():
            points.sort(key=lambda p: p.index)
        return out

    def bot_faults(self, bot: str, limit: int = 20) -> list[FaultRow]:
        """The bot's most recent faults (_FAULTED_SEATS)."""
        rows = self.db.execute(
            "SELECT l.name, m.idx, f.seat, f.kind, f.move, f.elapsed_ms, f.detail, "
            f"{SET_FINISHED_SQL} FROM {_FAULTED_SEATS} "
            "JOIN faults f ON f.match_id = r.match_id AND f.seat = r.seat "
            "JOIN matches m ON m.id = f.match_id JOIN ladders l ON l.id = m.ladder_id "
            "ORDER BY f.match_id DESC, f.id",
            (self._bot_id(bot), limit),
        ).fetchall()
        return [from_row(FaultRow, _FAULT_ROW, r, {"set_finished": bool}, bot=bot) for r in rows][
            :limit
        ]

    def bot_key_hash(self, bot: str) -> str | None:
        """The hash of the bot's play token (None once removed): only for checking a presented
        token (arena/web/owners.py), never shown."""
        return one_row(self.db, "SELECT token_hash FROM bots WHERE name = ?", (bot,), _no_bot(bot))[
            0
        ]

    def owner_key_matches(self, bot: str, key: str) -> bool:
        """Whether `key` is the owner key of the bot's family (Store.owner_key_matches: hashed,
        compared in constant time). Raises UnknownBot."""
        return self.store.owner_key_matches(self.bot(bot).family, key)

    def bot_fault_logs(self, bot: str, limit: int = 20) -> dict[tuple[str, int, int], str]:
        """The log excerpts kept for the bot's most recent faulted seats (those bot_faults
        lists), by (ladder, match index, seat). Private to the bot's owner and the organiser:
        the caller checks who asks (arena/web/owners.py); no public view calls this. Empty for
        a database from before excerpts were kept."""
        if not self.store.has_table("fault_logs"):
            return {}  # a read-only open of an older schema, which cannot migrate
        rows = self.db.execute(
            f"SELECT l.name, m.idx, g.seat, g.excerpt FROM {_FAULTED_SEATS} "
            "JOIN fault_logs g ON g.match_id = r.match_id AND g.seat = r.seat "
            "JOIN matches m ON m.id = g.match_id JOIN ladders l ON l.id = m.ladder_id",
            (self._bot_id(bot), limit),
        )
        return {(name, idx, seat): excerpt for name, idx, seat, excerpt in rows}

    def match_logs(self, ladder: str, index: int) -> dict[int, "MatchLog"]:
        """What each launched bot of the match wrote during it (arena.store.match_log's data),
        by seat, for the seats that have one kept (not rotated away). Private to each bot's
        owner and the organiser: the caller checks who asks, seat by seat (arena/web/owners.py);
        no public view calls this. Raises UnknownLadder or UnknownMatch."""
        ladder_id, name, _, _ = self._ladder_id(ladder)
        match_id = one_row(
            self.db,
            "SELECT id FROM matches WHERE ladder_id = ? AND idx = ?",
            (ladder_id, index),
            _no_match(name, index),
        )[0]
        if not self.store.has_table("match_logs"):
            return {}  # a read-only open of an older schema, which cannot migrate
        names = self._bot_names()
        rows = self.db.execute(
            "SELECT seat, bot_id, log, created FROM match_logs WHERE match_id = ? ORDER BY seat",
            (match_id,),
        )
        return {
            seat: MatchLog(seat, names.get(bot_id, "?"), json.loads(log), created)
            for seat, bot_id, log, created in rows
        }

    # ---------------------------------------------------------------------------- matches

    def match_list(
        self,
        *,
        ladder: str | None = None,
        bot: str | None = None,
        status: str | None = None,
        before: int | None = None,
        limit: int = 50,
    ) -> MatchPage:
        """Matches newest first, filtered by ladder, bot and status, `limit` per page; `before`
        is the `next` of the previous page. Unknown ladder or bot raise UnknownLadder /
        UnknownBot; an unknown status ValueError."""
        if status is not None and status not in MATCH_STATUSES:
            raise ValueError(f"status must be one of {', '.join(MATCH_STATUSES)}")
        ladder_ids = (
            [self._ladder_id(ladder)[0]]
            if ladder is not None
            else [r[0] for r in self.db.execute("SELECT id FROM ladders")]
        )
        bot_id = self._bot_id(bot) if bot is not None else None
        statuses = [status] if status is not None else list(MATCH_STATUSES)
        cursor = before if before is not None else 1 << 62
        streams: list[Iterable[int]] = []
        for st in statuses:
            if bot_id is not None and st == COMPLETED:
                ladder_id = ladder_ids[0] if ladder is not None else None
                streams.append(self._completed_of_bot(bot_id, ladder_id, cursor, limit + 1))
                continue
            for lid in ladder_ids:
                streams.append(self._slice(lid, st, bot_id, cursor, limit + 1))
        ids = list(heapq.merge(*streams, reverse=True))[: limit + 1]
        return self._page(ids, limit, ladder=ladder, bot=bot, status=status)

    def _page(self, ids: list[int], limit: int, **filters: Any) -> MatchPage:
        """The page of the first `limit` of `ids` (newest first; `limit + 1` of them were read
        to tell whether an older page follows)."""
        shown = ids[:limit]
        return MatchPage(
            matches=self.matches_by_id(shown),
            next=shown[-1] if len(ids) > limit and shown else None,
            filters=filters,
        )

    def _slice(
        self, ladder_id: int, status: str, bot_id: int | None, before: int, limit: int
    ) -> list[int]:
        # Read through matches_by_status (ladder_id, status, idx): no sort, stops at `limit`.
        sql = "SELECT id FROM matches WHERE ladder_id = ? AND status = ? AND id < ?"
        params: list[Any] = [ladder_id, status, before]
        if bot_id is not None:
            sql += " AND EXISTS (SELECT 1 FROM json_each(matches.seats) WHERE value = ?)"
            params.append(bot_id)
        sql += " ORDER BY idx DESC LIMIT ?"
        params.append(limit)
        return [r[0] for r in self.db.execute(sql, params)]

    def _completed_of_bot(
        self,
        bot_id: int,
        ladder_id: int | None,
        before: int,
        limit: int,
        opponent_id: int | None = None,
        faulted: bool = False,
    ) -> list[int]:
        """The ids of the bot's completed matches before `before`, newest first (only the
        ladder's, only those where the opponent sat too, when given; only those where the bot
        faulted, with `faulted`)."""
        # Completed matches have result rows: read them through results_by_bot.
        sql = "SELECT r.match_id FROM results r"
        params: list[Any] = []
        if opponent_id is not None:
            sql = (
                "SELECT DISTINCT r.match_id FROM results r JOIN results o ON "
                "o.match_id = r.match_id AND o.bot_id = ? AND o.seat <> r.seat"
            )
            params.append(opponent_id)
        if ladder_id is not None:
            sql += " JOIN matches m ON m.id = r.match_id AND m.ladder_id = ?"
            params.append(ladder_id)
        sql += " WHERE r.bot_id = ? AND r.match_id < ?"
        if faulted:
            sql += " AND r.faults > 0"
        sql += " ORDER BY r.match_id DESC LIMIT ?"
        params += [bot_id, before, limit]
        return [r[0] for r in self.db.execute(sql, params)]

    def matches_by_id(self, ids: Sequence[int]) -> list[MatchRow]:
        """Match rows with their seats and results, in the order of `ids`."""
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        names = self._bot_names()
        found = {
            r[0]: r
            for r in self.db.execute(
                "SELECT m.id, l.name, m.idx, m.status, m.seats, m.started, m.finished, "
                f"m.duration_ms, m.rated, m.reason, m.set_index, m.rotation, {SET_FINISHED_SQL} "
                f"FROM matches m JOIN ladders l ON l.id = m.ladder_id WHERE m.id IN ({marks})",
                list(ids),
            )
        }
        results: dict[int, dict[int, tuple]] = {}
        for match_id, seat, score, rank, faults, kinds in self.db.execute(
            "SELECT match_id, seat, score, rank, faults, fault_kinds FROM results "
            f"WHERE match_id IN ({marks})",
            list(ids),
        ):
            results.setdefault(match_id, {})[seat] = (score, rank, faults, kinds)
        out = []
        for match_id in ids:
            r = found[match_id]
            seat_results = results.get(match_id, {})
            seats = []
            for seat, bot_id in enumerate(json.loads(r[4])):
                score, rank, faults, kinds = seat_results.get(seat, (None, None, 0, ""))
                seats.append(
                    SeatRow(
                        seat=seat,
                        bot=names.get(bot_id, f"#{bot_id}"),
                        score=score,
                        rank=rank,
                        faults=faults,
                        fault_kinds=[k for k in kinds.split(",") if k],
                    )
                )
            out.append(from_row(MatchRow, _MATCH_ROW, r, _MATCH_CONVERT, seats=seats))
        return out

    def recent_matches(self, bot: str, limit: int = 20) -> list[MatchRow]:
        """The bot's most recent completed matches, over all ladders."""
        bot_id = self._bot_id(bot)
        return self.matches_by_id(self._completed_of_bot(bot_id, None, 1 << 62, limit))

    def match(self, ladder: str, index: int, *, with_replay: bool = True) -> MatchDetail:
        ladder_id, game, table_size, options = self._ladder_id(ladder)
        row = one_row(
            self.db,
            "SELECT id, set_index, round, rotation, seed, attempts, node, engine_version, "
            f"rating_note{', replay' if with_replay else ''} FROM matches "
            "WHERE ladder_id = ? AND idx = ?",
            (ladder_id, index),
            _no_match(ladder, index),
        )
        match_id = row[0]
        summary = self.matches_by_id([match_id])[0]
        names = {s.seat: s.bot for s in summary.seats}
        faults = [
            from_row(
                FaultRow,
                _FAULT_ROW,
                (ladder, index, *f, summary.set_finished),
                bot=names.get(f[0], "?"),
            )
            for f in self.db.execute(
                "SELECT seat, kind, move, elapsed_ms, detail FROM faults "
                "WHERE match_id = ? ORDER BY id",
                (match_id,),
            )
        ]
        infra = [
            {"attempt": a, "node": n, "detail": d, "at": at}
            for a, n, d, at in self.db.execute(
                "SELECT attempt, node, detail, at FROM infra_failures "
                "WHERE match_id = ? ORDER BY id",
                (match_id,),
            )
        ]
        # The set's rotations are consecutive (see SET_FINISHED_SQL).
        set_size = self._set_size(ladder_id)
        members = [
            SetMember(index=i, rotation=r, status=s)
            for i, r, s in self.db.execute(
                "SELECT idx, rotation, status FROM matches WHERE ladder_id = ? AND idx BETWEEN ? "
                "AND ? AND set_index = ? ORDER BY rotation, idx",
                (ladder_id, index - set_size + 1, index + set_size - 1, row[1]),
            )
        ]
        return from_row(
            MatchDetail,
            "set_index round rotation seed attempts node engine_version rating_note",
            row[1:],
            match=summary,
            game=game,
            table_size=table_size,
            options=json.loads(options),
            faults=faults,
            infra_failures=infra,
            replay=json.loads(row[9]) if with_replay and row[9] else None,
            set_matches=members,
        )

    def match_status(self, ladder: str, index: int) -> str:
        ladder_id = self._ladder_id(ladder)[0]
        return one_row(
            self.db,
            "SELECT status FROM matches WHERE ladder_id = ? AND idx = ?",
            (ladder_id, index),
            _no_match(ladder, index),
        )[0]

    def finished_replays(
        self,
        ladder: str,
        since: float | None = None,
        until: float | None = None,
        *,
        after: int = -1,
        limit: int | None = None,
    ) -> Iterator["ExportRow"]:
        """The completed matches of the ladder's finished sets (SET_FINISHED_SQL: only they are
        public), finished in [since, until) when given, in schedule order, each with its stored
        replay: what the public export writes (arena/web/export.py). Read as it goes; with
        `after` and `limit`, a page: the first `limit` matches of index above `after`."""
        ladder_id, name, _, _ = self._ladder_id(ladder)
        where = ["m.ladder_id = ?", "m.idx > ?", "m.status = 'completed'", "m.replay IS NOT NULL"]
        params: list[Any] = [ladder_id, after]
        if since is not None:
            where.append("m.finished >= ?")
            params.append(since)
        if until is not None:
            where.append("m.finished < ?")
            params.append(until)
        rows = self.db.execute(
            "SELECT m.idx, m.set_index, m.round, m.rotation, m.finished, m.replay "
            f"FROM matches m JOIN ladders l ON l.id = m.ladder_id WHERE {' AND '.join(where)} "
            f"AND {SET_FINISHED_SQL} ORDER BY m.idx" + (" LIMIT ?" if limit is not None else ""),
            [*params, limit] if limit is not None else params,
        )
        for idx, set_index, rnd, rotation, finished, replay in rows:
            yield ExportRow(name, idx, set_index, rnd, rotation, finished, json.loads(replay))

    # ------------------------------------------------ head-to-head, opponents, timed history
    # (New queries for the bot and ladder pages; plain SQL over the store's tables.)

    def head_to_head(
        self,
        *,
        ladder: str | None = None,
        bot: str | None = None,
        from_index: int | None = None,
        to_index: int | None = None,
    ) -> list["HeadToHead"]:
        """Per ladder, bot and opponent: the completed matches of finished sets where both sat
        (SET_FINISHED_SQL), and how often the bot placed ahead of, level with and
        behind the opponent. Only `ladder`'s, only `bot`'s, when given (UnknownLadder,
        UnknownBot when there is no such); with `ladder`, only its matches from `from_index`
        to `to_index` (both included) when given. A range that ends before the ladder's first
        unfinished set (finished_prefix) is counted without the finished-set check, which
        holds there for every match and costs half the query (the matches' rows, replays and
        all, read again for each match's set)."""
        known = (
            ladder is not None and to_index is not None and to_index < self.finished_prefix(ladder)
        )
        sql = (
            "SELECT l.name, a.bot_id, b.bot_id, count(*), sum(a.rank < b.rank), "
            "sum(a.rank = b.rank), sum(a.rank > b.rank) "
            "FROM matches m JOIN ladders l ON l.id = m.ladder_id "
            "JOIN results a ON a.match_id = m.id "
            "JOIN results b ON b.match_id = m.id AND b.seat <> a.seat "
            "WHERE m.status = ?" + ("" if known else f" AND {SET_FINISHED_SQL}")
        )
        params: list[Any] = [COMPLETED]
        if ladder is not None:
            sql += " AND m.ladder_id = ?"
            params.append(self._ladder_id(ladder)[0])
            if from_index is not None:
                sql += " AND m.idx >= ?"
                params.append(from_index)
            if to_index is not None:
                sql += " AND m.idx <= ?"
                params.append(to_index)
        if bot is not None:
            sql += " AND a.bot_id = ?"
            params.append(self._bot_id(bot))
        names = self._bot_names()
        rows = self.db.execute(sql + " GROUP BY l.name, a.bot_id, b.bot_id", params)
        return sorted(
            (
                from_row(
                    HeadToHead,
                    "ladder bot opponent matches ahead level behind",
                    r,
                    bot=names.get(r[1], f"#{r[1]}"),
                    opponent=names.get(r[2], f"#{r[2]}"),
                )
                for r in rows
            ),
            key=lambda h: (h.ladder, h.bot, h.opponent),
        )

    def matches_against(
        self,
        bot: str,
        opponent: str | None,
        *,
        ladder: str | None = None,
        before: int | None = None,
        limit: int = 50,
        faulted: bool = False,
    ) -> MatchPage:
        """The completed matches where `bot` and `opponent` (any, if None) both sat, only those
        where `bot` faulted with `faulted`, newest first, a page at a time (as match_list;
        read through the results' bot index)."""
        bot_id = self._bot_id(bot)
        opponent_id = self._bot_id(opponent) if opponent is not None else None
        ladder_id = self._ladder_id(ladder)[0] if ladder is not None else None
        cursor = before if before is not None else 1 << 62
        ids = self._completed_of_bot(bot_id, ladder_id, cursor, limit + 1, opponent_id, faulted)
        return self._page(
            ids,
            limit,
            ladder=ladder,
            bot=bot,
            opponent=opponent,
            status=COMPLETED,
            faulted=faulted,
        )

    def finished_prefix(self, ladder: str) -> int:
        """How many of the ladder's first matches (by index) lie in finished sets, with no
        unfinished set among them: the index where the first unfinished set starts (a set's
        rotations are consecutive), or the schedule's length if every set is finished. What
        lies before it never changes again."""
        ladder_id = self._ladder_id(ladder)[0]
        set_size = self._set_size(ladder_id)
        open_statuses = [st for st in MATCH_STATUSES if st not in FINISHED]
        marks = ", ".join("?" for _ in open_statuses)
        row = self.db.execute(
            f"SELECT min(idx) FROM matches WHERE ladder_id = ? AND status IN ({marks})",
            [ladder_id, *open_statuses],
        ).fetchone()
        if row[0] is None:
            return int(
                self.db.execute(
                    "SELECT coalesce(max(idx) + 1, 0) FROM matches WHERE ladder_id = ?",
                    (ladder_id,),
                ).fetchone()[0]
            )
        first_open = row[0]
        start = self.db.execute(
            "SELECT min(o.idx) FROM matches m JOIN matches o ON o.ladder_id = m.ladder_id AND "
            "o.set_index = m.set_index AND o.idx BETWEEN m.idx - ? + 1 AND m.idx "
            "WHERE m.ladder_id = ? AND m.idx = ?",
            (set_size, ladder_id, first_open),
        ).fetchone()[0]
        return int(start)

    def rating_history_timed(self, bot: str) -> dict[str, list["TimedPoint"]]:
        """The bot's rating after each of its rated matches, per ladder, with when the match
        finished and which of the bot's matches in that ladder it was (1, 2, ...)."""
        bot_id = self._bot_id(bot)
        out: dict[str, list[TimedPoint]] = {}
        for name, idx, finished, mu, sigma in self.db.execute(
            f"SELECT l.name, m.idx, m.finished, h.mu, h.sigma {_HISTORY_OF_BOT} "
            "ORDER BY l.name, m.idx",
            (bot_id,),
        ):
            points = out.setdefault(name, [])
            points.append(
                TimedPoint(index=idx, mu=mu, sigma=sigma, nth=len(points) + 1, finished=finished)
            )
        return out


@dataclass(frozen=True, slots=True)
class BotHealth:
    """A bot as the organiser watches it: suspended (and why), its completed matches, how many
    it faulted in, its faults in all and by kind (matches with that kind), and the last match
    it faulted in (ladder, index)."""

    bot: str
    suspended: bool
    suspended_reason: str | None
    remote: bool
    matches: int
    faulted: int
    faults: int
    fault_kinds: dict[str, int]
    last_fault: tuple[str, int] | None

    @property
    def fault_rate(self) -> float:
        """The share of its completed matches it faulted in (0 with none)."""
        return self.faulted / self.matches if self.matches else 0.0


@dataclass(frozen=True, slots=True)
class LadderPace:
    """How a ladder is being played: its matches running now, and completed matches an hour
    lately (None: too few to tell)."""

    running: int
    per_hour: float | None


@dataclass(slots=True)
class HeadToHead:
    """How `bot` placed against `opponent` in their common matches of finished sets."""

    ladder: str
    bot: str
    opponent: str
    matches: int
    ahead: int
    level: int
    behind: int


@dataclass(slots=True)
class TimedPoint(HistoryPoint):
    """A rating-history point with the bot's match count and the match's finishing time."""

    nth: int
    finished: float | None
