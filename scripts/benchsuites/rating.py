"""Rating: how many matches each way of running a ladder needs to reach the right ranking.

In-process, with Arena's own engines, scheduler (`make_schedule`), rater (`Rater`, `set_ranks`)
and `arena serve`'s table choice (`choose_table`); no bot processes, no gRPC. A pool of 7 bots of
known order is made from one example policy (balloon_heuristic or boom_heuristic) that plays a
uniformly random legal move instead at a known rate per bot: the lower the rate, the better the
bot (the suite checks that order against the bots' mean scores over every match it simulated).
Two pools per game, "close" and "wide" (POOLS: Boom's are spread wider, as the luckier game).

The count of one trial is the number of matches played until the leaderboard's order (conservative
rating mu - 3 sigma, as `Store.rankings` sorts; ties broken by a name drawn at random per trial)
reaches Kendall tau >= 0.9 against the true order and keeps it for HOLD more matches; a trial
that does not within its cap counts as "not reached" (it sorts above every reached count, so a
median is still exact while fewer than half miss). With 7 bots, tau >= 0.9 allows one
discordant pair of 21.

The ways measured (TrueSkill with the ladder's default parameters unless said; WAYS, each a
`Way`: where its tables come from, how a set is rated, whether the leaderboard shows the set in
progress):
- plain: a match per table of the round-robin, each with a fresh deal and the seats in random
  order, rated per match: what every other ladder does, the reference;
- duplicate, per match: the round-robin's duplicate sets (one deal, seats rotated through all
  k positions), each match rated on its own (`--rating-mode match`);
- duplicate, set: the same sets, each rated once by the bots' summed scores (`set_ranks`,
  `--rating-mode set`, the default);
- opening round, then set: one round of single matches first (each table once, fresh deal,
  random seats, rated per match: plain's start), then the duplicate sets rated per set;
- set, first set per match: the duplicate sets, where a set in which some bot plays its first
  set is rated match by match and every later set as a whole;
- duplicate, set, tau 0: set mode with TrueSkill's dynamics factor 0 (no skill drift allowed
  for: a competition's finals, whose entrants are frozen).
Explored before and run only with ARENA_RATING_ALL_WAYS=1 (EXPLORED_WAYS):
- duplicate, set by rank sum: each set rated once by the bots' summed ranks;
- serve, per match / serve, set: `arena serve`'s adaptive table choice (`choose_table` on the
  current ratings, one table at a time), each table played as a duplicate set, rated per match
  or per set (as serve rates now);
- set + live: as duplicate, set, but between sets the leaderboard also shows the set in
  progress, its matches rated one by one on a copy of the ratings (the set's own rating then
  replaces the copy), so the board is not frozen at the last complete set;
- set as pairs: each set rated as every pair of its bots in a two-bot match, won by the higher
  summed score (a partial order: k(k-1)/2 updates instead of one free-for-all);
- set, ties: rated once by summed scores, neighbours within TIE_POINTS per match tied;
- set, spread order / set + live, spread order: the same sets with each round's tables in
  `make_schedule(..., spread=True)` order (every bot seated within the round's first tables);
- spread, then serve, set: the first round of the round-robin in spread order (coverage:
  every bot and pair met), then `choose_table`, rated per set;
- half sets (even k only): a set's rotations played as opposite pairs (0 and k/2, then 1 and
  k/2 + 1, ...), each pair rated by summed scores: half the latency, half the luck cancelled;
- variations of the default for issue 31's close goal on Balloon 3p close (2026-12-02
  evening): the opening round, then the first set of each bot rated per match; tau 0 once the
  opening round is rated, or throughout; the sets rated with beta over sqrt(k) or k, or times
  sqrt(k) or k (a set's summed scores taken as more, or less, than one match's evidence); two
  opening rounds of single matches before the sets;
- duplicate, set, margins / opening round, then set, margins (2026-12-03): not TrueSkill: each
  set rated by its bots' score margins, not their order (`MarginBoard`: the product's
  arena.margins model, a Gaussian of the sets' mean scores a match, updated exactly; the single
  matches of an opening round by their own margins). Better than the set mode on every pool
  measured (docs/benchmarks.md, "Rating a set by its score margins"), and since then the
  product's default mode, `margins`, without an opening round.
A short run for one question: ARENA_RATING_WAYS, ARENA_RATING_POOLS, ARENA_RATING_TRIAL_RANGE
and ARENA_RATING_CALIBRATED (where they are read says how); the report's goals are those of the
product's default, *duplicate, set, margins* (arena.ratings.DEFAULT_RATING_MODE, with an opening
round when arena.app.DEFAULT_OPENING_ROUND says so for that mode), where it ran.

Calibration of "settled" (issue 31; `Calibration`): for the ways in CALIBRATED_WAYS, after every
rating update each adjacent pair of the board whose P(upper better than lower) is at least
SETTLED_CONFIDENCE is marked settled, that probability being TrueSkill's posterior with its
spread widened by w (`arena.ratings.p_better(a, b, w)`) for each w in WIDENINGS; each pair newly
marked is one call, right when the upper bot is truly the better. The product's widening is
`arena.ratings.CALIBRATED_WIDEN`. The same pass gives the finals' cost: the matches until every
adjacent pair is marked at once (the stopping rule of `arena ladder run --until-settled` and of
a competition's finals), whether the order is then right, and how many matches plain needs to
reach that same order and keep it for HOLD more.

The matches themselves are shared between the ways within a trial (common random numbers): the
j-th set played at a given table is the same deal, the same seating and the same random moves
whichever way asked for it, and plain's j-th match at a table is rotation 0 of that set (a
random seating, since each set's seating is shuffled). So differences between the ways are not
differences of luck. Trials run in worker processes (`--workers`, default 2).

Goals (issue 31): at confidence 0.95, at least 95% of the default's settled calls right, on
every pool ("calibration"); the default's median at most 0.25 x plain's on pools where plain
needs 500 matches or more ("close goal"), at most 1.5 x where plain needs fewer than 200 ("wide
goal"). Plain's cap is raised (CAPS["plain"]) so that its counts on the close pools are
figures where it can reach them at all.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence

from arena.app import DEFAULT_OPENING_ROUND
from arena.games import make_game
from arena.games.base import ranks_from_scores
from arena.margins import MarginModel
from arena.ratings import (
    CALIBRATED_WIDEN,
    DEFAULT_RATING_MODE,
    FROZEN_FIELD,
    MARGINS_MODE,
    SET_MODE,
    SETTLED_CONFIDENCE,
    Rater,
    RatingParams,
    p_better,
    set_ranks,
)
from arena.schedule import make_schedule
from arena.service.tables import Candidate, choose_table

from .common import ROOT

TAU_GOAL = 0.9
HOLD = 200  # matches the order must stay at tau >= TAU_GOAL for
# Issue 31's goals, the default's median over plain's: at most CLOSE_RATIO on pools where
# plain needs CLOSE_PLAIN matches or more, at most WIDE_RATIO where it needs fewer than
# WIDE_PLAIN (pools in between have no goal).
CLOSE_PLAIN, CLOSE_RATIO = 500, 0.25
WIDE_PLAIN, WIDE_RATIO = 200, 1.5

# Random-move rates per bot, best first, per game: Boom is much the luckier game (a bot that
# plays at random half the time is still close to the heuristic), so its pools are spread wider.
POOLS = {
    "balloon": {
        "close": (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3),
        "wide": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
    },
    "boom": {
        "close": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
        "wide": (0.0, 0.15, 0.3, 0.45, 0.6, 0.8, 1.0),
    },
}
POOL_NAMES = ("close", "wide")
# (case, game, players, options, plain's cap in matches: raised from the other ways' 2,000 so
# that plain's counts are figures where it converges at all; Boom's is lower because plain did
# not reach tau >= 0.9 there within 10,000 in a trial of Boom 4p close, and Boom is the slower
# game to simulate)
CASES = (
    ("balloon 3p", "balloon", 3, {}, 6000),
    ("balloon 4p", "balloon", 4, {}, 6000),
    ("boom 4p", "boom", 4, {}, 4000),
    ("boom 4p advanced", "boom", 4, {"advanced": True}, 4000),
)


@dataclass(frozen=True, slots=True)
class Way:
    """One way of running a ladder: where its tables come from and how a set is rated.

    tables: "schedule" (the round-robin in its own order), "spread" (the same rounds, each
    reordered by `spread_order`: `make_schedule(..., spread=True)`), "serve" (`choose_table` on
    the current ratings) or "spread, then serve" (the first round-robin round spread, then
    `choose_table`).
    rating: "plain" (one fresh match per table, rated), "match" (each match of the set rated),
    "set" (the set rated once by summed scores), "rank sum" (once by summed ranks), "pairs"
    (every pair of the set rated as a two-bot match by their summed scores), "set, ties" (once by
    summed scores, bots within TIE_POINTS points per match of each other tied), "half sets"
    (for even k, rotations 0 and k/2, then the next pair of opposite rotations, and so on, each
    pair rated by summed scores: half the set's latency, each bot in opposite seats).
    live: the leaderboard between sets also shows the set in progress, its matches rated one by
    one on a copy of the ratings that the set's own rating then replaces.
    params: the TrueSkill parameters (the ladder's default, or tau 0 for fixed entrants).
    after_opening: with tables "opening", the parameters once the opening round is rated (None:
    `params` throughout).
    set_beta_power: a set rated as one result is rated with TrueSkill's beta over k to this power
    (a set's summed scores, its deal's luck cancelled, say more than one match's: 0.5 takes
    them as k independent matches' worth); single matches keep the parameters' beta.
    opening_rounds: with tables "opening", how many rounds of single matches come first."""

    tables: str
    rating: str
    live: bool = False
    params: RatingParams = RatingParams()
    after_opening: RatingParams | None = None
    set_beta_power: float = 0.0
    opening_rounds: int = 1

    def applies(self, k: int) -> bool:
        return self.rating != "half sets" or k % 2 == 0


# Bots whose summed scores over a set differ by less than this many points per match of the set
# tie ("set, ties"): about the gap between neighbours' mean scores on the close pools (Balloon 3p
# close: 48.4 to 41.3 over six gaps; Boom 4p close: 36.4 to 32.7), a quarter of summed gaps.
TIE_POINTS = 1.0


WAYS = {
    "plain": Way("schedule", "plain"),
    "duplicate, per match": Way("schedule", "match"),
    "duplicate, set": Way("schedule", "set"),
    # Issue 31's ideas for the pools where plain is fast (the "wide" goal):
    "opening round, then set": Way("opening", "set"),
    "set, first set per match": Way("schedule", "first set per match"),
    # For a competition's finals, whose entrants are frozen: no skill drift to allow for.
    "duplicate, set, tau 0": Way("schedule", "set", params=FROZEN_FIELD),
    # Issue 31's close goal (2026-12-03): a set's score margins rather than its order; the
    # product's default mode ("margins") since then, with no opening round.
    "duplicate, set, margins": Way("schedule", "margins"),
}
# Ways measured before (2026-12-01, docs/benchmarks.md#rating): clearly worse than the default
# on every pool, game-dependent, or (serve) simulating sets of their own: run only when
# ARENA_RATING_ALL_WAYS=1 is set, so that the suite keeps within its time.
EXPLORED_WAYS = {
    "duplicate, set by rank sum": Way("schedule", "rank sum"),
    "serve, per match": Way("serve", "match"),
    "serve, set": Way("serve", "set"),
    "set, ties": Way("schedule", "set, ties"),
    "set, spread order": Way("spread", "set"),
    "spread, then serve, set": Way("spread, then serve", "set"),
    "set + live": Way("schedule", "set", live=True),
    "set as pairs": Way("schedule", "pairs"),
    "set + live, spread order": Way("spread", "set", live=True),
    "half sets": Way("schedule", "half sets"),
    # Issue 31's close goal on Balloon 3p close (2026-12-02 evening): variations of the default.
    "opening round, then first set per match": Way("opening", "first set per match"),
    "opening round, then set, tau 0": Way("opening", "set", after_opening=FROZEN_FIELD),
    "opening round, then set, tau 0 throughout": Way("opening", "set", params=FROZEN_FIELD),
    "opening round, then set, set beta / sqrt(k)": Way("opening", "set", set_beta_power=0.5),
    "opening round, then set, set beta / k": Way("opening", "set", set_beta_power=1.0),
    "opening round, then set, set beta * sqrt(k)": Way("opening", "set", set_beta_power=-0.5),
    "opening round, then set, set beta * k": Way("opening", "set", set_beta_power=-1.0),
    "two opening rounds, then set": Way("opening", "set", opening_rounds=2),
    # Issue 31's close goal (2026-12-03): variations of the margins way.
    "opening round, then set, margins": Way("opening", "margins"),
    "duplicate, set, margins, diagonal": Way("schedule", "margins, diagonal"),
}
if os.environ.get("ARENA_RATING_ALL_WAYS") == "1":
    WAYS.update(EXPLORED_WAYS)
# A short run of a few ways, pools and trials, for a question of one pool (the full suite takes
# an hour): ARENA_RATING_WAYS="way;way" runs only these ways of WAYS and EXPLORED_WAYS (and
# plain, the reference); ARENA_RATING_POOLS="balloon 3p, close;..." only these pools (as the
# report names them); ARENA_RATING_TRIAL_RANGE=FIRST:END only trials FIRST..END-1 (a trial's
# seed is its number's, so trial t is the same matches in every run).
if os.environ.get("ARENA_RATING_WAYS"):
    _chosen = ["plain", *(w.strip() for w in os.environ["ARENA_RATING_WAYS"].split(";"))]
    _known = {**WAYS, **EXPLORED_WAYS}
    WAYS = {w: _known[w] for w in dict.fromkeys(_chosen)}
# The way each rating mode of `arena ladder run` is.
MODE_WAYS = {
    "match": "duplicate, per match",
    "set": "duplicate, set",
    "margins": "duplicate, set, margins",
}
# The way a new ladder of `arena ladder run` is, with its opening round (the default), per mode.
OPENING_WAYS = {"set": "opening round, then set", "margins": "opening round, then set, margins"}
# Ways whose "settled" calls are checked (the calibration part): the default (margins, as a
# competition's finals are rated), TrueSkill's set and per-match modes, and plain.
CALIBRATED_WAYS = (
    "duplicate, set, margins",
    "duplicate, set",
    "duplicate, set, tau 0",
    "duplicate, per match",
    "plain",
)
# ARENA_RATING_CALIBRATED="way;way": these ways' calls are checked too (a variation of the
# default's rating must stay calibrated).
if os.environ.get("ARENA_RATING_CALIBRATED"):
    CALIBRATED_WAYS += tuple(w.strip() for w in os.environ["ARENA_RATING_CALIBRATED"].split(";"))
# Ways a competition's finals could be (rated from scratch; the product's: margins): their cost
# is matches until every adjacent pair is settled, against plain reaching the same order.
FINALS_WAYS = ("duplicate, set, margins", "duplicate, set", "duplicate, set, tau 0")
FINALS_WIDEN = CALIBRATED_WIDEN[MARGINS_MODE]
assert CALIBRATED_WIDEN[SET_MODE] == FINALS_WIDEN  # one widening for every finals way
# The widenings of TrueSkill's posterior spread tried (arena.ratings.p_better's `widen`); the
# product's, per rating mode, are arena.ratings.CALIBRATED_WIDEN.
WIDENINGS = (1.0, 1.5, 2.0, 2.5, 3.0)
# The benchmark, and the quick form for CI (one trial, a quarter of the caps: a smoke run whose
# figures are too few to judge by). Caps, in matches: "cap" for every way's tau count but
# plain's (CASES), "finals" for playing on until every adjacent pair is settled (and the
# calibration).
FULL = {"trials": 5, "cap_share": 1.0}
QUICK = {"trials": 1, "cap_share": 0.25}
CAPS = {"cap": 2000, "finals": 2000}


def _policy(game: str) -> Callable:
    bots = str(ROOT / "example_bots")
    if bots not in sys.path:
        sys.path.insert(0, bots)  # the example bots import their shared _engine_view module
    if game == "balloon":
        import balloon_heuristic

        return balloon_heuristic.choose
    import boom_heuristic

    return boom_heuristic.choose


# ------------------------------------------------------------------------------ the matches


@dataclass(frozen=True, slots=True)
class Played:
    seats: tuple[int, ...]  # bot per seat
    scores: tuple[int, ...]


class MatchBank:
    """One trial's matches, played when first asked for and kept: the j-th set at a table (a
    sorted tuple of bots) has its own deal, its own shuffled seating and its own random moves,
    all derived from (trial seed, table, j, rotation), whoever asks first."""

    def __init__(self, game, rates: Sequence[float], seed: int, policy: Callable):
        self.game = game
        self.rates = rates
        self.seed = seed
        self.policy = policy
        self._sets: dict[tuple[tuple[int, ...], int], tuple[tuple[int, ...], int]] = {}
        self._played: dict[tuple[tuple[int, ...], int, int], Played] = {}
        self.simulated = 0

    def match(self, table: tuple[int, ...], j: int, rotation: int) -> Played:
        key = (table, j, rotation)
        found = self._played.get(key)
        if found is None:
            seating, deal = self._set(table, j)
            seats = seating[rotation:] + seating[:rotation]
            rng = random.Random(f"{self.seed}/{table}/{j}/{rotation}")
            found = self._played[key] = Played(seats, self._play(seats, deal, rng))
        return found

    def _set(self, table: tuple[int, ...], j: int) -> tuple[tuple[int, ...], int]:
        found = self._sets.get((table, j))
        if found is None:
            rng = random.Random(f"{self.seed}/{table}/{j}")
            seating = list(table)
            rng.shuffle(seating)
            found = self._sets[(table, j)] = (tuple(seating), rng.randrange(2**53))
        return found

    def _play(self, seats: tuple[int, ...], deal: int, rng: random.Random) -> tuple[int, ...]:
        rates = [self.rates[b] for b in seats]
        self.simulated += 1
        return playout(self.game, self.policy, deal, rates, [rng] * len(seats))


def playout(
    game, policy: Callable, deal: int, rates: Sequence[float], rngs: Sequence[random.Random]
) -> tuple[int, ...]:
    """One match to the end: each seat plays the policy, or at its rate a uniformly random legal
    move instead, drawing from its own random stream (seats may share one); the scores."""
    state = game.new_match(deal)
    while not state.is_over():
        for seat in state.seats_to_act():  # a simultaneous step hides choices until all are in
            legal = state.legal_actions(seat)
            rate, rng = rates[seat], rngs[seat]
            if rate and rng.random() < rate:
                action = rng.choice(legal)
            else:
                action = policy(game, state.observation(seat), legal, rng, None)
            state.apply_action(seat, action)
    return tuple(state.scores())


# ------------------------------------------------------------------------------ the ways


class Board:
    """The ratings of one way of running the ladder, and the leaderboard's order."""

    def __init__(self, n: int, rater: Rater, names: Sequence[str], ratings: dict | None = None):
        self.rater = rater
        self.ratings = (
            dict(ratings) if ratings is not None else {b: rater.initial() for b in range(n)}
        )
        self.names = names
        self.version = 0  # rating updates so far
        self.shown = tuple(self.order())
        self.tau = kendall_tau(self.shown)

    def rate(self, ranks: dict[int, int]) -> None:
        update = self.rater.rate({b: self.ratings[b] for b in ranks}, ranks)
        self.ratings.update(update.ratings)
        self.version += 1
        self.shown = tuple(self.order())
        self.tau = kendall_tau(self.shown)

    def p_better(self, upper: int, lower: int, widen: float) -> float:
        """P(upper's skill is above lower's), its spread widened by `widen` (Calibration)."""
        return p_better(self.ratings[upper], self.ratings[lower], widen)

    def order(self) -> list[int]:
        # As Store.rankings: conservative rating, then mu, then name (here a random one).
        r = self.ratings
        return sorted(r, key=lambda b: (-(r[b].mu - 3 * r[b].sigma), -r[b].mu, self.names[b]))


class MarginBoard(Board):
    """Ratings from score margins, not ranks: the product's margins mode (arena.margins, its
    MarginModel, which its docstring describes). The leaderboard is mu - 3 sigma, as the store
    ranks it. With `diagonal` (explored), only each bot's own variance is kept after an update
    (as TrueSkill keeps a mu and sigma a bot), and P(better) takes the bots as independent; else
    the full covariance is kept, and P(better) is that of their difference (the product)."""

    def __init__(self, n: int, names: Sequence[str], diagonal: bool = False):
        self.model = MarginModel(range(n))
        self.diagonal = diagonal
        self.rater = None
        self.ratings = dict(self.model.ratings())
        self.names = names
        self.version = 0
        self.shown = tuple(self.order())
        self.tau = kendall_tau(self.shown)

    def observe(self, played: Sequence[Played]) -> None:
        self.model.observe([(p.seats, p.scores) for p in played])
        if self.diagonal:
            cov = self.model.cov
            for i, row in enumerate(cov):
                cov[i] = [value if j == i else 0.0 for j, value in enumerate(row)]
        self.ratings = dict(self.model.ratings())
        self.version += 1
        self.shown = tuple(self.order())
        self.tau = kendall_tau(self.shown)

    def p_better(self, upper: int, lower: int, widen: float) -> float:
        return self.model.p_better(upper, lower, widen)


def kendall_tau(order: Sequence[int]) -> float:
    """Kendall's tau between a leaderboard (best first) and the true order 0, 1, 2, ..."""
    pairs = list(itertools.combinations(order, 2))
    concordant = sum(1 for a, b in pairs if a < b)
    return (2 * concordant - len(pairs)) / len(pairs)


def _set_ranks_by_rank_sum(played: Sequence[Played]) -> dict[int, int]:
    totals: dict[int, int] = {}
    for p in played:
        for bot, rank in zip(p.seats, ranks_from_scores(p.scores)):
            totals[bot] = totals.get(bot, 0) - rank  # fewer rank points is better
    bots = list(totals)
    return dict(zip(bots, ranks_from_scores([totals[b] for b in bots])))


def _set_ranks_by_score(played: Sequence[Played]) -> dict[int, int]:
    return set_ranks((p.seats, p.scores, ()) for p in played)


def _rate_match(board: Board, played: Played) -> None:
    if isinstance(board, MarginBoard):
        board.observe([played])
        return
    board.rate(dict(zip(played.seats, ranks_from_scores(played.scores))))


def schedule_tables(
    n: int, k: int, seed: int, cap: int, spread: bool = False
) -> Iterator[tuple[int, ...]]:
    """The round-robin's tables in schedule order (`make_schedule(..., spread=spread)`), as
    sorted tuples, enough for `cap` sets."""
    per_round = len(make_schedule(list(range(n)), k, 1, seed)) // k
    rounds = math.ceil(cap / per_round) + 1
    for m in make_schedule(list(range(n)), k, rounds, seed, spread=spread):
        if m.rotation == 0:
            yield tuple(sorted(m.seats))


def _set_ranks_with_ties(played: Sequence[Played]) -> dict[int, int]:
    totals: dict[int, int] = {}
    for p in played:
        for bot, score in zip(p.seats, p.scores):
            totals[bot] = totals.get(bot, 0) + score
    margin = TIE_POINTS * len(played)
    ranks: dict[int, int] = {}
    previous, rank = None, -1
    for place, bot in enumerate(sorted(totals, key=lambda b: -totals[b])):
        if previous is None or previous - totals[bot] >= margin:
            rank = place
        ranks[bot] = rank
        previous = totals[bot]
    return {b: ranks[b] for b in totals}


def _rate_pairs(board: Board, played: Sequence[Played]) -> None:
    totals = _set_ranks_by_score(played)  # ranks by summed score: enough to compare pairs
    for a, b in itertools.combinations(played[0].seats, 2):  # seat order: random
        board.rate({a: totals[a], b: totals[b]})


def _rate_set(board: Board, rating: str, played: Sequence[Played]) -> None:
    if isinstance(board, MarginBoard):
        board.observe(played)
    elif rating == "pairs":
        _rate_pairs(board, played)
    elif rating == "rank sum":
        board.rate(_set_ranks_by_rank_sum(played))
    elif rating == "set, ties":
        board.rate(_set_ranks_with_ties(played))
    else:
        board.rate(_set_ranks_by_score(played))


def run_way(
    way: Way, bank: MatchBank, n: int, k: int, seed: int, names: Sequence[str], cap: int
) -> Iterator[Board]:
    """The leaderboard after each match of one way (the same Board object, updated in place,
    except while a live way shows a set in progress), up to `cap` matches."""
    board = (
        MarginBoard(n, names, diagonal=way.rating == "margins, diagonal")
        if way.rating.startswith("margins")
        else Board(n, Rater(way.params), names)
    )
    set_rater = None
    if way.set_beta_power:
        params = way.after_opening or way.params
        set_rater = Rater(replace(params, beta=params.beta / k**way.set_beta_power))
    uses: dict[tuple[int, ...], int] = {}
    played = 0
    counts = {b: 0 for b in range(n)}
    per_round = sum(1 for m in make_schedule(list(range(n)), k, 1, seed) if m.rotation == 0)
    if way.tables == "serve":
        tables: Iterator[tuple[int, ...]] = _serve_tables(
            board, counts, k, random.Random(f"{seed}/serve")
        )
    elif way.tables == "spread, then serve":
        tables = itertools.chain(
            itertools.islice(schedule_tables(n, k, seed, cap, spread=True), per_round),
            _serve_tables(board, counts, k, random.Random(f"{seed}/serve")),
        )
    else:
        tables = schedule_tables(n, k, seed, cap, spread=way.tables == "spread")
    if way.tables == "opening":
        # One round of single matches first (each table once, a fresh deal, random seats, rated
        # per match: plain's start), then the round-robin's duplicate sets from its beginning.
        # `opening_rounds` 2: the round-robin's first two rounds' tables so, then the sets.
        singles = way.opening_rounds * per_round
        for table in itertools.islice(schedule_tables(n, k, seed, singles), singles):
            j = uses.get(table, 0)
            uses[table] = j + 1
            _rate_match(board, bank.match(table, j, 0))
            played += 1
            yield board
        if way.after_opening is not None:
            board.rater = Rater(way.after_opening)
    for table in tables:
        j = uses.get(table, 0)
        uses[table] = j + 1
        if way.rating == "plain":
            _rate_match(board, bank.match(table, j, 0))
            played += 1
            yield board
        else:
            if way.rating == "half sets":
                order = [r for h in range(k // 2) for r in (h, h + k // 2)]
                parts = [order[i : i + 2] for i in range(0, k, 2)]
            else:
                parts = [list(range(k))]
            # "first set per match": a set in which a bot plays its first set is rated match by
            # match (so that early boards move as plain's do), every later set as a whole.
            per_match = way.rating == "match" or (
                way.rating == "first set per match" and any(counts[b] == 0 for b in table)
            )
            for part in parts:
                matches = [bank.match(table, j, r) for r in part]
                if per_match:
                    for p in matches:
                        _rate_match(board, p)
                        yield board
                    continue
                if way.live:
                    shown = Board(n, board.rater, names, board.ratings)
                    for p in matches[:-1]:
                        _rate_match(shown, p)
                        yield shown
                else:
                    for _ in matches[:-1]:
                        yield board  # the set is rated when its last match is in
                if set_rater is not None:
                    single, board.rater = board.rater, set_rater
                _rate_set(board, "set" if way.rating == "half sets" else way.rating, matches)
                if set_rater is not None:
                    board.rater = single
                yield board
            played += k
            for b in table:
                counts[b] += k
        if played >= cap:
            return


class _QuickQuality:
    """The TrueSkill environment `choose_table` scores tables with, with `quality` for tables of
    one-bot teams worked out in closed form: trueskill's own builds and inverts its matrices in
    pure Python, ~1 ms a table, most of a serve trial's time. The matrix it inverts is then
    tridiagonal, M[i][i] = 2 beta^2 + s_i^2 + s_(i+1)^2, M[i][i+1] = -(beta^2 + s_(i+1)^2), and
    quality = exp(-d' M^-1 d / 2) sqrt(det(beta^2 A A') / det M) with d_i = mu_i - mu_(i+1).
    `check` compares it with trueskill's on random tables before a run."""

    def __init__(self, env):
        self.env = env
        self.sigma = env.sigma
        self.create_rating = env.create_rating

    def quality(self, groups) -> float:
        ratings = [g[0] for g in groups]
        b2 = self.env.beta**2
        n = len(ratings) - 1
        diag = [2 * b2 + ratings[i].sigma ** 2 + ratings[i + 1].sigma ** 2 for i in range(n)]
        off = [-(b2 + ratings[i + 1].sigma ** 2) for i in range(n - 1)]
        d = [ratings[i].mu - ratings[i + 1].mu for i in range(n)]
        # Thomas algorithm: solve M x = d, with det M the product of the pivots.
        pivots, rhs = [diag[0]], [d[0]]
        for i in range(1, n):
            f = off[i - 1] / pivots[-1]
            pivots.append(diag[i] - f * off[i - 1])
            rhs.append(d[i] - f * rhs[-1])
        x = [0.0] * n
        x[-1] = rhs[-1] / pivots[-1]
        for i in range(n - 2, -1, -1):
            x[i] = (rhs[i] - off[i] * x[i + 1]) / pivots[i]
        det_m = math.prod(pivots)
        det_ata = (n + 1) * b2**n  # det of the tridiagonal (2, -1) matrix of size n is n + 1
        return math.exp(-0.5 * sum(a * b for a, b in zip(d, x))) * math.sqrt(det_ata / det_m)

    def check(self, k: int, rng: random.Random) -> None:
        for _ in range(50):
            table = [
                (self.env.create_rating(rng.uniform(10, 40), rng.uniform(0.5, 9)),)
                for _ in range(k)
            ]
            ours, theirs = self.quality(table), self.env.quality(table)
            if not math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12):
                raise AssertionError(
                    f"closed-form quality {ours} differs from trueskill's {theirs} for {table}"
                )


def _serve_tables(
    board: Board, counts: dict[int, int], k: int, rng: random.Random
) -> Iterator[tuple[int, ...]]:
    env = _QuickQuality(board.rater.env)
    env.check(k, random.Random(0))
    clock = 0
    last = {b: 0.0 for b in counts}
    while True:
        candidates = [
            Candidate(
                name=str(b),
                mu=board.ratings[b].mu,
                sigma=board.ratings[b].sigma,
                matches=counts[b],
                busy=False,
                last_played=last[b],
            )
            for b in counts
        ]
        seats = choose_table(candidates, k, env, rng)
        table = tuple(sorted(int(s) for s in seats))
        clock += 1
        for b in table:
            last[b] = clock
        yield table


class Hold:
    """The first match count after which `test(board)` holds for HOLD more matches (the tau
    count, and plain's count to reach the finals' order); None if not by `cap` (+ HOLD)."""

    def __init__(self, test: Callable[[Board], bool], cap: int):
        self.test = test
        self.cap = cap
        self.start: int | None = None
        self.result: int | None = None
        self.done = False

    def see(self, count: int, board: Board) -> None:
        if self.test(board):
            if self.start is None:
                self.start = count
            if count - self.start >= HOLD:
                self.result, self.done = self.start, True
        else:
            self.start = None
        if count >= self.cap + HOLD:
            self.done = True


class Calibration:
    """The calibration of "settled", and the finals' stopping point, for each widening w in
    WIDENINGS: after every rating update, each adjacent pair of the board (conservative order)
    whose p_better(upper, lower, w) >= SETTLED_CONFIDENCE is marked settled; each pair newly
    marked (not marked after the update before) is one call, right when the upper bot is the
    better one. `stops[w]` is the first match count with every adjacent pair marked (the finals'
    rule) and the board's order then; None if not by `cap`."""

    def __init__(self, cap: int):
        self.cap = cap
        self.version = -1
        self.calls = {w: 0 for w in WIDENINGS}
        self.right = {w: 0 for w in WIDENINGS}
        self.marked: dict[float, set[tuple[int, int]]] = {w: set() for w in WIDENINGS}
        self.stops: dict[float, tuple[int, tuple[int, ...]] | None] = {w: None for w in WIDENINGS}
        self.done = False

    def see(self, count: int, board: Board) -> None:
        if board.version != self.version:
            self.version = board.version
            order = board.shown
            for w in WIDENINGS:
                now = {
                    (u, v)
                    for u, v in zip(order, order[1:])
                    if board.p_better(u, v, w) >= SETTLED_CONFIDENCE
                }
                new = now - self.marked[w]
                self.calls[w] += len(new)
                self.right[w] += sum(u < v for u, v in new)
                self.marked[w] = now
                if self.stops[w] is None and len(now) == len(order) - 1:
                    self.stops[w] = (count, order)
        if count >= self.cap or all(self.stops.values()):
            self.done = True

    def to_dict(self) -> dict:
        return {
            str(w): {
                "calls": self.calls[w],
                "right": self.right[w],
                "stop": None if self.stops[w] is None else self.stops[w][0],  # type: ignore[index]
                "stop_right": None
                if self.stops[w] is None
                else list(self.stops[w][1]) == sorted(self.stops[w][1]),  # type: ignore[index]
            }
            for w in WIDENINGS
        }


def follow(boards: Iterator[Board], watchers: Sequence[Hold | Calibration]) -> None:
    """Feed each board to the watchers until all are done."""
    for count, board in enumerate(boards, 1):
        for w in watchers:
            if not w.done:
                w.see(count, board)
        if all(w.done for w in watchers):
            return


def trial(task: tuple[str, str, int, dict[str, int]]) -> dict:
    case_name, pool, t, caps = task
    _, game_name, k, options, _ = next(c for c in CASES if c[0] == case_name)
    rates = POOLS[game_name][pool]
    n = len(rates)
    seed = hash_seed(case_name, pool, t)
    bank = MatchBank(make_game(game_name, k, **options), rates, seed, _policy(game_name))
    names = [f"{x:08x}" for x in random.Random(f"{seed}/names").sample(range(1 << 32), n)]
    counts: dict[str, int | None] = {}
    calibration: dict[str, dict] = {}
    finals_orders: dict[str, tuple[int, ...]] = {}  # "way/widening": the order it stopped on
    to_finals_order: dict[str, int | None] = {}
    start = time.perf_counter()
    # The finals' ways first: plain then races to the orders their finals stopped on.
    ways = [w for w in FINALS_WAYS if w in WAYS]
    ways += [w for w in WAYS if w not in ways and WAYS[w].applies(k)]
    for way in ways:
        is_plain = WAYS[way].rating == "plain"
        tau = Hold(lambda b: b.tau >= TAU_GOAL, caps["plain" if is_plain else "cap"])
        watchers: list[Hold | Calibration] = [tau]
        calib = Calibration(caps["finals"]) if way in CALIBRATED_WAYS else None
        if calib is not None:
            watchers.append(calib)
        targets: dict[tuple[int, ...], Hold] = {}
        if is_plain:
            for order in set(finals_orders.values()):
                targets[order] = Hold(lambda b, o=order: b.shown == o, caps["plain"])
            watchers.extend(targets.values())
        longest = max(caps.values()) + HOLD
        follow(run_way(WAYS[way], bank, n, k, seed, names, longest), watchers)
        counts[way] = tau.result
        if calib is not None:
            calibration[way] = calib.to_dict()
            if way in FINALS_WAYS:
                for w, stop in calib.stops.items():
                    if stop is not None:
                        finals_orders[f"{way}/{w}"] = stop[1]
        if is_plain:
            to_finals_order = {key: targets[o].result for key, o in finals_orders.items()}
    score_sums = [0] * n
    seats = [0] * n
    for p in bank._played.values():
        for bot, score in zip(p.seats, p.scores):
            score_sums[bot] += score
            seats[bot] += 1
    return {
        "case": case_name,
        "pool": pool,
        "trial": t,
        "counts": counts,
        "calibration": calibration,
        "plain_to_finals_order": to_finals_order,
        "simulated": bank.simulated,
        "seconds": time.perf_counter() - start,
        "score_sums": score_sums,
        "seats": seats,
    }


def hash_seed(*parts: object) -> int:
    return random.Random("/".join(map(str, parts))).randrange(2**53)


# ------------------------------------------------------------------------------ the report


def summarise(counts: Sequence[int | None], cap: int) -> dict:
    """Median and quartiles; a trial that did not reach the goal sorts above `cap`."""
    keyed = sorted(c if c is not None else math.inf for c in counts)

    def q(p: float):
        x = keyed[min(len(keyed) - 1, int(p * (len(keyed) - 1) + 0.5))]
        return None if x == math.inf else x

    med = statistics.median_low(keyed) if len(keyed) % 2 else statistics.median(keyed)
    return {
        "median": None if med == math.inf else med,
        "q1": q(0.25),
        "q3": q(0.75),
        "missed": sum(c is None for c in counts),
        "trials": len(counts),
        "cap": cap,
    }


def _fmt(s: dict) -> str:
    med = f"{s['median']:.0f}" if s["median"] is not None else f">{s['cap']}"
    q1 = f"{s['q1']:.0f}" if s["q1"] is not None else f">{s['cap']}"
    q3 = f"{s['q3']:.0f}" if s["q3"] is not None else f">{s['cap']}"
    missed = f", {s['missed']} missed" if s["missed"] else ""
    return f"{med} ({q1}-{q3}{missed})"


def _ratio(mine: dict, plain: dict) -> tuple[float | None, bool]:
    """A way's median over plain's, and whether it is an upper bound (plain missed its cap in
    half its trials or more: its median is then above the cap, taken as the cap)."""
    if mine["median"] is None:
        return None, False
    if plain["median"] is None:
        return mine["median"] / plain["cap"], True
    return mine["median"] / plain["median"], False


def _calibration_summary(mine: Sequence[dict], way: str, finals_cap: int) -> dict:
    """Per widening, over a pool's trials: settled calls, the share right, and the finals'
    stopping point (matches until every adjacent pair was settled; its order right or not)."""
    out = {}
    for w in WIDENINGS:
        cells = [d["calibration"][way][str(w)] for d in mine]
        calls = sum(c["calls"] for c in cells)
        right = sum(c["right"] for c in cells)
        stops = [c["stop"] for c in cells]
        out[str(w)] = {
            "calls": calls,
            "right": right,
            "share_right": round(right / calls, 4) if calls else None,
            "finals": summarise(stops, finals_cap),
            "finals_order_right": sum(bool(c["stop_right"]) for c in cells),
        }
    return out


def run(seconds: float, log, quick: bool = False, workers: int | None = None) -> dict:
    params = QUICK if quick else FULL
    workers = workers or min(2, os.cpu_count() or 1)
    share = params["cap_share"]
    caps = {name: int(cap * share) for name, cap in CAPS.items()}
    case_caps = {c[0]: {**caps, "plain": int(c[4] * share)} for c in CASES}
    pools = os.environ.get("ARENA_RATING_POOLS")
    chosen = {p.strip() for p in pools.split(";")} if pools else None
    first, end = 0, params["trials"]
    if os.environ.get("ARENA_RATING_TRIAL_RANGE"):
        first, end = map(int, os.environ["ARENA_RATING_TRIAL_RANGE"].split(":"))
    # Trial by trial across the pools, so that a run stopped early has every pool's first trials.
    tasks = [
        (c[0], pool, t, case_caps[c[0]])
        for t in range(first, end)
        for c in CASES
        for pool in POOL_NAMES
        if chosen is None or f"{c[0]}, {pool}" in chosen
    ]
    log(
        f"{len(tasks)} trials on {workers} worker processes "
        f"(trials {first} to {end - 1} of each pool run; caps {case_caps})..."
    )
    start = time.perf_counter()
    # ARENA_RATING_TRIALS=PATH: each trial's raw result also goes to PATH as one JSON line when
    # it ends (a long run's figures survive its interruption; `tables_from` reads them back).
    trials_out = os.environ.get("ARENA_RATING_TRIALS")
    done = []
    with ProcessPoolExecutor(workers) as pool_:
        for d in pool_.map(trial, tasks):
            done.append(d)
            if trials_out:
                with open(trials_out, "a") as f:
                    f.write(json.dumps(d) + "\n")
    elapsed = time.perf_counter() - start
    return report(done, case_caps, end - first, elapsed, log)


def report(done: Sequence[dict], case_caps: dict, trials: int, elapsed: float, log) -> dict:
    """The suite's results and goals from its trials' raw results (`trial`); also for the lines
    of an ARENA_RATING_TRIALS file: `report([json.loads(line) for line in f], ...)`."""
    results: dict = {
        "trials_per_pool": trials,
        "hold": HOLD,
        "tau": TAU_GOAL,
        "default_mode": DEFAULT_RATING_MODE,
        "caps": case_caps,
        "confidence": SETTLED_CONFIDENCE,
        "calibrated_widen": CALIBRATED_WIDEN,
        "seconds": round(elapsed, 1),
        "matches_simulated": sum(d["simulated"] for d in done),
        "cases": {},
    }
    goals: dict = {}
    # The goals are the product's default's: a new ladder of `arena ladder run` opens with its
    # opening round (arena.app.DEFAULT_OPENING_ROUND), then its sets in the default mode.
    default_way = (
        OPENING_WAYS[DEFAULT_RATING_MODE]
        if DEFAULT_OPENING_ROUND[DEFAULT_RATING_MODE]
        else MODE_WAYS[DEFAULT_RATING_MODE]
    )
    for case_name, game_name, _, _, _ in CASES:
        caps = case_caps[case_name]
        for pool in POOL_NAMES:
            mine = [d for d in done if d["case"] == case_name and d["pool"] == pool]
            if not mine:
                continue
            # A way that does not apply to this table size ("half sets" at odd k) is left out.
            summary = {
                way: summarise(
                    [d["counts"][way] for d in mine],
                    caps["plain" if WAYS[way].rating == "plain" else "cap"],
                )
                for way in WAYS
                if way in mine[0]["counts"]
            }
            means = [
                sum(d["score_sums"][b] for d in mine) / max(1, sum(d["seats"][b] for d in mine))
                for b in range(len(POOLS[game_name][pool]))
            ]
            order_ok = all(a > b for a, b in zip(means, means[1:]))
            key = f"{case_name}, {pool}"
            calibration = {
                way: _calibration_summary(mine, way, caps["finals"])
                for way in CALIBRATED_WAYS
                if way in summary
            }
            # Plain's matches to the order the finals stopped on, over the trials whose finals
            # stopped within their cap (None: none did).
            plain_to_order = {}
            for way in (w for w in FINALS_WAYS if w in summary):
                target = f"{way}/{FINALS_WIDEN}"
                reached = [
                    d["plain_to_finals_order"][target]
                    for d in mine
                    if target in d["plain_to_finals_order"]
                ]
                plain_to_order[way] = summarise(reached, caps["plain"]) if reached else None
            results["cases"][key] = {
                "ways": summary,
                "mean_scores": [round(m, 3) for m in means],
                "order_confirmed": order_ok,
                "calibration": calibration,
                "plain_to_finals_order": plain_to_order,
            }
            log(
                f"\n{key}: mean score per bot, best first "
                f"{' '.join(f'{m:.2f}' for m in means)} "
                f"(order {'confirmed' if order_ok else 'NOT confirmed'})"
            )
            plain = summary["plain"]
            for way, s in summary.items():
                ratio, bound = _ratio(s, plain)
                shown = (
                    ""
                    if way == "plain" or ratio is None
                    else (f"  {'< ' if bound else ''}x{ratio:.2f} of plain")
                )
                log(f"  {way:<28} {_fmt(s):>28}{shown}")
            for way, by_widen in calibration.items():
                cells = "  ".join(
                    f"w{w}: {c['right']}/{c['calls']}"
                    + (f" {c['share_right']:.3f}" if c["calls"] else "")
                    + f", stop {_fmt(c['finals'])}"
                    for w, c in by_widen.items()
                )
                log(f"  settled at {SETTLED_CONFIDENCE} ({way}): {cells}")
            for way, to_order in plain_to_order.items():
                cell = calibration[way][str(FINALS_WIDEN)]
                log(
                    f"  finals, {way} (widen {FINALS_WIDEN}): every pair settled after "
                    f"{_fmt(cell['finals'])} matches, order right in "
                    f"{cell['finals_order_right']}/{len(mine)}; plain to that order: "
                    f"{_fmt(to_order) if to_order else 'no order (no stop)'}"
                )
            # Each rating mode's leaderboard, with its own widening.
            for mode, way in MODE_WAYS.items():
                if way not in calibration:  # not run (ARENA_RATING_WAYS)
                    continue
                widen = CALIBRATED_WIDEN[mode]
                cell = calibration[way][str(widen)]
                share = cell["share_right"]
                goals[
                    f"{key}: calibration, {mode} mode, pairs settled at {SETTLED_CONFIDENCE} "
                    f"right (widen {widen})"
                ] = {
                    "value": share,
                    "goal": f">= {SETTLED_CONFIDENCE}",
                    # No pair called settled on a pool: no call was wrong (a board that never
                    # settles is the cost, shown by the finals' figures), so the goal holds.
                    "calls": cell["calls"],
                    "met": share is None or share >= SETTLED_CONFIDENCE,
                }
            if default_way not in summary:  # not run (ARENA_RATING_WAYS)
                continue
            value, bound = _ratio(summary[default_way], plain)
            met = value is not None and order_ok
            if plain["median"] is None or plain["median"] >= CLOSE_PLAIN:
                name = f"close goal (plain >= {CLOSE_PLAIN}): default / plain <= {CLOSE_RATIO}"
                met = met and value <= CLOSE_RATIO  # type: ignore[operator]
            elif plain["median"] < WIDE_PLAIN:
                name = f"wide goal (plain < {WIDE_PLAIN}): default / plain <= {WIDE_RATIO}"
                met = met and value <= WIDE_RATIO  # type: ignore[operator]
            else:
                log(f"  (plain needs {plain['median']}: between the goals' pools, no goal)")
                continue
            goals[f"{key}: {name}"] = {
                # None: the default never reached the ranking (JSON has no Infinity)
                "value": round(value, 3) if value is not None else None,
                "goal": f"<= {CLOSE_RATIO if 'close' in name else WIDE_RATIO}",
                "upper_bound": bound,  # plain missed its cap: the real ratio is lower
                "met": met,
            }
    log(f"\n{results['matches_simulated']} matches simulated in {elapsed:.0f} s")
    return {"results": results, "goals": goals}
