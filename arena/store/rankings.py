"""The Store's read queries on a ladder: its rankings (the standings, best first, each compared
with the next), its progress, and a bot's rating history in it. Nothing here writes. The web's
browsing queries are browse.py's."""

from __future__ import annotations

import json
from typing import Any, Sequence

from arena.ratings import (
    CALIBRATED_WIDEN,
    MARGINS_MODE,
    SETTLED_CONFIDENCE,
    SkillRating,
    adjacent_settled,
    p_next,
)
from arena.results import COMPLETED, MATCH_STATUSES

from .errors import UnknownLadder, sqlite_errors
from .ladders import Ladders, no_ladder
from .rating import load_margin_model
from .records import MatchScores, Rankings, Standing, from_row
from .schema import one_row

# A ladder's opening round (arena.schedule), for a ladder row `l`: its matches, 0 if it has
# none. They are the schedule's first, each a set of its own, so the round ends where the first
# duplicate set's second match (rotation 1) is: found through the (ladder_id, idx) index after
# reading the round's rows, whatever the size of the ladder.
OPENING_SQL = (
    "(CASE WHEN json_extract(l.settings, '$.opening_round') THEN coalesce((SELECT o.idx - 1 "
    "FROM matches o WHERE o.ladder_id = l.id AND o.rotation > 0 ORDER BY o.idx LIMIT 1), "
    "l.num_matches) ELSE 0 END)"
)
# A ladder's head, as its rankings and the web's list of ladders show it: the columns of the
# ladders table (as `l`) and, in the same order, the records' fields they fill (after the
# ladder's name: Rankings.ladder, LadderRow.name); the last two are its opening round's matches
# and how many of them completed (records.OpeningRound).
LADDER_HEAD_SQL = (
    "l.name, l.game, l.options, l.table_size, l.rating_mode, l.num_matches, l.completed, "
    f"l.rated_through, {OPENING_SQL}, (SELECT count(*) FROM matches o WHERE o.ladder_id = l.id "
    f"AND o.idx < {OPENING_SQL} AND o.status = '{COMPLETED}')"
)
LADDER_HEAD = (
    "game options table_size rating_mode scheduled completed rated opening opening_completed"
)


def standing_of(
    ladder: str, game: str, rank: int, of: int, row: Sequence[Any], **compared: Any
) -> Standing:
    """A Standing from (bot, conservative, mu, sigma, matches, score_sum, wins, faults,
    suspended) as the ratings table and the bots table hold them."""
    bot, conservative, mu, sigma, matches, score_sum, wins, faults, suspended = row
    return Standing(
        ladder=ladder,
        game=game,
        rank=rank,
        of=of,
        bot=bot,
        conservative=conservative,
        mu=mu,
        sigma=sigma,
        matches=matches,
        mean_score=(score_sum / matches) if matches else None,
        wins=wins,
        faults=faults,
        suspended=bool(suspended),
        **compared,
    )


class RankingQueries(Ladders):
    """The rankings' part of the Store."""

    @sqlite_errors
    def rankings(self, ladder: str | None = None, confidence: float | None = None) -> Rankings:
        """The standings of a ladder (default: the most recently created), best first by the
        conservative rating mu - 3 sigma, each with the probability that it is better than the
        next and whether its rank is settled at `confidence` (None: arena.ratings'
        SETTLED_CONFIDENCE), by arena.ratings' calibrated p_next. Reads only the ladder's per-bot
        standings rows, so it costs the same with 100 or 100,000 stored matches."""
        if ladder is None:
            row = self.db.execute(
                "SELECT name FROM ladders ORDER BY created DESC, id DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise UnknownLadder("there are no ladders yet; run one with arena ladder run")
            ladder = row[0]
        head = one_row(
            self.db,
            f"SELECT l.id, {LADDER_HEAD_SQL} FROM ladders l WHERE l.name = ?",
            (ladder,),
            no_ladder(ladder),
        )
        rows = self.db.execute(
            "SELECT b.name, r.conservative, r.mu, r.sigma, r.matches, r.score_sum, r.wins, "
            "r.faults, b.suspended, b.id FROM ratings r JOIN bots b ON b.id = r.bot_id "
            "WHERE r.ladder_id = ? ORDER BY r.conservative DESC, r.mu DESC, b.name",
            (head[0],),
        ).fetchall()
        if confidence is None:
            confidence = SETTLED_CONFIDENCE
        if head[5] == MARGINS_MODE:  # head[5]: the ladder's rating mode
            # P(better) of each pair's difference under the model's full covariance; a bot
            # that has not played yet is at the prior.
            model = load_margin_model(self.db, head[0])
            for r in rows:
                model.join(r[9])
            better = model.p_next([r[9] for r in rows], CALIBRATED_WIDEN[MARGINS_MODE])
        else:
            better = p_next([SkillRating(r[2], r[3]) for r in rows], head[5])
        settled = adjacent_settled(better, confidence)
        standings = tuple(
            standing_of(
                head[1],
                head[2],
                i + 1,
                len(rows),
                row[:9],
                p_better_than_next=better[i] if i < len(better) else None,
                settled=settled[i],
            )
            for i, row in enumerate(rows)
        )
        return from_row(
            Rankings,
            f"ladder {LADDER_HEAD}",
            head[1:],
            {"options": json.loads},
            standings=standings,
            confidence=confidence,
        )

    @sqlite_errors
    def progress(self, ladder: str) -> dict[str, int]:
        """How many of the ladder's matches have each status (a scan of the ladder's matches:
        for progress reports, not for the rankings)."""
        info = self._info(ladder)
        counts = {s: 0 for s in MATCH_STATUSES}
        for status, n in self.db.execute(
            "SELECT status, count(*) FROM matches WHERE ladder_id = ? GROUP BY status", (info.id,)
        ):
            counts[status] = n
        return counts

    @sqlite_errors
    def rating_history(self, ladder: str, bot: str) -> list[tuple[int, float, float]]:
        """A bot's rating after each rated match of a ladder: (match index, mu, sigma)."""
        info = self._info(ladder)
        return [
            tuple(r)
            for r in self.db.execute(
                "SELECT m.idx, h.mu, h.sigma FROM rating_history h "
                "JOIN matches m ON m.id = h.match_id JOIN bots b ON b.id = h.bot_id "
                "WHERE m.ladder_id = ? AND b.name = ? ORDER BY m.idx",
                (info.id, bot),
            )
        ]

    @sqlite_errors
    def match_scores(self, ladder: str) -> list[MatchScores]:
        """Every match of the ladder in index order with its status and, for a completed one,
        each seat's bot, score and rank (what arena.compare computes its observations from)."""
        info = self._info(ladder)
        out: dict[int, MatchScores] = {}
        for idx, set_index, status, seat, bot, score, rank in self.db.execute(
            "SELECT m.idx, m.set_index, m.status, r.seat, b.name, r.score, r.rank "
            "FROM matches m LEFT JOIN results r ON r.match_id = m.id "
            "LEFT JOIN bots b ON b.id = r.bot_id WHERE m.ladder_id = ? "
            "ORDER BY m.idx, r.seat",
            (info.id,),
        ):
            row = out.get(idx)
            if row is None:
                row = out[idx] = MatchScores(idx, set_index, status, [], [], [])
            if seat is not None:
                row.bots.append(bot)
                row.scores.append(score)
                row.ranks.append(rank)
        return list(out.values())
