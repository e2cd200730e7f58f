"""The match lifecycle: a ladder's matches as stored, starting one (an attempt counted),
taking one back from a stopped run, and recording how it ended: a result (with its faults and
replay) or an infrastructure failure. The rating updates a record unblocks are applied in the
same transaction (rating.py)."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from typing import Any, Sequence

from arena.results import ABANDONED, COMPLETED, FINISHED, INFRA_FAILED, BotLog, MatchResult

from .errors import MatchStateError, StoreError, sqlite_errors
from .ladders import Ladders
from .rating import apply_ratings
from .records import LadderInfo, RecordOutcome, StoredMatch, from_row
from .schema import BOT_SEED_KEY, now, one_row

# A match taken back from a stopped or killed run: its attempt did not fail, so it does not count
# against the runner's max_attempts (resumes would otherwise use up a match's retries).
_UNCOUNT = "status = 'pending', attempts = max(attempts - 1, 0)"

_MATCH_COLUMNS = (
    "idx, set_index, round, rotation, seed, seats, status, attempts, node, "
    "started, finished, rated, rating_note, match_key"
)
# StoredMatch's fields, as _MATCH_COLUMNS holds them.
_MATCH_FIELDS = (
    "index set_index round rotation seed seats status attempts node started finished rated "
    "rating_note match_key"
)


def _no_match(ladder: str, index: int) -> MatchStateError:
    return MatchStateError(f"ladder {ladder!r} has no match {index}")


# How much of the end of a faulted bot's log is kept (UTF-8 bytes, after cleaning).
FAULT_LOG_BYTES = 4096
# Terminal escape sequences (CSI: colours, cursor moves; OSC: titles, links; the others: ESC,
# intermediate bytes, a final byte), then every control character but newline and tab, and the
# bidirectional overrides that make text read other than it is stored.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]?"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_log(text: str) -> str:
    """A bot's log text made safe to show: escape sequences and control characters (but
    newline and tab) removed, carriage returns made newlines."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text)


def _last_bytes(text: str, limit: int) -> str:
    data = text.encode("utf-8")[-limit:] if limit > 0 else b""
    return data.decode("utf-8", "ignore")  # a character cut in two at the start is dropped


def log_excerpt(text: str) -> str:
    """What is kept of the end of a bot's log: cleaned (clean_log), then its last
    FAULT_LOG_BYTES bytes (cut between characters)."""
    return _last_bytes(clean_log(text), FAULT_LOG_BYTES)


# How much of what a launched bot wrote during one match is kept (UTF-8 bytes, after cleaning):
# its end, the oldest lines dropped first.
MATCH_LOG_BYTES = 64 * 1024


def match_log(log: BotLog, limit: int = MATCH_LOG_BYTES) -> dict[str, Any]:
    """What the store keeps of a bot's log of one match, as JSON-able data: {"moves": [[move
    index, text], ...] (moves it wrote nothing for left out), "tail": text after its last
    move, "dropped": bytes of the oldest lines not kept}. Each part is cleaned (clean_log),
    then the whole capped at `limit` bytes from its end."""
    parts = [(index, clean_log(text)) for index, text in log.moves]
    tail = clean_log(log.tail)
    room, dropped = limit, 0
    kept_tail = _last_bytes(tail, room)
    dropped += len(tail.encode()) - len(kept_tail.encode())
    room -= len(kept_tail.encode())
    kept: list[list[Any]] = []
    for index, text in reversed(parts):
        size = len(text.encode())
        piece = text if size <= room else _last_bytes(text, room)
        dropped += size - len(piece.encode())
        room -= len(piece.encode())
        if piece:
            kept.append([index, piece])
    kept.reverse()
    return {"moves": kept, "tail": kept_tail, "dropped": dropped}


def encode_replay(result: MatchResult) -> str:
    """The compact JSON replay stored with a match: arena.replay's format without the per-seat
    views (they are recomputed from config, seed and moves)."""
    from arena import replay  # here: with the engines, a few ms of `arena rankings`, which reads

    return json.dumps(replay.to_dict(result, with_views=False), separators=(",", ":"))


