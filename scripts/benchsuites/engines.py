"""Engines: random-playout games and decisions per second through the public interface
(seats_to_act, legal_actions, apply_action), per game, variant and player count, on one core;
and OpenSpiel's goofspiel (13 cards, 4 players) through pyspiel when open-spiel is installed.
The engines are the ones the registry hands out (compiled where built: arena.games.engines;
ARENA_ENGINE=plain measures the plain ones), named in the results ("engine builds").

The goal ratios (4 players, ours against goofspiel's decisions per second) are measured with the
three playouts taking turns in short windows, so that load on this shared machine lands on every
side alike; the per-case table is measured one case after another.

Beside them in the goal turns (context): the same loops over engines that do nothing, bound to
Python through CPython's C API and through pybind11 (benchsuites.engine_calls, built at run time
where gcc, g++ and pybind11 are): the most any engine bound either way can reach.
"""

from __future__ import annotations

import importlib
import os
import random
import statistics
import time
from typing import Any

from arena.games import engines, game_class, make_game

CASES = (
    [("balloon", n, {}) for n in (2, 3, 4, 5)]
    + [("boom", n, {}) for n in (2, 3, 4, 5)]
    + [
        ("boom", 4, {"advanced": True}),
        ("boom", 4, {"ruse": True}),
        ("boom", 4, {"advanced": True, "ruse": True}),
        ("boom", 4, {"series": True}),
    ]
)
# Context, not goals: the same playouts reading what a bot or the referee reads. "scores": the
# scores at the end (a simulating bot); "referee": an observation before every decision, then
# the event log, the scores and the spectators' view at the end (the referee's reads).
READS = [("boom", 4, "scores"), ("boom", 4, "referee"), ("balloon", 4, "referee")]
GOAL_GAMES = ("balloon", "boom")  # each at 4 players, against goofspiel
ENV_GAMES = ("balloon", "boom")  # arena.envs, each at 4 players, against the bare engine


class EnvPlayouts:
    """Random playouts through the PettingZoo AEC environment (arena.envs), as a learner runs
    it: `last()` (the observation arrays and the action mask) before every step, a random
    legal action from the mask. Counts decisions as the bare playouts do (not the final steps
    that retire the agents), in CPU time. With `observation=False` (context: what the rest
    costs) every observation array is one of zeros, and only the masks are built."""

    def __init__(self, name: str, num_players: int, observation: bool = True):
        import numpy as np

        from arena.envs import ArenaEnv

        self.env = ArenaEnv(name, num_players)
        if not observation:
            zeros = np.zeros(self.env.observation_space("seat_0")["observation"].shape, np.float32)
            # the env's own builder of a seat's observation array, and what it tells of each
            # action (for the arrays it keeps)
            self.env._observation_of = lambda state, seat: zeros.copy()
            self.env._played = None
        self.env.reset(seed=0)
        self.choice = random.Random(1).choice

    def window(self, seconds: float) -> tuple[int, int, float]:
        env, choice = self.env, self.choice
        import numpy as np

        flatnonzero = np.flatnonzero
        games = decisions = 0
        start = time.process_time()
        deadline = start + seconds
        while True:
            env.reset()
            for _ in env.agent_iter():
                obs, _, done, _, _ = env.last()
                if done:
                    env.step(None)
                else:
                    env.step(choice(flatnonzero(obs["action_mask"])))
                    decisions += 1
            games += 1
            now = time.process_time()
            if now >= deadline:
                return games, decisions, now - start


def env_goal(seconds: float, log) -> tuple[dict, dict]:
    """The environment against the bare engine, in turns of a quarter of a second: the bare
    engine reading an observation and listing the legal actions before every decision (what a
    learner must read: the goal, >= 0.5x) and doing neither (context); and (context) the
    environment with its observation arrays left out, which says what the rest costs. In CPU
    time (time.process_time: every side is one thread of this process), so that the other
    work of a shared machine, which takes the core from one side or another at random, drops
    out of the ratios."""
    try:
        sides = {}
        for name in ENV_GAMES:
            sides[(name, "env")] = EnvPlayouts(name, 4)
            sides[(name, "env, masks only")] = EnvPlayouts(name, 4, observation=False)
            sides[(name, "observing")] = Playouts(
                make_game(name, 4), "observations", time.process_time
            )
            sides[(name, "bare")] = Playouts(make_game(name, 4), clock=time.process_time)
    except ImportError:
        log("pettingzoo is not installed (pip install -e '.[rl]'): no environment line")
        return {}, {}
    window_s = 0.25
    for side in sides.values():
        side.window(0.1)  # warm up
    windows: dict = {key: [] for key in sides}
    for _ in range(max(4, round(2 * seconds / window_s))):
        for key, side in sides.items():
            windows[key].append(side.window(window_s))
    results, goals = {}, {}
    log(
        f"\narena.envs AEC environment against the bare engine, 4 players, "
        f"{len(windows[(ENV_GAMES[0], 'env')])} turns of {window_s} s of CPU time each:"
    )
    for name in ENV_GAMES:
        env = rates(windows[(name, "env")])[1]
        observing = rates(windows[(name, "observing")])[1]
        bare = rates(windows[(name, "bare")])[1]
        masks_only = rates(windows[(name, "env, masks only")])[1]
        results[f"{name} 4p, AEC environment"] = {
            "decisions_per_s": round(env),
            "masks_only_decisions_per_s": round(masks_only),
            "bare_observing_decisions_per_s": round(observing),
            "bare_decisions_per_s": round(bare),
        }
        goals[f"{name} 4p environment steps/s vs bare engine reading observations"] = {
            "value": round(env / observing, 3),
            "goal": ">= 0.5",
            "met": env / observing >= 0.5,
            "vs_bare_playouts": round(env / bare, 3),
            "masks_only_vs_bare_observing": round(masks_only / observing, 3),
        }
        log(
            f"  {name} 4p: environment {env:,.0f} steps/s, bare engine {observing:,.0f} reading "
            f"an observation and listing the legal actions per decision "
            f"({env / observing:.3f}x), {bare:,.0f} doing neither "
            f"({env / bare:.3f}x); the environment without its observation arrays "
            f"{masks_only:,.0f} ({masks_only / observing:.3f}x)"
        )
    return results, goals


