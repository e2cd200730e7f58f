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

Goals: paired needs at most 0.3 x the matches of unpaired (medians); the paired verdict is right
in at least 95% of trials; "self" says "better" in at most alpha of its trials.
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

from .rating import _policy, hash_seed

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
CAP = 600  # observations (deals) per trial before the test says "undecided"
FULL = {"trials": 12, "self_trials": 16, "calibration": 150}
QUICK = {"trials": 2, "self_trials": 2, "calibration": 20}


class Table:
    """Plays one case's matches: each seat's random stream follows from the match seed, the seat
    and (for the candidate) a salt, as a bot's `bot_seed` does."""

    def __init__(self, game_name: str, k: int, rates: dict[str, float]):
        self.game = make_game(game_name, k)
        self.policy: Callable = _policy(game_name)
        self.rates = rates
        self.played = 0

    def play(self, seats: Sequence[str], seed: int, salt: str = "") -> list[int]:
        game, policy, rates = self.game, self.policy, self.rates
        rngs = [random.Random(f"{seed}/{seat}/{salt if name in ('new', 'base') else ''}")
                for seat, name in enumerate(seats)]
        state = game.new_match(seed)
        while not state.is_over():
            for seat in state.seats_to_act():
                legal = state.legal_actions(seat)
                rate, rng = rates[seats[seat]], rngs[seat]
                if rate and rng.random() < rate:
                    action = rng.choice(legal)
                else:
                    action = policy(game, state.observation(seat), legal, rng, None)
                state.apply_action(seat, action)
        self.played += 1
        return list(state.scores())


def paired_observations(table: Table, k: int, seed: int, salt: str = ""):
    opponents = list(OPPONENT_RATES)
    deal = 0
    while True:
        scores: dict[str, list[int]] = {plan.NEW: [], plan.BASE: []}
        for m in plan.deal_matches("new", "base", opponents, k, seed, deal):
            # In "self", NEW is BASE's twin with its own randomness (the salt).
            scores[m.side].append(table.play(m.seats, m.seed, salt if m.side == plan.NEW else "")
                                  [m.candidate_seat])
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
                lineup = rng.sample(opponents, k - 1) if len(opponents) >= k - 1 else \
                    [rng.choice(opponents) for _ in range(k - 1)]
                seat = rng.randrange(k)
                seats = lineup[:seat] + [side] + lineup[seat:]
                total += table.play(seats, rng.randrange(2**53))[seat]
            sums[side] = total
        yield (sums["new"] - sums["base"]) / k


def trial(task: tuple[str, str, int]) -> dict:
    case_name, way, t = task
    _, game_name, k, base_rate, gain = next(c for c in CASES if c[0] == case_name)
    rates = {"new": base_rate if way == "self" else 0.0, "base": base_rate, **OPPONENT_RATES}
    table = Table(game_name, k, rates)
    spec = sprt.Hypotheses(delta1=gain, alpha=ALPHA, beta=BETA)
    seed = hash_seed("compare", case_name, t)
    if way == "unpaired":
        observations = unpaired_observations(table, k, seed)
    else:
        observations = paired_observations(table, k, seed, salt="twin" if way == "self" else "")
    result = sprt.run(spec, observations, cap=CAP)
    return {"case": case_name, "way": way, "trial": t, "verdict": result.verdict,
            "observations": result.n, "matches": table.played, "mean": result.mean}


def calibrate(task: tuple[str, int]) -> dict:
    """The true gain, on many paired deals (not part of any trial)."""
    case_name, deals = task
    _, game_name, k, base_rate, _ = next(c for c in CASES if c[0] == case_name)
    table = Table(game_name, k, {"new": 0.0, "base": base_rate, **OPPONENT_RATES})
    source = paired_observations(table, k, hash_seed("compare calibration", case_name))
    xs = [next(source) for _ in range(deals)]
    return {"case": case_name, "gain": statistics.fmean(xs), "sd": statistics.stdev(xs),
            "deals": deals}


def run(seconds: float, log, quick: bool = False, workers: int | None = None) -> dict:
    params = QUICK if quick else FULL
    workers = workers or min(2, os.cpu_count() or 1)
    tasks = [(c[0], way, t) for c in CASES for way in ("paired", "unpaired")
             for t in range(params["trials"])]
    tasks += [(c[0], "self", t) for c in CASES for t in range(params["self_trials"])]
    log(f"{len(tasks)} trials on {workers} worker processes...")
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        truth = {c["case"]: c for c in pool.map(calibrate, [(c[0], params["calibration"])
                                                           for c in CASES])}
        done = list(pool.map(trial, tasks))
    elapsed = time.perf_counter() - start
    results: dict = {"trials": params["trials"], "self_trials": params["self_trials"],
                     "alpha": ALPHA, "beta": BETA, "cap_observations": CAP,
                     "seconds": round(elapsed, 1), "cases": {}}
    goals: dict = {}
    for case_name, _, k, base_rate, gain in CASES:
        true = truth[case_name]
        row: dict = {"base_random_rate": base_rate, "min_gain": gain,
                     "true_gain": round(true["gain"], 3), "true_gain_sd": round(true["sd"], 3),
                     "calibration_deals": true["deals"]}
        log(f"\n{case_name}: BASE plays {base_rate:.0%} random moves; D = {gain} points per match; "
            f"measured gain {true['gain']:.2f} (sd {true['sd']:.2f} per deal, {true['deals']} deals)")
        for way in ("paired", "unpaired", "self"):
            mine = [d for d in done if d["case"] == case_name and d["way"] == way]
            matches = sorted(d["matches"] for d in mine)
            verdicts = {v: sum(d["verdict"] == v for d in mine)
                        for v in (sprt.BETTER, sprt.NOT_BETTER, sprt.UNDECIDED)}
            row[way] = {"median_matches": statistics.median(matches),
                        "q1": matches[len(matches) // 4], "q3": matches[(3 * len(matches)) // 4],
                        "verdicts": verdicts, "trials": len(mine)}
            log(f"  {way:<9} matches median {statistics.median(matches):>7.0f} "
                f"({matches[len(matches) // 4]}-{matches[(3 * len(matches)) // 4]}); verdicts "
                + ", ".join(f"{v}: {c}" for v, c in verdicts.items()))
        results["cases"][case_name] = row
        ratio = row["paired"]["median_matches"] / row["unpaired"]["median_matches"]
        right = row["paired"]["verdicts"][sprt.BETTER] / row["paired"]["trials"]
        false_better = row["self"]["verdicts"][sprt.BETTER] / row["self"]["trials"]
        calibrated = true["gain"] > gain
        goals[f"{case_name}: paired / unpaired matches"] = {
            "value": round(ratio, 3), "goal": f"<= {GOAL_RATIO}", "met": ratio <= GOAL_RATIO}
        goals[f"{case_name}: paired verdict right"] = {
            "value": round(right, 3), "goal": f">= {GOAL_RIGHT} (true gain above D)",
            "met": right >= GOAL_RIGHT and calibrated}
        goals[f"{case_name}: self, false 'better'"] = {
            "value": round(false_better, 3), "goal": f"<= {ALPHA}", "met": false_better <= ALPHA}
    log(f"\n{sum(d['matches'] for d in done)} matches simulated in {elapsed:.0f} s")
    return {"results": results, "goals": goals}
