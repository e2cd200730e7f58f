"""Engines: random-playout games and decisions per second through the public interface
(seats_to_act, legal_actions, apply_action), per game, variant and player count, on one core;
and OpenSpiel's goofspiel (13 cards, 4 players) through pyspiel when open-spiel is installed."""

from __future__ import annotations

import os
import random
import time

from arena.games import make_game

CASES = [
    ("balloon", n, {}) for n in (2, 3, 4, 5)
] + [
    ("boom", n, {}) for n in (2, 3, 4, 5)
] + [
    ("boom", 4, {"advanced": True}), ("boom", 4, {"ruse": True}),
    ("boom", 4, {"advanced": True, "ruse": True}), ("boom", 4, {"series": True}),
]


def playouts(game, seconds: float) -> tuple[float, float]:
    rng = random.Random(1)
    choice = rng.choice
    games = decisions = 0
    seed = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = game.new_match(seed)
        seed += 1
        while not state.is_over():
            for seat in state.seats_to_act():
                state.apply_action(seat, choice(state.legal_actions(seat)))
                decisions += 1
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            break
    elapsed = now - start
    return games / elapsed, decisions / elapsed


def goofspiel(seconds: float) -> dict | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("goofspiel", {"num_cards": 13, "players": 4})
    rng = random.Random(1)
    choice = rng.choice
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
            break
    elapsed = now - start
    return {"games_per_s": games / elapsed, "decisions_per_s": decisions / elapsed}


def run(seconds: float, log) -> dict:
    if hasattr(os, "sched_setaffinity"):  # one core, as the goal says
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    results = {}
    log(f"{'case':<36} {'games/s':>10} {'decisions/s':>12}")
    for name, n, options in CASES:
        game = make_game(name, n, **options)
        gps, dps = playouts(game, seconds)
        label = f"{name} {n}p" + "".join(f" {k}" for k in options)
        results[label] = {"games_per_s": round(gps, 1), "decisions_per_s": round(dps)}
        log(f"{label:<36} {gps:>10.1f} {dps:>12.0f}")
    reference = goofspiel(seconds)
    goals = {}
    if reference is None:
        log("open-spiel is not installed (pip install -e '.[bench]'): no reference ratio")
    else:
        results["openspiel goofspiel 13 cards 4p"] = {
            "games_per_s": round(reference["games_per_s"], 1),
            "decisions_per_s": round(reference["decisions_per_s"])}
        log(f"{'openspiel goofspiel 13 cards 4p':<36} {reference['games_per_s']:>10.1f} "
            f"{reference['decisions_per_s']:>12.0f}")
        for name in ("balloon", "boom"):
            ratio = results[f"{name} 4p"]["decisions_per_s"] / reference["decisions_per_s"]
            goals[f"{name} 4p decisions/s vs goofspiel"] = {
                "value": round(ratio, 3), "goal": ">= 0.5", "met": ratio >= 0.5}
    return {"results": results, "goals": goals}
