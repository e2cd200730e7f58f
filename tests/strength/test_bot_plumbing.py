"""The example bots' plumbing: the SDK-to-engine view, determinism, the deadline, and one real
`arena match` per game between random, heuristic and strong bot processes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import _engine_view
import balloon_strong
import boom_strong
import harness
import pytest

from arena.games import make_game
from arena.referee import wire as referee_wire
from arena_sdk import Limits, Match
from arena_sdk import wire as sdk_wire
from tests.timing import scaled

ROOT = Path(__file__).resolve().parents[2]
STRONG_BOTS = {"balloon": balloon_strong.BOT, "boom": boom_strong.BOT}
GAMES = [("balloon", {}), ("boom", {}), ("boom", {"advanced": True, "ruse": True})]


def _walk(game_name: str, options: dict, seed: int):
    """(game, state, seat) at every decision of a random match."""
    game = make_game(game_name, 3, **options)
    state = game.new_match(seed)
    rng = random.Random(seed)
    while not state.is_over():
        for seat in state.seats_to_act():
            yield game, state, seat
        chosen = [(s, rng.choice(state.legal_actions(s))) for s in state.seats_to_act()]
        for s, action in chosen:
            state.apply_action(s, action)


@pytest.mark.parametrize("game_name,options", GAMES)
def test_engine_view_undoes_the_wire(game_name: str, options: dict) -> None:
    """An observation and the legal actions sent by the referee and read by the SDK come back
    through _engine_view equal to the engine's own, in the same order."""
    checked = 0
    for _, state, seat in _walk(game_name, options, seed=5):
        obs = state.observation(seat)
        sdk_obs = sdk_wire.observation(referee_wire.observation_to_pb(game_name, obs))
        assert _engine_view.engine_observation(sdk_obs) == obs
        legal = state.legal_actions(seat)
        sdk_legal = sdk_wire.legal_actions(referee_wire.action_to_pb(game_name, a) for a in legal)
        assert tuple(map(_engine_view.engine_action, sdk_legal)) == tuple(legal)
        checked += 1
    assert checked > 20


def _match(game_name: str, options: dict, seat: int, move_ms: int = 1000) -> Match:
    match = Match(
        match_id="m",
        game=game_name,
        num_players=3,
        options=options,
        seat=seat,
        seat_names=("a", "b", "c"),
        limits=Limits(move_ms, 0, 3),
        bot_seed=99,
    )
    match.clock.move_ms = move_ms
    match.clock.received_at = time.monotonic()
    return match


@pytest.mark.parametrize("game_name,options", GAMES)
def test_sdk_bot_plays_its_policy(game_name: str, options: dict) -> None:
    """The SDK class answers with the SDK action matching what its policy picks in engine
    terms, drawing from match.rng: the same seed, the same choice."""
    bots = harness.policies(game_name)
    bot = STRONG_BOTS[game_name]
    for n, (game, state, seat) in enumerate(_walk(game_name, options, seed=8)):
        if n % 7:
            continue
        obs = state.observation(seat)
        legal = state.legal_actions(seat)
        # A deadline far away: the search must run its full fixed number of simulations even
        # on a loaded machine, or the comparison below would depend on the clock.
        match = _match(game_name, options, seat, move_ms=600_000)
        sdk_obs = sdk_wire.observation(referee_wire.observation_to_pb(game_name, obs))
        sdk_legal = sdk_wire.legal_actions(referee_wire.action_to_pb(game_name, a) for a in legal)
        answer = bot.act(sdk_obs, sdk_legal, match)
        assert answer in sdk_legal
        expected = bots["strong"](game, obs, legal, random.Random(99), None)
        assert _engine_view.engine_action(answer) == expected


@pytest.mark.parametrize("module", [balloon_strong, boom_strong])
def test_strong_bot_stops_at_its_deadline(module) -> None:
    """A deadline already passed cuts the search to one determinization: still a legal move,
    and at once."""
    game_name = module.__name__.split("_")[0]
    game = make_game(game_name, 4)
    state = game.new_match(3)
    seat = state.seats_to_act()[0]
    legal = state.legal_actions(seat)
    started = time.perf_counter()
    action = module.choose(
        game,
        state.observation(seat),
        legal,
        random.Random(1),
        deadline=time.monotonic() - 1,
        simulations=10_000,
    )
    assert action in legal
    assert time.perf_counter() - started < 2.0


def _arena_match(game_name: str, bots: list[str], tmp_path: Path) -> dict:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena",
            "match",
            game_name,
            *bots,
            "--seed",
            "4",
            "--move-ms",
            "5000",
            "--json",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=scaled(180),
    )
    assert proc.returncode == 0, f"arena match failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout)


@pytest.mark.parametrize("game_name", ["balloon", "boom"])
def test_real_match_between_bot_processes(game_name: str, tmp_path: Path) -> None:
    bots = [
        "python example_bots/random_bot.py",
        f"python example_bots/{game_name}_heuristic.py",
        f"python example_bots/{game_name}_strong.py",
    ]
    result = _arena_match(game_name, bots, tmp_path)
    assert result["status"] == "completed", result
    assert result["faults"] == [], result["faults"]
    assert len(result["scores"]) == 3
