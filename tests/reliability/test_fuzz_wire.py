"""Property tests of the server's protobuf translation (arena/referee/wire.py).

Whatever a bot puts in an Action, translating it raises nothing but WireError, and the engine
then refuses it with nothing but IllegalActionError (the match loop catches exactly those two:
anything else would be a crash of the referee). Every legal engine action of every variant
round-trips through action_to_pb / bytes / action_from_pb unchanged.
"""

from __future__ import annotations

import random

import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games.base import IllegalActionError
from arena.referee import wire
from arena_sdk.proto import arena_pb2 as pb
from tests.support.fuzz import actions, mutate
from tests.variants import VARIANTS, game_of, variant_id


def playthrough(variant, seed: int, max_states: int = 400):
    """States along one random match of the variant (the engine's own legal moves)."""
    game = game_of(variant)
    state = game.new_match(seed)
    rng = random.Random(seed)
    seen = 0
    while not state.is_over():
        yield state
        seen += 1
        if seen >= max_states:
            return
        for seat in state.seats_to_act():
            state.apply_action(seat, rng.choice(state.legal_actions(seat)))


def translate_and_apply(state, game_name: str, msg: pb.Action) -> None:
    """What the referee does with a bot's action; only WireError or IllegalActionError may
    come out (both are faults of the bot)."""
    try:
        action = wire.action_from_pb(game_name, msg)
    except wire.WireError:
        return
    seat = state.seats_to_act()[0]
    try:
        state.clone().apply_action(seat, action)
    except IllegalActionError:
        pass


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_every_legal_action_round_trips(variant):
    game = game_of(variant)
    checked = 0
    for seed in (1, 2):
        for state in playthrough(variant, seed):
            for seat in state.seats_to_act():
                for action in state.legal_actions(seat):
                    msg = wire.action_to_pb(game.name, action)
                    again = pb.Action.FromString(msg.SerializeToString())
                    assert wire.action_from_pb(game.name, again) == action
                    checked += 1
    assert checked > 50


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    msg=actions,
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 10**6),
    depth=st.integers(0, 60),
)
def test_random_actions_raise_only_wire_or_illegal_action_errors(msg, variant, seed, depth):
    state = None
    for current in playthrough(variant, seed, depth + 1):
        state = current.clone()  # the generator moves `current` on when it is resumed
    translate_and_apply(state, variant[0], msg)


@settings(max_examples=400, deadline=None)
@given(
    msg=actions,
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32),
    rounds=st.integers(1, 4),
)
def test_mutated_action_bytes_raise_only_decode_wire_or_illegal_action_errors(
    msg, variant, seed, rounds
):
    rng = random.Random(seed)
    data = msg.SerializeToString()
    for _ in range(rounds):
        data = mutate(data, rng)
    try:
        parsed = pb.Action.FromString(data)
    except DecodeError:
        return  # gRPC refuses such a message before the referee sees it
    state = game_of(variant).new_match(seed % 1000)
    translate_and_apply(state, variant[0], parsed)


@settings(max_examples=200, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 10**6), data=st.data())
def test_mutations_of_legal_actions_raise_only_wire_or_illegal_action_errors(variant, seed, data):
    game = game_of(variant)
    state = game.new_match(seed)
    seat = state.seats_to_act()[0]
    legal = data.draw(st.sampled_from(state.legal_actions(seat)))
    raw = wire.action_to_pb(game.name, legal).SerializeToString()
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    try:
        parsed = pb.Action.FromString(mutate(raw, rng))
    except DecodeError:
        return
    translate_and_apply(state, game.name, parsed)
