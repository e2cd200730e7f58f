"""Compare: how many matches `arena compare`'s paired test needs for a verdict, against the same
test on unpaired matches (fresh deals), and how often each verdict is right.

In-process, with Arena's own engines, the comparison's plan (`arena.compare.plan`) and its test
(`arena.compare.sprt`); no bot processes, no gRPC. NEW is the example heuristic (balloon_heuristic,
boom_heuristic); BASE is the same heuristic playing a uniformly random legal move instead at a
known rate (5% in Balloon; 20% in Boom, the luckier game, where 5% moves the mean score by a
third of a point). The opponents stand in for the example bots: the random bot, the heuristic,
and the heuristic at 20% random moves. Every seat's own randomness is seeded from the match seed
and the seat, as the referee's `bot_seed` is, so an opponent in the same seat of the same deal
plays the same way as long as the game goes the same way.

- paired: the comparison as `arena compare` plays it (plan.py: each deal played in all k
  rotations by NEW and by BASE, same seeds, same opponents; one observation per deal);
- unpaired: the same test on the same number of matches per observation, but NEW's k matches and
  BASE's k matches each on their own fresh deals, seats and opponents: what a comparison without
  duplicate deals would do.

Both ask H1 "NEW gains at least D points per match" against H0 "no gain" at alpha = beta = 0.05,
with D below the true gain (measured in the run on the paired deals), so "better" is the right
verdict. A third way, "self", pairs BASE with a copy of itself (different private randomness):
"better" is then a false verdict, which the test should give at most alpha of the time.

How: each way's observations are drawn from the real games, a pool of POOL deals per way and case
(played in worker processes; a paired or self deal is 2k matches, an unpaired observation 2k
matches too), and the test is then run RUNS times on sequences drawn at random, with replacement,
from each pool (a bootstrap: deals are independent, so a sequence drawn from the pool is
distributed as a comparison's own sequence of deals). That measures the test on the games' real,
skewed distributions of score differences with enough runs to tell an error rate of 5% from 7%,
which trials that play every match could not in ten minutes. The self pool is centred on zero
(its mean, a few hundredths of a point of sampling noise, subtracted), so that "no gain" is
exactly true there. The matches a run needs are its observations times 2k.

Goals: paired needs at most 0.3 x the matches of unpaired (medians); the paired verdict is right
in at least 95% of runs; "self" says "better" in at most alpha of its runs.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Sequence

from arena.compare import plan, sprt
from arena.games import make_game

from .rating import _policy, hash_seed, playout

ALPHA = BETA = 0.05
GOAL_RATIO = 0.3
GOAL_RIGHT = 0.95
# (case, game, players, BASE's random-move rate, D: the gain to detect, points per match)
CASES = (
    ("balloon 4p", "balloon", 4, 0.05, 1.0),
    ("balloon 3p", "balloon", 3, 0.05, 0.5),
    ("boom 4p", "boom", 4, 0.2, 0.5),
)
OPPONENT_RATES = {"random": 1.0, "heuristic": 0.0, "heuristic 20%": 0.2}
CAP = 600  # observations (deals) per run before the test says "undecided"
FULL = {"pool": 500, "runs": 2000}
QUICK = {"pool": 40, "runs": 200}
WAYS = ("paired", "unpaired", "self")
CHUNK = 25  # deals per worker task


class Table:
    """Plays one case's matches: each seat's random stream follows from the match seed, the seat
    and (for the candidate) a salt, as a bot's `bot_seed` does."""

    def __init__(self, game_name: str, k: int, rates: dict[str, float]):
        self.game = make_game(game_name, k)
        self.policy: Callable = _policy(game_name)
        self.rates = rates
        self.played = 0

    def play(self, seats: Sequence[str], seed: int, salt: str = "") -> list[int]:
        rngs = [
            random.Random(f"{seed}/{seat}/{salt if name in ('new', 'base') else ''}")
            for seat, name in enumerate(seats)
        ]
        self.played += 1
        return list(playout(self.game, self.policy, seed, [self.rates[s] for s in seats], rngs))


def paired_observations(table: Table, k: int, seed: int, salt: str = ""):
    opponents = list(OPPONENT_RATES)
    deal = 0
    while True:
        scores: dict[str, list[int]] = {plan.NEW: [], plan.BASE: []}
        for m in plan.deal_matches("new", "base", opponents, k, seed, deal):
            # In "self", NEW is BASE's twin with its own randomness (the salt).
            scores[m.side].append(
                table.play(m.seats, m.seed, salt if m.side == plan.NEW else "")[m.candidate_seat]
            )
        yield plan.observation(k, scores[plan.NEW], scores[plan.BASE])
        deal += 1


def unpaired_observations(table: Table, k: int, seed: int):
    rng = random.Random(f"unpaired/{seed}")
    opponents = list(OPPONENT_RATES)
    while True:
        sums = {}
        for side in ("new", "base"):
            total = 0
            for _ in range(k):
                lineup = (
                    rng.sample(opponents, k - 1)
                    if len(opponents) >= k - 1
                    else [rng.choice(opponents) for _ in range(k - 1)]
                )
                seat = rng.randrange(k)
                seats = lineup[:seat] + [side] + lineup[seat:]
                total += table.play(seats, rng.randrange(2**53))[seat]
            sums[side] = total
        yield (sums["new"] - sums["base"]) / k