class Matches(Ladders):
    """The match lifecycle's part of the Store (it reads the ladders' cached LadderInfo)."""

    _seed_key: bytes | None = None  # read once, when a match first starts

    @sqlite_errors
    def matches(
        self, ladder: str, statuses: Sequence[str] | None = None, limit: int | None = None
    ) -> list[StoredMatch]:
        """The ladder's matches in schedule order, optionally only those with these statuses
        (RUNNABLE = pending or infra_failed: what a runner still has to play)."""
        info = self._info(ladder)
        sql = f"SELECT {_MATCH_COLUMNS} FROM matches WHERE ladder_id = ?"
        params: list[Any] = [info.id]
        if statuses is not None:
            sql += f" AND status IN ({', '.join('?' for _ in statuses)})"
            params += list(statuses)
        sql += " ORDER BY idx"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [self._match(info, row) for row in self.db.execute(sql, params)]

    @sqlite_errors
    def get_match(self, ladder: str, index: int) -> StoredMatch:
        info = self._info(ladder)
        row = one_row(
            self.db,
            f"SELECT {_MATCH_COLUMNS} FROM matches WHERE ladder_id = ? AND idx = ?",
            (info.id, index),
            _no_match(ladder, index),
        )
        return self._match(info, row)

    @sqlite_errors
    def replay(self, ladder: str, index: int) -> dict[str, Any] | None:
        """The stored replay of a completed match (arena.replay's format, without views)."""
        info = self._info(ladder)
        row = self.db.execute(
            "SELECT replay FROM matches WHERE ladder_id = ? AND idx = ?", (info.id, index)
        ).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def _match(self, info: LadderInfo, row: Sequence[Any]) -> StoredMatch:
        return from_row(
            StoredMatch,
            _MATCH_FIELDS,
            row,
            {"rated": bool},
            ladder=info.name,
            seats=tuple(info.bot_names[b] for b in json.loads(row[5])),
        )

    @sqlite_errors
    def start_match(self, ladder: str, index: int, node: str | None = None) -> StoredMatch:
        """Mark a runnable match running on `node` and count the attempt. The match returned
        holds what its bots are given: the attempt's opaque id (`match_key`, new each attempt)
        and each seat's bot seed (arena.seeds, from the store's private key)."""
        from arena import seeds  # here: hmac and hashlib (OpenSSL) are ms of a reading command

        info = self._info(ladder)
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE matches SET status = 'running', attempts = attempts + 1, node = ?, "
                "started = ?, match_key = ? WHERE ladder_id = ? AND idx = ? AND status IN "
                "('pending', 'infra_failed')",
                (node, now(), seeds.new_match_id(), info.id, index),
            )
            if cur.rowcount == 0:
                match = self.get_match(ladder, index)
                raise MatchStateError(
                    f"match {index} of ladder {ladder!r} is {match.status}, so it cannot start"
                )
        match = self.get_match(ladder, index)
        key = self._bot_seed_key()
        return dataclasses.replace(
            match, bot_seeds=seeds.bot_seeds(key, match.seed, len(match.seats))
        )

    def _bot_seed_key(self) -> bytes:
        """The store's private key of bot seeds (made by the 0006 migration). Read by nothing
        else: never shown, logged or handed to a bot."""
        if self._seed_key is None:
            row = one_row(
                self.db,
                "SELECT value FROM secrets WHERE name = ?",
                (BOT_SEED_KEY,),
                StoreError(f"database {self.path} has no bot-seed key; it is damaged"),
            )
            self._seed_key = bytes(row[0])
        return self._seed_key

    @sqlite_errors
    def release_match(self, ladder: str, index: int) -> None:
        """Put a running match back to pending without blaming anyone (the run was stopped):
        the attempt it had started is not counted."""
        info = self._info(ladder)
        with self._write() as conn:
            conn.execute(
                f"UPDATE matches SET {_UNCOUNT} WHERE ladder_id = ? AND idx = ? "
                "AND status = 'running'",
                (info.id, index),
            )

    @sqlite_errors
    def reset_running(self, ladder: str) -> int:
        """Put every running match of the ladder back to pending: what a resumed run does first,
        since a match left running belongs to a run that was killed (the ladder's lease says
        none is alive). The attempts they had started are not counted. Returns how many."""
        info = self._info(ladder)
        with self._write() as conn:
            return conn.execute(
                f"UPDATE matches SET {_UNCOUNT} WHERE ladder_id = ? AND status = 'running'",
                (info.id,),
            ).rowcount

    @sqlite_errors
    def record_result(
        self, ladder: str, index: int, result: MatchResult, node: str | None = None
    ) -> RecordOutcome:
        """Store a finished match: its status, timings and replay, a result row per seat, its
        faults, and the rating updates of every completed match now next in schedule order
        (this one included, if its predecessors are done), all in one transaction.

        A match already completed is left as it is (recorded=False): a result is never counted
        twice. A result whose status is abandoned (the platform stopped it) is recorded as an
        infrastructure failure instead (see record_infra_failure)."""
        if result.status == ABANDONED:
            return self.record_infra_failure(
                ladder, index, f"abandoned: {result.reason}", node=node
            )
        info = self._info(ladder)
        with self._write() as conn:
            recorded = self._record(conn, info, index, result, node)
            rated = apply_ratings(conn, info) if recorded else ()
        return RecordOutcome(recorded=recorded, rated=rated)

    @sqlite_errors
    def record_results(
        self, ladder: str, items: Sequence[tuple[int, MatchResult]], node: str | None = None
    ) -> RecordOutcome:
        """record_result for many (index, result) pairs in one transaction (all or nothing):
        for a runner that batches results under a high match rate. Abandoned results are not
        accepted here. `recorded` is True if any was new."""
        info = self._info(ladder)
        with self._write() as conn:
            recorded = False
            for index, result in items:
                if result.status == ABANDONED:
                    raise MatchStateError(
                        f"match {index} was abandoned; record it with record_infra_failure"
                    )
                recorded |= self._record(conn, info, index, result, node)
            rated = apply_ratings(conn, info) if recorded else ()
        return RecordOutcome(recorded=recorded, rated=rated)

    @staticmethod
    def _match_row(
        conn: sqlite3.Connection, info: LadderInfo, index: int, column: str
    ) -> tuple[int, str, Any]:
        """A match's id, status and `column`, or MatchStateError if the ladder has no such
        match."""
        return one_row(
            conn,
            f"SELECT id, status, {column} FROM matches WHERE ladder_id = ? AND idx = ?",
            (info.id, index),
            _no_match(info.name, index),
        )

    def _record(
        self,
        conn: sqlite3.Connection,
        info: LadderInfo,
        index: int,
        result: MatchResult,
        node: str | None,
    ) -> bool:
        k = info.table_size
        if not (len(result.seat_names) == len(result.scores) == len(result.ranks) == k):
            raise MatchStateError(
                f"a result for ladder {info.name!r} needs {k} seats of names, scores and ranks"
            )
        match_id, status, seats_json = self._match_row(conn, info, index, "seats")
        if status == COMPLETED:
            return False
        if status == ABANDONED:
            raise MatchStateError(
                f"match {index} of ladder {info.name!r} was abandoned; its result is not taken"
            )
        seats = json.loads(seats_json)
        names = tuple(info.bot_names[b] for b in seats)
        if tuple(result.seat_names) != names:
            raise MatchStateError(
                f"the result's seats {list(result.seat_names)} are not match {index}'s "
                f"scheduled seats {list(names)}"
            )
        started = result.started_at or None
        finished = result.finished_at or now()
        conn.execute(
            "UPDATE matches SET status = 'completed', started = coalesce(?, started), "
            "finished = ?, duration_ms = ?, match_key = ?, reason = ?, engine_version = ?, "
            "node = coalesce(?, node), replay = ? WHERE id = ?",
            (
                started,
                finished,
                (finished - started) * 1000.0 if started else None,
                result.match_id,
                result.reason,
                result.engine_version,
                node,
                encode_replay(result),
                match_id,
            ),
        )
        kinds: dict[int, list[str]] = {}
        for f in result.faults:
            kinds.setdefault(f.seat, []).append(f.kind)
        conn.executemany(
            "INSERT INTO results (match_id, seat, bot_id, score, rank, faults, fault_kinds) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    match_id,
                    seat,
                    bot,
                    result.scores[seat],
                    result.ranks[seat],
                    len(kinds.get(seat, ())),
                    ",".join(sorted(set(kinds.get(seat, ())))),
                )
                for seat, bot in enumerate(seats)
            ],
        )
        if result.faults:
            conn.executemany(
                "INSERT INTO faults (match_id, seat, bot_id, kind, move, elapsed_ms, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (match_id, f.seat, seats[f.seat], f.kind, f.move, f.elapsed_ms, f.detail)
                    for f in result.faults
                ],
            )
        if result.log_excerpts:  # a faulted launched bot's (the executor sends no others)
            faulted = result.faulted_seats
            conn.executemany(
                "INSERT INTO fault_logs (match_id, seat, excerpt) VALUES (?, ?, ?)",
                [
                    (match_id, seat, log_excerpt(text))
                    for seat, text in sorted(result.log_excerpts.items())
                    if seat in faulted
                ],
            )
        if result.bot_logs:  # launched bots' (remote bots keep their logs)
            stamp = now()
            rows = []
            for seat, log in sorted(result.bot_logs.items()):
                kept = json.dumps(match_log(log), separators=(",", ":"))
                rows.append((match_id, seat, seats[seat], kept, len(kept.encode()), stamp))
            conn.executemany(
                "INSERT OR REPLACE INTO match_logs (match_id, seat, bot_id, log, bytes, created)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
        conn.execute("UPDATE ladders SET completed = completed + 1 WHERE id = ?", (info.id,))
        return True

    @sqlite_errors
    def prune_match_logs(
        self, max_age_days: float | None = None, max_mb: float | None = None
    ) -> int:
        """The rotation of the bots' match logs the organiser sets: those kept longer than
        `max_age_days` removed, then the oldest until all of them hold at most `max_mb`
        megabytes (None: no bound of that kind). How many were removed."""
        with self._write() as conn:
            removed = 0
            if max_age_days is not None:
                cutoff = now() - max_age_days * 86400
                removed += conn.execute(
                    "DELETE FROM match_logs WHERE created < ?", (cutoff,)
                ).rowcount
            if max_mb is not None:
                budget = int(max_mb * 1024 * 1024)
                rows = conn.execute(
                    "SELECT rowid, bytes FROM match_logs ORDER BY created DESC, rowid DESC"
                ).fetchall()
                total, drop = 0, []
                for rowid, size in rows:
                    total += size
                    if total > budget:
                        drop.append((rowid,))
                conn.executemany("DELETE FROM match_logs WHERE rowid = ?", drop)
                removed += len(drop)
        return removed

    @sqlite_errors
    def record_infra_failure(
        self,
        ladder: str,
        index: int,
        detail: str,
        *,
        node: str | None = None,
        give_up: bool = False,
    ) -> RecordOutcome:
        """Keep an infrastructure failure (referee or worker, not a bot) of a match's attempt.
        The match becomes infra_failed, to be retried; with `give_up` it becomes abandoned for
        good: never rated, and the rating order moves past it (which may rate later matches,
        in the same transaction)."""
        info = self._info(ladder)
        with self._write() as conn:
            match_id, status, attempts = self._match_row(conn, info, index, "attempts")
            if status in FINISHED:
                return RecordOutcome(recorded=False)
            conn.execute(
                "INSERT INTO infra_failures (match_id, attempt, node, detail, at) "
                "VALUES (?, ?, ?, ?, ?)",
                (match_id, attempts, node, detail, now()),
            )
            conn.execute(
                "UPDATE matches SET status = ?, rating_note = ? WHERE id = ?",
                (
                    ABANDONED if give_up else INFRA_FAILED,
                    # A detail that says so already is not said twice ("abandoned: abandoned:").
                    (detail if detail.startswith("abandoned: ") else f"abandoned: {detail}")
                    if give_up
                    else None,
                    match_id,
                ),
            )
            rated = apply_ratings(conn, info) if give_up else ()
        return RecordOutcome(recorded=True, rated=rated)
