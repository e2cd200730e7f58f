"""The ladder rules the store asks for (arena.store.ladders.LadderRules): the schedule and seat
rotation (schedule.py), the rating system (ratings.py), and rating application: rating a
ladder's finished matches strictly in schedule order, inside the transaction that stored them.

Ratings in schedule order: a match that finishes before its predecessors waits (rated = 0)
until they are done, so ratings never depend on which match finished first, and a resumed
ladder ends with the same ratings as an uninterrupted one.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Mapping, Sequence

from arena.results import COMPLETED, FINISHED
from arena.store import LadderInfo

from .ratings import (
    DEFAULT_RATING_MODE,
    RATING_MODES,
    SET_MODE,
    SETTLED_CONFIDENCE,
    Rater,
    RatingParams,
    SkillRating,
    adjacent_settled,
    p_better,
    set_ranks,
)
from .schedule import (
    DEFAULT_MAX_FULL_TABLES,
    SEED_BOUND,
    ScheduledMatch,
    check_ladder_shape,
    make_schedule,
    rotate,
)


class StandardRules:
    """Arena's ladders: balanced round-robin schedules of duplicate sets, TrueSkill ratings per
    match or per set."""

    rating_modes = RATING_MODES
    default_rating_mode = DEFAULT_RATING_MODE
    default_max_full_tables = DEFAULT_MAX_FULL_TABLES
    settled_confidence = SETTLED_CONFIDENCE

    def check_shape(self, num_bots: int, table_size: int, rounds: int) -> None:
        check_ladder_shape(num_bots, table_size, rounds)  # ScheduleError is a ValueError

    def random_seed(self) -> int:
        import secrets  # here: loading it (OpenSSL) is ~10 ms of `arena rankings`, which reads

        return secrets.randbelow(SEED_BOUND)

    def schedule(
        self, bot_ids: list[int], table_size: int, rounds: int, seed: int, max_full_tables: int
    ) -> list[ScheduledMatch[int]]:
        return make_schedule(bot_ids, table_size, rounds, seed, max_full_tables=max_full_tables)

    def rotate(self, table: Sequence[str], rotation: int) -> tuple[str, ...]:
        return rotate(table, rotation)

    def rating_settings(self, params: RatingParams | None) -> dict[str, Any]:
        return (params or RatingParams()).to_dict()

    def rating_params(self, settings: Mapping[str, Any]) -> RatingParams:
        return RatingParams.from_dict(settings.get("rating_params", {}))

    def rater(self, settings: Mapping[str, Any]) -> Rater:
        return Rater(self.rating_params(settings))

    def compare(
        self, skills: Sequence[tuple[float, float]], confidence: float
    ) -> tuple[list[float], list[bool]]:
        ratings = [SkillRating(mu, sigma) for mu, sigma in skills]
        p_next = [p_better(a, b) for a, b in zip(ratings, ratings[1:])]
        return p_next, adjacent_settled(p_next, confidence)

    def apply_ratings(self, conn: sqlite3.Connection, info: LadderInfo) -> tuple[int, ...]:
        """Rate every match (or set) that is next in schedule order and finished; stop at the
        first one that is not. Runs inside the store's transaction that recorded what unblocked
        it; returns the indexes of the matches rated."""
        cursor = conn.execute(
            "SELECT rated_through FROM ladders WHERE id = ?", (info.id,)
        ).fetchone()[0]
        step = info.table_size if info.rating_mode == SET_MODE else 1
        rated: list[int] = []
        while True:
            rows = conn.execute(
                "SELECT id, idx, status FROM matches WHERE ladder_id = ? AND idx >= ? AND "
                "idx < ? ORDER BY idx",
                (info.id, cursor, cursor + step),
            ).fetchall()
            if not rows or any(r[2] not in FINISHED for r in rows):
                break
            done = [r for r in rows if r[2] == COMPLETED]
            if done:
                self._rate(conn, info, [r[0] for r in done])
                rated.extend(r[1] for r in done)
            cursor += len(rows)
        conn.execute("UPDATE ladders SET rated_through = ? WHERE id = ?", (cursor, info.id))
        return tuple(rated)

    def _rate(self, conn: sqlite3.Connection, info: LadderInfo, match_ids: list[int]) -> None:
        """Apply one rating update from these completed matches: one match, or the completed
        matches of one duplicate set (set mode). Also adds their results to the standings."""
        per_match = []
        for match_id in match_ids:
            rows = conn.execute(
                "SELECT seat, bot_id, score, rank, faults FROM results "
                "WHERE match_id = ? ORDER BY seat",
                (match_id,),
            ).fetchall()
            per_match.append(rows)
        bots = [r[1] for r in per_match[0]]
        found = conn.execute(
            f"SELECT bot_id, mu, sigma FROM ratings WHERE ladder_id = ? AND bot_id IN "
            f"({', '.join('?' for _ in bots)})",
            (info.id, *bots),
        ).fetchall()
        before = {b: SkillRating(mu, sigma) for b, mu, sigma in found}
        if len(per_match) == 1:
            ranks = {r[1]: r[3] for r in per_match[0]}
        else:
            ranks = set_ranks(
                ([r[1] for r in rows], [r[2] for r in rows], [r[0] for r in rows if r[4]])
                for rows in per_match
            )
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
            [
                (r.mu, r.sigma, info.rater.conservative(r), *stats[b], info.id, b)
                for b, r in update.ratings.items()
            ],
        )
        last = match_ids[-1]  # in set mode the history hangs on the set's last rated match
        if not update.skipped:
            conn.executemany(
                "INSERT INTO rating_history (match_id, bot_id, mu, sigma) VALUES (?, ?, ?, ?)",
                [(last, b, r.mu, r.sigma) for b, r in update.ratings.items()],
            )
        conn.executemany(
            "UPDATE matches SET rated = 1, rating_note = ? WHERE id = ?",
            [(update.note or None, m) for m in match_ids],
        )


STANDARD_RULES = StandardRules()
