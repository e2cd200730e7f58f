"""PettingZoo's own API tests over every game, variant and player count; the standard wrappers
and conversions on top; and the action numbering both ways."""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, parallel_api_test  # noqa: E402
from pettingzoo.utils import conversions, wrappers  # noqa: E402

from arena.envs import ArenaEnv, env, parallel_env  # noqa: E402
from arena.games import make_game  # noqa: E402
from arena_sdk import features  # noqa: E402

from .cases import BOOM_VARIANTS, CASES, label  # noqa: E402


@pytest.mark.filterwarnings("ignore:Observation")
@pytest.mark.parametrize("case", CASES, ids=label)
def test_api_test_passes(case):
    game, n, options = case
    api_test(env(game, n, **options), num_cycles=300)
    api_test(env(game, n, reward="rank", **options), num_cycles=60)


@pytest.mark.parametrize("variant", BOOM_VARIANTS, ids=lambda v: label(("boom", 0, v)))
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_parallel_api_test_passes(n, variant):
    parallel_api_test(parallel_env(n, **variant), num_cycles=400)


@pytest.mark.filterwarnings("ignore:Observation")
def test_standard_wrappers_and_conversions_work():
    # PettingZoo's own wrappers around the AEC form...
    api_test(
        wrappers.TerminateIllegalWrapper(ArenaEnv("balloon", 3), illegal_reward=-1), num_cycles=100
    )
    api_test(wrappers.AssertOutOfBoundsWrapper(ArenaEnv("boom", 4, ruse=True)), num_cycles=100)
    # ...and the parallel form converted back to AEC and forth again.
    api_test(conversions.parallel_to_aec(parallel_env(3, advanced=True)), num_cycles=100)
    par = conversions.aec_to_parallel(ArenaEnv("boom", 4))
    observations, _ = par.reset(seed=3)
    assert set(observations) == set(par.possible_agents)
    done = False
    while not done:
        actions = {
            a: par.action_space(a).sample(observations[a]["action_mask"]) for a in par.agents
        }
        observations, rewards, terms, _, _ = par.step(actions)
        done = all(terms.values())
    assert sum(rewards.values()) != 0


def test_a_full_episode_ends_with_the_engines_scores_or_ranks():
    for reward in ("score", "rank"):
        e = ArenaEnv("balloon", 4, reward=reward)
        e.reset(seed=11)
        totals = dict.fromkeys(e.possible_agents, 0)
        for agent in e.agent_iter():
            obs, r, term, trunc, _ = e.last()
            totals[agent] += r
            e.step(None if term else int(obs["action_mask"].nonzero()[0][0]))
        state = make_game("balloon", 4).new_match(11)
        while not state.is_over():
            (seat,) = state.seats_to_act()
            state.apply_action(seat, state.legal_actions(seat)[0])
        expected = state.scores() if reward == "score" else [1 - 2 * r / 3 for r in state.ranks()]
        assert [totals[a] for a in e.possible_agents] == list(expected)
        # every agent is gone, and each still observes the final state, with nothing to play
        assert e.agents == []
        for agent in e.possible_agents:
            assert not e.observe(agent)["action_mask"].any()


def test_an_illegal_or_unknown_action_is_refused_with_the_legal_numbers():
    e = ArenaEnv("balloon", 2)
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    illegal = int((mask == 0).nonzero()[0][0])
    with pytest.raises(ValueError, match="legal numbers are"):
        e.step(illegal)
    with pytest.raises(ValueError, match="action numbers are 0..50"):
        e.step(99)
    with pytest.raises(ValueError, match="reward must be one of score, rank"):
        ArenaEnv("balloon", 2, reward="win")


@pytest.mark.parametrize("game", ["balloon", "boom"])
def test_action_numbers_round_trip(game):
    for index in range(features.action_count(game)):
        assert features.action_index(game, features.index_action(game, index)) == index
    with pytest.raises(ValueError):
        features.index_action(game, features.action_count(game))