def observations(task: tuple[str, str, int, int]) -> tuple[str, str, int, list[float]]:
    """Deals `first` .. `first + count - 1` of one way's pool."""
    case_name, way, first, count = task
    _, game_name, k, base_rate, _ = next(c for c in CASES if c[0] == case_name)
    rates = {"new": base_rate if way == "self" else 0.0, "base": base_rate, **OPPONENT_RATES}
    table = Table(game_name, k, rates)
    seed = hash_seed("compare", case_name, way, first)
    if way == "unpaired":
        source = unpaired_observations(table, k, seed)
    else:
        source = paired_observations(table, k, seed, salt="twin" if way == "self" else "")
    xs = [next(source) for _ in range(count)]
    return case_name, way, table.played, xs


def bootstrap(pool: Sequence[float], spec: sprt.Hypotheses, runs: int, k: int, seed: str) -> dict:
    """The test run `runs` times on sequences drawn from the pool: matches needed and verdicts."""
    rng = random.Random(seed)
    matches, verdicts = [], {sprt.BETTER: 0, sprt.NOT_BETTER: 0, sprt.UNDECIDED: 0}
    for _ in range(runs):
        result = sprt.run(spec, (rng.choice(pool) for _ in range(CAP)), cap=CAP)
        matches.append(result.n * 2 * k)
        verdicts[result.verdict or sprt.UNDECIDED] += 1
    matches.sort()
    return {
        "median_matches": statistics.median(matches),
        "q1": matches[runs // 4],
        "q3": matches[(3 * runs) // 4],
        "verdicts": verdicts,
        "runs": runs,
    }


def run(seconds: float, log, quick: bool = False, workers: int | None = None) -> dict:
    params = QUICK if quick else FULL
    workers = workers or min(2, os.cpu_count() or 1)
    tasks = [
        (c[0], way, first, min(CHUNK, params["pool"] - first))
        for c in CASES
        for way in WAYS
        for first in range(0, params["pool"], CHUNK)
    ]
    log(f"{params['pool']} deals per way and case, on {workers} worker processes...")
    start = time.perf_counter()
    pools: dict[tuple[str, str], list[float]] = {}
    played = 0
    with ProcessPoolExecutor(workers) as executor:
        for case_name, way, n, xs in executor.map(observations, tasks):
            pools.setdefault((case_name, way), []).extend(xs)
            played += n
    results: dict = {
        "pool_deals": params["pool"],
        "runs": params["runs"],
        "alpha": ALPHA,
        "beta": BETA,
        "cap_observations": CAP,
        "matches_played": played,
        "cases": {},
    }
    goals: dict = {}
    for case_name, _, k, base_rate, gain in CASES:
        spec = sprt.Hypotheses(delta1=gain, alpha=ALPHA, beta=BETA)
        paired = pools[(case_name, "paired")]
        true = sprt.Running.of(paired)
        self_pool = pools[(case_name, "self")]
        centre = statistics.fmean(self_pool)
        samples = {
            "paired": paired,
            "unpaired": pools[(case_name, "unpaired")],
            "self": [x - centre for x in self_pool],
        }
        low, high = true.interval()
        row: dict = {
            "base_random_rate": base_rate,
            "min_gain": gain,
            "true_gain": round(true.mean, 3),
            "true_gain_interval": [round(low, 3), round(high, 3)],
            "sd_per_deal": {w: round(statistics.stdev(samples[w]), 3) for w in WAYS},
            "self_centre": round(centre, 3),
        }
        log(
            f"\n{case_name}: BASE plays {base_rate:.0%} random moves; D = {gain} points per match; "
            f"NEW's gain {true.mean:.2f} ({low:.2f} to {high:.2f}); sd per deal: "
            + ", ".join(f"{w} {row['sd_per_deal'][w]:.2f}" for w in WAYS)
        )
        for way in WAYS:
            row[way] = bootstrap(samples[way], spec, params["runs"], k, f"{case_name}/{way}")
            s = row[way]
            log(
                f"  {way:<9} matches median {s['median_matches']:>7.0f} ({s['q1']}-{s['q3']}); "
                + ", ".join(f"{v}: {c}" for v, c in s["verdicts"].items())
            )
        results["cases"][case_name] = row
        ratio = row["paired"]["median_matches"] / row["unpaired"]["median_matches"]
        right = row["paired"]["verdicts"][sprt.BETTER] / params["runs"]
        false_better = row["self"]["verdicts"][sprt.BETTER] / params["runs"]
        goals[f"{case_name}: paired / unpaired matches"] = {
            "value": round(ratio, 3),
            "goal": f"<= {GOAL_RATIO}",
            "met": ratio <= GOAL_RATIO,
        }
        goals[f"{case_name}: paired verdict right"] = {
            "value": round(right, 3),
            "goal": f">= {GOAL_RIGHT} (true gain above D)",
            "met": right >= GOAL_RIGHT and low > gain,
        }
        goals[f"{case_name}: self, false 'better'"] = {
            "value": round(false_better, 3),
            "goal": f"<= {ALPHA}",
            "met": false_better <= ALPHA,
        }
    elapsed = time.perf_counter() - start
    results["seconds"] = round(elapsed, 1)
    log(f"\n{played} matches played in {elapsed:.0f} s")
    return {"results": results, "goals": goals}
