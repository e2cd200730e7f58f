"""Rating application: a ladder's finished matches rated strictly in schedule order, inside the
transaction that recorded what unblocked them (Matches calls `apply_ratings`). The maths is
arena.ratings' (the ladder's Rater, set_ranks); the rows read and written are the store's.

In set and margins mode the unit rated is the duplicate set (the matches sharing a set index): a set
of table_size matches, or of one in a ladder's opening round (arena.schedule), rated on its own.

Ratings in schedule order: a match that finishes before its predecessors waits (rated = 0)
until they are done, so ratings never depend on which match finished first, and a resumed
ladder ends with the same ratings as an uninterrupted one.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from arena.margins import PRIOR_SD, MarginModel, fault_adjusted
from arena.ratings import (
    MARGINS_MODE,
    MATCH_MODE,
    Rater,
    SkillRating,
    conservative,
    set_ranks,
)
from arena.results import COMPLETED, FINISHED

from .records import LadderInfo


def start_rating(mode: str, rater: Rater) -> tuple[SkillRating, float]:
    """A bot's rating when it joins a ladder rated in `mode`, and its conservative value."""
    if mode == MARGINS_MODE:
        start = SkillRating(0.0, PRIOR_SD)
        return start, conservative(start.mu, start.sigma)
    start = rater.initial()
    return start, rater.conservative(start)


def load_margin_model(db: Any, ladder_id: int) -> MarginModel:
    """A margins-mode ladder's stored model (`db`: a connection or the store's reading
    database), empty before its first rated set."""
    row = db.execute("SELECT state FROM margin_models WHERE ladder_id = ?", (ladder_id,)).fetchone()
    return MarginModel.loads(row[0]) if row else MarginModel()


def apply_ratings(conn: sqlite3.Connection, info: LadderInfo) -> tuple[int, ...]:
    """Rate every match (or set) that is next in schedule order and finished; stop at the first
    one that is not. Runs inside the store's transaction that recorded what unblocked it;
    returns the indexes of the matches rated."""
    cursor = conn.execute("SELECT rated_through FROM ladders WHERE id = ?", (info.id,)).fetchone()[
        0
    ]
    # In set mode the next unit is the set the next match belongs to: its matches are
    # consecutive and at most table_size (an opening round's sets hold one match each).
    step = 1 if info.rating_mode == MATCH_MODE else info.table_size
    rated: list[int] = []
    while True:
        rows = conn.execute(
            "SELECT id, idx, status, set_index FROM matches WHERE ladder_id = ? AND idx >= ? AND "
            "idx < ? ORDER BY idx",
            (info.id, cursor, cursor + step),
        ).fetchall()
        rows = [r for r in rows if r[3] == rows[0][3]] if rows else rows
        if not rows or any(r[2] not in FINISHED for r in rows):
            break
        done = [r for r in rows if r[2] == COMPLETED]
        if done:
            _rate(conn, info, [r[0] for r in done])
            rated.extend(r[1] for r in done)
        cursor += len(rows)
    conn.execute("UPDATE ladders SET rated_through = ? WHERE id = ?", (cursor, info.id))
    return tuple(rated)


def _rate(conn: sqlite3.Connection, info: LadderInfo, match_ids: list[int]) -> None:
    """Apply one rating update from these completed matches: one match, or the completed
    matches of one duplicate set (set mode; a set of one, an opening round's, as per match).
    Also adds their results to the standings."""
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
    if info.rating_mode == MARGINS_MODE:
        _rate_margins(conn, info, match_ids, per_match)
        return
    if len(per_match) == 1:
        ranks = {r[1]: r[3] for r in per_match[0]}
    else:
        ranks = set_ranks(
            ([r[1] for r in rows], [r[2] for r in rows], [r[0] for r in rows if r[4]])
            for rows in per_match
        )
    update = info.rater.rate(before, ranks)
    stats = _standings(per_match)
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


def _standings(per_match: list[list[Any]]) -> dict[int, list[int]]:
    """What the matches add to each seated bot's standings: matches, wins, score, faults."""
    stats: dict[int, list[int]] = {r[1]: [0, 0, 0, 0] for r in per_match[0]}
    for rows in per_match:
        for _seat, bot, score, rank, faults in rows:
            s = stats[bot]
            s[0] += 1
            s[1] += rank == 0
            s[2] += score
            s[3] += faults
    return stats


def _rate_margins(
    conn: sqlite3.Connection, info: LadderInfo, match_ids: list[int], per_match: list[list[Any]]
) -> None:
    """Margins mode: the ladder's model observes the set (faulted seats' scores at most their
    table's lowest), then every bot's stored rating follows the model (an update moves every
    bot's covariance; arena.margins); the standings and the history change for the seated."""
    model = load_margin_model(conn, info.id)
    model.observe(
        [
            (
                [r[1] for r in rows],
                fault_adjusted([r[2] for r in rows], [i for i, r in enumerate(rows) if r[4]]),
            )
            for rows in per_match
        ]
    )
    conn.execute(
        "INSERT INTO margin_models (ladder_id, state) VALUES (?, ?) "
        "ON CONFLICT (ladder_id) DO UPDATE SET state = excluded.state",
        (info.id, model.dumps()),
    )
    stats: dict[Any, list[int]] = _standings(per_match)
    ratings = model.ratings()
    conn.executemany(
        "UPDATE ratings SET mu = ?, sigma = ?, conservative = ?, matches = matches + ?, "
        "wins = wins + ?, score_sum = score_sum + ?, faults = faults + ? "
        "WHERE ladder_id = ? AND bot_id = ?",
        [
            (r.mu, r.sigma, conservative(r.mu, r.sigma), *stats.get(b, [0, 0, 0, 0]), info.id, b)
            for b, r in ratings.items()
        ],
    )
    conn.executemany(
        "INSERT INTO rating_history (match_id, bot_id, mu, sigma) VALUES (?, ?, ?, ?)",
        [(match_ids[-1], b, ratings[b].mu, ratings[b].sigma) for b in stats],
    )
    conn.executemany(
        "UPDATE matches SET rated = 1, rating_note = NULL WHERE id = ?", [(m,) for m in match_ids]
    )