class Playouts:
    """Random playouts of one game through the public interface, window after window (each
    window plays whole matches, from the next seed on)."""

    def __init__(self, game, reads: str = "", clock=time.perf_counter):
        self.game = game
        self.clock = clock  # time.process_time: CPU time, for the environment line
        self.choice = random.Random(1).choice
        self.seed = 0
        self.reads = reads

    def window(self, seconds: float) -> tuple[int, int, float]:
        """(games, decisions, seconds taken) of the matches played in about `seconds`."""
        game, choice, reads, clock = self.game, self.choice, self.reads, self.clock
        games = decisions = 0
        start = clock()
        deadline = start + seconds
        while True:
            state = game.new_match(self.seed)
            self.seed += 1
            if reads == "observations":  # what a learner reads: one per decision
                # the observation, and every legal action listed (the env's mask lists them:
                # Boom's pairs are otherwise a lazy sequence that random.choice indexes)
                while not state.is_over():
                    for seat in state.seats_to_act():
                        state.observation(seat)
                        state.apply_action(seat, choice(tuple(state.legal_actions(seat))))
                        decisions += 1
            elif reads == "referee":
                while not state.is_over():
                    for seat in state.seats_to_act():
                        state.observation(seat)
                        state.apply_action(seat, choice(state.legal_actions(seat)))
                        decisions += 1
                state.events, state.scores(), state.public_observation()
            else:
                while not state.is_over():
                    for seat in state.seats_to_act():
                        state.apply_action(seat, choice(state.legal_actions(seat)))
                        decisions += 1
                if reads:
                    state.scores()
            games += 1
            now = clock()
            if now >= deadline:
                return games, decisions, now - start


class Goofspiel:
    """OpenSpiel's goofspiel (13 cards, 4 players) random playouts through pyspiel, the same
    way: a joint action at each simultaneous node, a chance outcome at each chance node."""

    def __init__(self, pyspiel):
        self.game = pyspiel.load_game("goofspiel", {"num_cards": 13, "players": 4})
        self.choice = random.Random(1).choice

    def window(self, seconds: float) -> tuple[int, int, float]:
        game, choice = self.game, self.choice
        games = decisions = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_simultaneous_node():
                    state.apply_actions([choice(state.legal_actions(p)) for p in range(4)])
                    decisions += 4
                elif state.is_chance_node():
                    state.apply_action(choice(state.chance_outcomes())[0])
                else:
                    state.apply_action(choice(state.legal_actions()))
                    decisions += 1
            games += 1
            now = time.perf_counter()
            if now >= deadline:
                return games, decisions, now - start


def rates(windows: list[tuple[int, int, float]]) -> tuple[float, float]:
    """Games and decisions per second over all the windows together."""
    elapsed = sum(w[2] for w in windows)
    return sum(w[0] for w in windows) / elapsed, sum(w[1] for w in windows) / elapsed


def twins(name: str) -> dict[str, Any]:
    """The other builds of `name`'s engine than the one the registry hands out, by build
    ("plain", "compiled": arena.games.engines), as Game classes: for a native core, its plain
    engine (the class it subclasses) and the mypyc build where usable; for a mypyc build, the
    plain engine."""
    cls = game_class(name)
    package, _, module = cls.__module__.rpartition(".")
    if module == engines.NATIVE_MODULE:
        plain = cls.__bases__[0]
        compiled, _ = engines._compiled(plain.__module__)
        out = {"plain": plain}
        if compiled is not None:
            out["compiled"] = getattr(compiled, cls.__name__)
        return out
    if not module.endswith(engines.COMPILED_SUFFIX):
        return {}
    source = module.removeprefix("_").removesuffix(engines.COMPILED_SUFFIX)
    return {"plain": getattr(importlib.import_module(f"{package}.{source}"), cls.__name__)}


