"""Strong bots (issue 34): what each engine build gives the strong example bots' search.

(a) Playouts. `balloon_strong.choose` and `boom_strong.choose` (example_bots/, their own search
with their own number of determinizations) over the same decision points: every decision with
more than one legal action of seeded 4-player matches the heuristic bots play, each seat's
observation and legal actions. Each engine build the registry can load (plain, compiled by
mypyc, native) runs in a process of its own (ARENA_ENGINE set), the builds taking turns in
windows of CPU time so that the load of this shared machine lands on each alike. Per build:
determinizations per CPU second (one determinization plays every legal action out), and how
many fit a move's search at the same deadline (a budget of BUDGET_MS of CPU).

(b) Win rate. What those extra playouts are worth: in one process on the fastest build, a
duplicate match series (each deal played twice at 2 players, the seats swapped) between the
strong bot with its determinizations multiplied by the fastest build's speed-up over today's
engine (Balloon's compiled build, Boom's hand-tuned Python engine: "more", what the same
deadline now holds) and the strong bot as it is ("today": its count fitted the deadline
there). Per game: deals, the share of deals "more" won on summed score (a tie counts half) and
its mean margin per deal.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from typing import Any

from .common import HERE, ROOT

BUILDS = ("plain", "compiled", "native")
GAMES = ("balloon", "boom")
PLAYERS = 4
BUDGET_MS = 100.0  # a move's search budget in CPU ms, to state playouts "at the same deadline"


def _bots(game: str) -> tuple[Any, Any]:
    """The game's heuristic and strong example bots (imported from example_bots/)."""
    sys.path.insert(0, str(ROOT / "example_bots"))
    if game == "balloon":
        import balloon_heuristic as heuristic
        import balloon_strong as strong
    else:
        import boom_heuristic as heuristic
        import boom_strong as strong
    return heuristic, strong


def decision_points(game_name: str, players: int, matches: int) -> list[tuple[Any, Any]]:
    """(observation, legal actions) at every decision with a choice, of `matches` seeded
    matches the heuristic bot plays in every seat."""
    from arena.games import make_game

    heuristic, _ = _bots(game_name)
    game = make_game(game_name, players)
    rng = random.Random(7)
    points = []
    for seed in range(matches):
        state = game.new_match(1000 + seed)
        while not state.is_over():
            seat = state.seats_to_act()[0]
            obs, legal = state.observation(seat), list(state.legal_actions(seat))
            if len(legal) > 1:
                points.append((obs, legal))
            state.apply_action(seat, heuristic.choose(game, obs, legal, rng))
    return points


def child(game_name: str, seconds: float) -> dict:
    """In a process of one engine build: the strong bot's determinizations per CPU second, and
    the build that ran (None where this game has no such build)."""
    import importlib

    from arena.games import make_game
    from arena.games.engines import ConfigError

    try:
        package = importlib.import_module(f"arena.games.{game_name}")
    except ConfigError:
        return {"build": None}
    engine = getattr(package, "_engine", None)  # a game with builds: the one the registry chose
    name = "" if engine is None else engine.__name__
    build = "native" if name.endswith(".native") else "compiled" if "mypyc" in name else "plain"
    _, strong = _bots(game_name)
    game = make_game(game_name, PLAYERS)
    points = decision_points(game_name, PLAYERS, 3)
    rng = random.Random(1)
    sims = strong.SIMULATIONS
    done = 0
    i = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        obs, legal = points[i % len(points)]
        strong.choose(game, obs, legal, rng, None, sims)
        done += sims
        i += 1
    elapsed = time.process_time() - start
    return {"build": build, "determinizations_per_s": done / elapsed, "moves": i}


def _window(build: str, game: str, seconds: float) -> dict:
    env = {
        **os.environ,
        "ARENA_ENGINE": build,
        "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(ROOT), str(ROOT / "sdk")]),
    }
    out = subprocess.run(
        [sys.executable, "-m", "benchsuites.strong", "--child", game, str(seconds)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def series(game_name: str, more: int, deals: int) -> dict:
    """The duplicate series of (b) at 2 players: "more" (its determinizations `more`) against
    "today" (the strong bot's own count), each deal played twice with the seats swapped."""
    from arena.games import make_game

    _, strong = _bots(game_name)
    game = make_game(game_name, 2)
    won = 0.0
    margins = []
    for deal in range(deals):
        total = 0.0
        for more_seat in (0, 1):
            state = game.new_match(50_000 + deal)
            rngs = [random.Random(f"{deal}/{more_seat}/{s}") for s in (0, 1)]
            while not state.is_over():
                seat = state.seats_to_act()[0]
                obs, legal = state.observation(seat), list(state.legal_actions(seat))
                sims = more if seat == more_seat else strong.SIMULATIONS
                state.apply_action(seat, strong.choose(game, obs, legal, rngs[seat], None, sims))
            scores = state.scores()
            total += scores[more_seat] - scores[1 - more_seat]
        margins.append(total)
        won += 1.0 if total > 0 else 0.5 if total == 0 else 0.0
    return {
        "deals": deals,
        "more_determinizations": more,
        "today_determinizations": strong.SIMULATIONS,
        "won_share": won / deals,
        "mean_margin_per_deal": statistics.fmean(margins),
    }


def run(seconds: float, log) -> dict:
    results: dict = {"budget_ms": BUDGET_MS}
    goals: dict = {}
    for game in GAMES:
        rates: dict[str, list[float]] = {}
        for turn in range(2):
            for build in BUILDS if turn % 2 == 0 else reversed(BUILDS):
                got = _window(build, game, seconds)
                if got["build"] != build:  # not built here: the registry fell back
                    continue
                rates.setdefault(build, []).append(got["determinizations_per_s"])
        per_build = {}
        for build, rs in rates.items():
            rate = statistics.fmean(rs)
            per_build[build] = {
                "determinizations_per_s": rate,
                "per_move_at_budget": rate * BUDGET_MS / 1000,
                "turns": rs,
            }
            log(
                f"{game} strong, {build:8s}: {rate:8.1f} determinizations/s, "
                f"{rate * BUDGET_MS / 1000:6.1f} in a {BUDGET_MS:.0f} ms search"
            )
        results[game] = {"builds": per_build}
        # Today's engine: Balloon's compiled build; Boom's hand-tuned Python engine (no mypyc
        # build), which the registry runs as its plain one.
        today = "compiled" if "compiled" in per_build else "plain"
        if today in per_build and len(per_build) > 1:
            fastest = max(per_build, key=lambda b: per_build[b]["determinizations_per_s"])
            gain = (
                per_build[fastest]["determinizations_per_s"]
                / per_build[today]["determinizations_per_s"]
            )
            _, strong = _bots(game)
            more = max(strong.SIMULATIONS, round(strong.SIMULATIONS * gain))
            deals = max(10, int(seconds * 10))
            start = time.perf_counter()
            won = series(game, more, deals)
            won["fastest_build"] = fastest
            won["today_build"] = today
            won["speedup_over_today"] = gain
            won["seconds"] = time.perf_counter() - start
            results[game]["series"] = won
            log(
                f"{game} strong, {more} determinizations ({fastest}, x{gain:.2f}) against "
                f"{strong.SIMULATIONS} (today, {today}): won {won['won_share']:.3f} of {deals} "
                f"deals, mean margin {won['mean_margin_per_deal']:+.2f} a deal"
            )
    return {"results": results, "goals": goals}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2], float(sys.argv[3]))))
