"""The environments' fast paths against the plain versions that state the layout: the engines'
`feature_values(seat)` and arena.envs.arrays against `features.encode(state.observation(seat))`
and `features.legal_mask`, for every seat after every action of random matches of every game,
variant and player count, in clones and in determinized (sampled) states too."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pettingzoo")

import numpy as np  # noqa: E402

from arena.envs import ArenaEnv  # noqa: E402
from arena.envs.arrays import arrays_function, mask_function  # noqa: E402
from arena.games import RulesError, balloon, boom, make_game  # noqa: E402
from arena_sdk import features  # noqa: E402

from .cases import CASES, label  # noqa: E402


def assert_fast_equals_plain(name: str, state, arrays_of, mask_of) -> int:
    """Every seat's fast observation array and mask equal to the plain ones; how many seats
    were checked. Each seat's arrays twice over: `arrays_of` keeps what it built for one state
    (Boom), so the second come from that, and the first too if another seat came before."""
    n = state.game.num_players
    size = features.observation_size(name, n)
    for seat in range(n):
        plain = features.encode(state.observation(seat))
        ones, at, values = state.feature_values(seat)
        direct = np.zeros(size, np.float32)
        direct[list(ones)] = 1
        direct[list(at)] = values
        np.testing.assert_array_equal(direct, plain)
        if name == "balloon":
            assert state.feature_tail(seat) == values
        legal = state.legal_actions(seat)
        plain_mask = features.legal_mask(name, legal)
        for _ in range(2):
            fast, fast_mask = arrays_of(state, seat)
            assert fast.dtype == plain.dtype == np.float32 and fast.shape == plain.shape
            np.testing.assert_array_equal(fast, plain)
            if legal:
                assert fast_mask.dtype == np.int8
                np.testing.assert_array_equal(fast_mask, plain_mask)
            else:
                assert fast_mask is None
            fast[:] = 7  # each call gives new arrays: what a caller does to them stays there
            if legal:
                fast_mask[:] = 7
        if legal:
            mask = mask_of(legal)
            assert mask.dtype == np.int8
            np.testing.assert_array_equal(mask, plain_mask)
    return n


def play_checking(name: str, state, arrays_of, mask_of, rng: random.Random, clones: list) -> int:
    """Play `state` to its end at random, checking every seat before and after every action
    (within a simultaneous step too: some seats have chosen, others not), telling `arrays_of`
    of each (`played`: what it keeps is brought up to date); now and then a clone
    of it goes into `clones`. How many seats were checked."""
    checked = assert_fast_equals_plain(name, state, arrays_of, mask_of)
    played = arrays_of.played  # told of each action, as the environment tells it
    while not state.is_over():
        for seat in state.seats_to_act():
            action = rng.choice(state.legal_actions(seat))
            state.apply_action(seat, action)
            played(state, [(seat, action)])
            checked += assert_fast_equals_plain(name, state, arrays_of, mask_of)
            if rng.random() < 0.02:
                clones.append(state.clone())
    return checked


@pytest.mark.parametrize("case", CASES, ids=label)
def test_the_fast_arrays_equal_the_plain_encoding_after_every_action(case):
    name, n, options = case
    game = make_game(name, n, **options)
    mask_of = mask_function(name)
    arrays_of = arrays_function(name, n)  # one for all: what it keeps must not go stale
    rng = random.Random(label(case))
    checked = 0
    # A series is several games long: one of them, against four single games.
    for _ in range(1 if options.get("series") else 4):
        clones: list = []
        state = game.new_match(rng.randrange(2**63))
        checked += play_checking(name, state, arrays_of, mask_of, rng, clones)
        # A clone caches nothing its original changes afterwards: three of them, taken at
        # random moments, each played to its end (all of a long series' clones took most of
        # the suite's time in this file, 155 s of it, with nothing more to find).
        for clone in rng.sample(clones, min(3, len(clones))):
            checked += play_checking(name, clone, arrays_of, mask_of, rng, [])
    assert checked >= 30 * n  # every seat, many times over


@pytest.mark.parametrize("name", ["balloon", "boom"])
def test_sampled_states_encode_alike(name):
    game = make_game(name, 4)
    module = balloon if name == "balloon" else boom
    rng = random.Random(5)
    state = game.new_match(5)
    for _ in range(5):  # a few steps in: some cards played, some still hidden
        for seat in state.seats_to_act():
            state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    assert not state.is_over()
    arrays_of, mask_of = arrays_function(name, 4), mask_function(name)
    for seat in range(4):
        sampled = module.sample_state(state.observation(seat), random.Random(seat))
        assert_fast_equals_plain(name, sampled, arrays_of, mask_of)


@pytest.mark.parametrize("name", ["balloon", "boom"])
def test_feature_values_refuses_a_seat_that_is_not_there(name):
    state = make_game(name, 3).new_match(1)
    arrays_of = arrays_function(name, 3)
    for seat in (-1, 3, True, "0"):
        with pytest.raises(RulesError, match="0..2"):
            state.feature_values(seat)
        with pytest.raises(RulesError, match="0..2"):
            arrays_of(state, seat)
        if name == "balloon":
            with pytest.raises(RulesError, match="0..2"):
                state.feature_tail(seat)


@pytest.mark.parametrize("native", [True, False], ids=["native writes", "kept"])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_the_balloon_environments_kept_ones_equal_the_plain_encoding_after_every_action(n, native):
    """ArenaEnv tells its Balloon arrays (arena.games.balloon.arrays) of every action, and the
    table's ones are then set card by card, not worked out anew: every seat's observation and
    mask after every action equal encode and legal_mask, with the ones worked out anew once a
    round. Where the native core runs, it writes every array itself (nothing kept), unless
    told not to."""
    env = ArenaEnv("balloon", n)
    arrays = env._arrays
    arrays.native = native
    kept = []
    keep = arrays._keep
    arrays._keep = lambda state, seat: (kept.append(state.round), keep(state, seat))
    rng = random.Random(n)
    for seed in range(3):
        env.reset(seed=seed)
        kept.clear()
        for agent in env.agent_iter():
            state = env.engine_state
            for seat, other in enumerate(env.possible_agents):  # every seat, in turn
                observed = env.observe(other)
                plain = features.encode(state.observation(seat))
                np.testing.assert_array_equal(observed["observation"], plain)
                legal = state.legal_actions(seat) if other == agent else ()
                plain_mask = features.legal_mask("balloon", legal)
                np.testing.assert_array_equal(observed["action_mask"], plain_mask)
            _, _, done, _, _ = env.last()
            mask = env.observe(agent)["action_mask"]
            env.step(None if done else int(rng.choice(np.flatnonzero(mask))))
        if native and hasattr(env.engine_state, "_write_observation"):
            assert kept == []  # every array written by the native core
        else:  # once a round: the plays in between were set by `played`
            assert kept == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("case", [c for c in CASES if c[0] == "boom"], ids=label)
def test_the_boom_environments_kept_vector_equals_the_plain_encoding_after_every_action(case):
    """ArenaEnv tells its Boom arrays (arena.games.boom.arrays) of every action it applies, and
    the vector is brought up to date from them, not worked out anew: every seat's observation
    and mask after every action equal encode and legal_mask, with the vector set anew at most
    once a round (and at the end) and the second escape step of a round set from the first's."""
    _, n, options = case
    env = ArenaEnv("boom", n, **options)
    arrays = env._arrays
    built, caught_up, steps_seen = [], [], set()
    build, catch_up = arrays._build, arrays._catch_up

    def counted_build(state):
        seen = state.public_observation()
        built.append((seen.game_number, seen.round, seen.step))
        build(state)

    def counted_catch_up(state, pending, count):
        done = catch_up(state, pending, count)
        caught_up.append(done)
        return done

    arrays._build, arrays._catch_up = counted_build, counted_catch_up
    rng = random.Random(label(case))
    for seed in range(1 if options.get("series") else 2):
        env.reset(seed=seed)
        built.clear()
        for agent in env.agent_iter():
            state = env.engine_state
            steps_seen.add(state.public_observation().step)
            for seat, other in enumerate(env.possible_agents):
                observed = env.observe(other)
                plain = features.encode(state.observation(seat))
                np.testing.assert_array_equal(observed["observation"], plain)
                legal = state.legal_actions(seat) if other in env.pending_agents() else ()
                plain_mask = features.legal_mask("boom", legal)
                np.testing.assert_array_equal(observed["action_mask"], plain_mask)
            _, _, done, _, _ = env.last()
            mask = env.observe(agent)["action_mask"]
            env.step(None if done else int(rng.choice(np.flatnonzero(mask))))
        assert len(built) == len(set(built))  # each round's vector set once in a match
        assert all(step != 2 for _, _, step in built)  # and never for a second escape step
    assert 2 in steps_seen and True in caught_up  # second steps observed, caught up


def test_boom_arrays_told_of_many_actions_unobserved_set_the_vector_anew():
    """A learner that steps without observing: the actions told pile up no further than two
    steps' worth, and the seats observed later equal encode all the same."""
    env = ArenaEnv("boom", 3)
    env.reset(seed=4)
    arrays = env._arrays
    rng = random.Random(4)
    env.observe("seat_0")  # the vector now holds the first state
    checked = 0
    for turn in range(1, 80):
        if env.engine_state.is_over():
            env.reset(seed=turn)
        agent = env.agent_selection
        legal = env.engine_state.legal_actions(env.possible_agents.index(agent))
        env.step(features.action_index("boom", rng.choice(legal)))
        assert len(arrays._told) <= 2 * 3
        if turn % 13 == 0:  # 13 actions unobserved: more than two steps' worth
            for seat, other in enumerate(env.possible_agents):
                plain = features.encode(env.engine_state.observation(seat))
                np.testing.assert_array_equal(env.observe(other)["observation"], plain)
            checked += 1
    assert checked == 6