def run(seconds: float, log) -> dict:
    if hasattr(os, "sched_setaffinity"):  # one core, as the goal says
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    results: dict[str, Any] = {
        "engine builds": {name: game_class(name).__module__ for name in GOAL_GAMES}
    }
    log("engines: " + ", ".join(f"{k} {v}" for k, v in results["engine builds"].items()))
    log(f"{'case':<36} {'games/s':>10} {'decisions/s':>12}")
    for name, n, options in CASES:
        gps, dps = rates([Playouts(make_game(name, n, **options)).window(seconds)])
        label = f"{name} {n}p" + "".join(f" {k}" for k in options)
        results[label] = {"games_per_s": round(gps, 1), "decisions_per_s": round(dps)}
        log(f"{label:<36} {gps:>10.1f} {dps:>12.0f}")
    for name, n, reads in READS:
        gps, dps = rates([Playouts(make_game(name, n), reads).window(seconds)])
        label = f"{name} {n}p, reading {reads}"
        results[label] = {"games_per_s": round(gps, 1), "decisions_per_s": round(dps)}
        log(f"{label:<36} {gps:>10.1f} {dps:>12.0f}")
    env_results, env_goals = env_goal(seconds, log)
    results.update(env_results)
    try:
        import pyspiel
    except ImportError:
        log("open-spiel is not installed (pip install -e '.[bench]'): no reference ratio")
        return {"results": results, "goals": env_goals}

    # The goals: ours and goofspiel's in turns of `window_s`, about 3 x `seconds` each in all:
    # random playouts (goal: 2x goofspiel's decisions/s) and the referee's reading path (an
    # observation before every decision: 1x), each game as the registry hands it out; beside
    # them (context) its other builds (twins), and engines that do nothing (the loop's own
    # cost).
    window_s = 0.25
    sides: dict[str, Any] = {}
    for name in GOAL_GAMES:
        sides[name] = Playouts(make_game(name, 4))
        sides[f"{name}, reading referee"] = Playouts(make_game(name, 4), "referee")
        for build, twin in twins(name).items():
            sides[f"{name} {build}"] = Playouts(twin(4))
            sides[f"{name} {build}, reading referee"] = Playouts(twin(4), "referee")
    # (context) the same loops over engines that do nothing, bound as a native core would be
    # (benchsuites.engine_calls): the most any engine bound that way can reach
    from benchsuites.engine_calls import sides as probes

    sides.update(probes(Playouts, log))
    sides["goofspiel"] = Goofspiel(pyspiel)
    for side in sides.values():
        side.window(0.1)  # warm up
    windows: dict[str, list] = {name: [] for name in sides}
    for _ in range(max(4, round(3 * seconds / window_s))):
        for name, side in sides.items():
            windows[name].append(side.window(window_s))
    reference = rates(windows["goofspiel"])
    label = "openspiel goofspiel 13 cards 4p"
    results[label] = {"games_per_s": round(reference[0], 1), "decisions_per_s": round(reference[1])}
    log(f"{label:<36} {reference[0]:>10.1f} {reference[1]:>12.0f}")
    goals = {}
    log(f"\n4 players against goofspiel, {len(windows['goofspiel'])} turns of {window_s} s each:")
    for side_name in sides:
        if side_name == "goofspiel":
            continue
        ours = rates(windows[side_name])
        ratio = ours[1] / reference[1]
        by_window = sorted(
            (w[1] / w[2]) / (g[1] / g[2]) for w, g in zip(windows[side_name], windows["goofspiel"])
        )
        figure = {
            "value": round(ratio, 3),
            "decisions_per_s": round(ours[1]),
            "window_ratios": {
                "min": round(by_window[0], 3),
                "median": round(statistics.median(by_window), 3),
                "max": round(by_window[-1], 3),
            },
        }
        game, _, reads = side_name.partition(", ")
        if game in GOAL_GAMES:  # the engine the registry hands out: a goal
            target = 1.0 if reads else 2.0
            key = f"{game} 4p {'referee reading path' if reads else 'decisions/s'} vs goofspiel"
            goals[key] = {**figure, "goal": f">= {target:g}", "met": ratio >= target}
        else:
            results[f"{side_name} 4p vs goofspiel"] = figure
        log(
            f"  {side_name} 4p: {ours[1]:,.0f} decisions/s, {ratio:.3f} of goofspiel's "
            f"(windows {by_window[0]:.3f} to {by_window[-1]:.3f}, "
            f"median {statistics.median(by_window):.3f})"
        )
    goals.update(env_goals)
    return {"results": results, "goals": goals}
