"""arena_sdk.policy_bot: a trained policy enters a real `arena match` unchanged, and the
example's trained policy (example_bots/rl_linear.py) beats the random bot."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("pettingzoo")

from arena.envs import ArenaEnv  # noqa: E402
from arena_sdk import Limits, Match, features, policy_bot  # noqa: E402
from tests.cli import ROOT, run_match  # noqa: E402

sys.path.insert(0, str(ROOT / "example_bots"))

import rl_linear  # noqa: E402


def match_of(game: str, n: int, seat: int) -> Match:
    return Match("m", game, n, {}, seat, tuple(f"s{i}" for i in range(n)), Limits(100, 100, 3), 1)


@pytest.mark.parametrize("game, n", [("balloon", 3), ("boom", 4)])
def test_a_policy_bot_plays_the_action_its_policy_numbers(game, n):
    env = ArenaEnv(game, n)
    env.reset(seed=2)
    for _ in range(20):
        if env.engine_state.is_over():
            env.reset()
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        legal_numbers = env.observe(agent)["action_mask"].nonzero()[0]
        wanted = int(legal_numbers[len(legal_numbers) // 2])
        seen = {}

        def policy(observation, mask):
            seen["arrays"] = (observation, mask)  # noqa: B023 (called in this iteration)
            return wanted  # noqa: B023

        def dict_policy(observation, mask):
            seen["dict"] = (observation, mask)  # noqa: B023 (called in this iteration)
            return wanted  # noqa: B023

        legal = env.bot_legal_actions(agent)
        for bot in (policy_bot(policy), policy_bot(dict_policy, arrays=False)):
            action = bot.act(env.bot_observation(agent), legal, match_of(game, n, seat))
            assert features.action_index(game, action) == wanted
        # the arrays are the environment's; the dict form is the bot's own observation
        assert (seen["arrays"][0] == env.observe(agent)["observation"]).all()
        assert (seen["arrays"][1] == env.observe(agent)["action_mask"]).all()
        assert seen["dict"][0] == env.bot_observation(agent)
        assert seen["dict"][1] == env.observe(agent)["action_mask"].tolist()
        env.step(wanted)


def test_a_policy_choosing_an_illegal_number_gets_a_clear_error():
    env = ArenaEnv("balloon", 2)
    env.reset(seed=2)
    agent = env.agent_selection
    illegal = int((env.observe(agent)["action_mask"] == 0).nonzero()[0][0])
    bot = policy_bot(lambda observation, mask: illegal)
    with pytest.raises(ValueError, match=f"action number {illegal}, which is not legal now"):
        bot.act(env.bot_observation(agent), env.bot_legal_actions(agent), match_of("balloon", 2, 0))
    with pytest.raises(TypeError, match="policy must be a function"):
        policy_bot("not a function")


def test_the_sdk_helpers_import_neither_arena_nor_numpy():
    code = (
        "import sys, arena_sdk, arena_sdk.features, arena_sdk.policy; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('arena', 'numpy')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT / "sdk", text=True, capture_output=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_trained_example_enters_arena_match_and_plays_it_through(tmp_path):
    path = tmp_path / "m.json"
    bots = ["python example_bots/rl_linear.py", "python example_bots/random_bot.py"]
    out = run_match("balloon", bots, 31, "--replay", str(path))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["faults"] == [] and result["seat_names"][0] == "rl_linear"
    # every move of seat 0 is the trained policy's greedy choice on what it saw
    doc = json.loads(path.read_text())
    policy = rl_linear.LinearPolicy.load()
    env = ArenaEnv("balloon", 2)
    env.reset(seed=31)
    moves = iter(doc["moves"])
    checked = 0
    for _agent in env.agent_iter():
        obs, _, done, _, _ = env.last()
        if done:
            env.step(None)
            continue
        seat, action = next(moves)[:2]
        if seat == 0:
            assert action == policy(obs["observation"], obs["action_mask"])
            checked += 1
        env.step(features.action_index("balloon", action))
    assert checked >= 5  # at least one decision in each of the five rounds


def test_the_trained_example_beats_the_random_bot():
    # Measured when the weights were trained: 99.5% of 400 matches won against random (an
    # untrained policy of the same shape: 1%); asserted with a wide margin.
    policy = rl_linear.LinearPolicy.load()
    result = rl_linear.evaluate(policy, "random", 100, seed=20_000)
    assert result["win_share"] >= 0.8, result
