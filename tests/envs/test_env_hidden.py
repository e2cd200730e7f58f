"""No observation holds another seat's hidden cards: what the environment shows a seat is the
same whatever the other seats hold, and in Boom's simultaneous steps one seat's pending choice
never shows to the next."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pettingzoo")

import numpy as np  # noqa: E402

from arena.envs import ArenaEnv  # noqa: E402
from arena.games import balloon, boom  # noqa: E402

CASES = [
    ("balloon", 2, {}),
    ("balloon", 4, {}),
    ("boom", 2, {"ruse": True}),
    ("boom", 3, {"advanced": True}),
    ("boom", 5, {"series": True}),
]


def others_hands(state, seat: int) -> list[tuple[int, ...]]:
    return [state.hand(s) for s in range(state.game.num_players) if s != seat]


@pytest.mark.parametrize("game, n, options", CASES)
def test_observations_are_the_same_whatever_the_other_seats_hold(game, n, options):
    """Swap in a determinization (the other seats' hands drawn afresh among the cards this seat
    has not seen) and observe again: every array must stay the same. An observation that held
    any other seat's hidden card would change with it."""
    rng = random.Random(2)
    e = ArenaEnv(game, n, **options)
    e.reset(seed=40)
    checked = 0
    while checked < 60:
        if e.engine_state.is_over():
            e.reset()
        state = e.engine_state
        agent = e.agent_selection
        seat = e.possible_agents.index(agent)
        before = e.observe(agent)
        seen = state.observation(seat)
        if game == "balloon":
            sampled = balloon.sample_state(seen, rng)
        else:
            sampled = boom.sample_state(seen, rng, e.game, state.events)
        if others_hands(sampled, seat) != others_hands(state, seat):
            e.engine_state = sampled
            after = e.observe(agent)
            e.engine_state = state
            np.testing.assert_array_equal(before["observation"], after["observation"])
            np.testing.assert_array_equal(before["action_mask"], after["action_mask"])
            checked += 1
        e.step(int(rng.choice(before["action_mask"].nonzero()[0])))


@pytest.mark.parametrize("n, options", [(2, {}), (4, {"ruse": True}), (5, {"advanced": True})])
def test_a_boom_seats_pending_choice_does_not_show_to_the_next(n, options):
    rng = random.Random(3)
    e = ArenaEnv("boom", n, **options)
    e.reset(seed=9)
    for _ in range(60):
        if e.engine_state.is_over():
            e.reset()
        # at the start of a step every seat is asked, one after another
        assert e.pending_agents() == e.possible_agents
        start = {a: e.observe(a) for a in e.possible_agents}
        sent = {a: e.bot_observation(a) for a in e.possible_agents}
        for agent in e.possible_agents:
            assert e.agent_selection == agent
            now = e.observe(agent)
            # what this seat sees is what it saw when the step began: the earlier seats'
            # choices (and even that they have chosen) are held back, as the referee asks
            # every seat at once
            np.testing.assert_array_equal(now["observation"], start[agent]["observation"])
            np.testing.assert_array_equal(now["action_mask"], start[agent]["action_mask"])
            assert e.bot_observation(agent) == sent[agent]
            assert not any(e.bot_observation(agent).acted)
            e.step(int(rng.choice(now["action_mask"].nonzero()[0])))


def test_a_seats_hand_in_the_bots_form_is_its_own_only():
    e = ArenaEnv("balloon", 3)
    e.reset(seed=1)
    state = e.engine_state
    for seat, agent in enumerate(e.possible_agents):
        sent = e.bot_observation(agent)
        assert tuple(c.id for c in sent.hand) == state.hand(seat)
        vector = e.observe(agent)["observation"]
        assert sorted(np.flatnonzero(vector[:50])) == list(state.hand(seat))
