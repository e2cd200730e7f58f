"""The referee writes observations and action requests in protobuf's wire format directly
(arena/referee/wire.py): the bytes must be exactly those the protobuf library writes for the same
request built field by field (the reference below), for every game, variant, player count and
state, including spectator seats (negative numbers), empty fields, long match ids and large
request ids; and batches must be what ActionRequests is."""

from __future__ import annotations

import random

import pytest

from arena.games import balloon, boom, make_game
from arena.referee import wire
from arena_sdk.proto import arena_pb2 as pb
from tests.variants import VARIANTS, variant_id

BALLOON_CARDS = [pb.Card(id=i, colour=c.colour, value=c.value) for i, c in enumerate(balloon.CARDS)]
BOOM_CARDS = [
    pb.Card(id=i, colour=boom.COLOURS[i // 10], value=boom.VALUES[i % 10]) for i in range(50)
]


def balloon_observation(obs) -> pb.Observation:
    """An engine observation as a protobuf object, field by field (the reference)."""
    return pb.Observation(
        balloon=pb.BalloonObservation(
            seat=obs.seat,
            num_players=obs.num_players,
            round=obs.round,
            turn=obs.turn,
            start_seat=obs.start_seat,
            to_act=obs.to_act,
            hand=[BALLOON_CARDS[c] for c in obs.hand],
            hand_sizes=obs.hand_sizes,
            face_up=[BALLOON_CARDS[c] for c in obs.face_up],
            table=[
                pb.BalloonPlayed(seat=p.seat, card=BALLOON_CARDS[p.card], turn=p.turn)
                for p in obs.table
            ],
            dropped_out=obs.dropped_out,
            chips=obs.chips,
            chips_in_middle=obs.chips_in_middle,
            first_drop_out_chip=obs.first_drop_out_chip,
            totals=obs.totals,
        )
    )


def boom_observation(obs) -> pb.Observation:
    def cards(ids):
        return [BOOM_CARDS[c] for c in ids if c != boom.RUSE]

    return pb.Observation(
        boom=pb.BoomObservation(
            seat=obs.seat,
            num_players=obs.num_players,
            game_number=obs.game_number,
            round=obs.round,
            step=obs.step,
            guard=obs.guard,
            guard_limits=obs.guard_limits,
            guards_left=obs.guards_left,
            to_play=obs.to_play,
            hand=cards(obs.hand),
            has_ruse=obs.has_ruse,
            hand_sizes=obs.hand_sizes,
            acted=obs.acted,
            revealed=[pb.BoomRevealed(cards=cards(r), ruse=boom.RUSE in r) for r in obs.revealed],
            paradise=[
                pb.BoomParadise(
                    cards=[
                        pb.BoomParadiseCard(card=BOOM_CARDS[p.card], face_up=p.face_up)
                        for p in pile
                    ]
                )
                for pile in obs.paradise
            ],
            discarded=cards(obs.discarded),
            scores=obs.scores,
            series_totals=obs.series_totals,
            guards_used=obs.guards_used,
        )
    )


OBSERVATION = {"balloon": balloon_observation, "boom": boom_observation}


def reference(game_name, match_id, obs, legal, move_ms, bank_ms, request_id) -> pb.ActionRequest:
    """The same request built the ordinary way, as protobuf objects."""
    return pb.ActionRequest(
        match_id=match_id,
        request_id=request_id,
        observation=OBSERVATION[game_name](obs),
        legal_actions=[wire.action_to_pb(game_name, a) for a in legal],
        move_ms=move_ms,
        time_bank_ms=bank_ms,
    )


@pytest.mark.parametrize(
    "name,players,options",
    VARIANTS,
    ids=map(variant_id, VARIANTS),
)
def test_encoded_requests_are_byte_for_byte_protobufs_own(name, players, options):
    game = make_game(name, players, **options)
    rng = random.Random(f"{name}{players}{sorted(options)}")
    checked = 0
    for seed in range(6 if not options.get("series") else 2):
        state = game.new_match(seed)
        while not state.is_over():
            to_act = state.seats_to_act()
            for seat in list(to_act) + [-1]:  # -1: a spectator's view, seat and to_act < 0
                obs = state.observation(seat)
                legal = state.legal_actions(seat) if seat >= 0 else []
                match_id = rng.choice(["", "m1", "x" * 200])
                move_ms, bank_ms = rng.choice([(0, 0), (1000, 10_000), (2**31, 1)])
                request_id = rng.choice([0, 1, 127, 128, 2**40])
                expected = reference(name, match_id, obs, legal, move_ms, bank_ms, request_id)
                parts = wire.action_request(name, match_id, obs, legal, move_ms, bank_ms)
                body = wire.request_body(parts, request_id)
                assert body == expected.SerializeToString(), (seed, seat, obs)
                assert pb.ActionRequest.FromString(body) == expected
                assert wire.observation_to_pb(name, obs) == expected.observation
                checked += 1
            for seat in to_act:
                state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    assert checked > 100


def test_request_messages_and_batches_are_referee_messages():
    game = make_game("boom", 3, ruse=True)
    state = game.new_match(5)
    requests = [
        reference(
            "boom",
            f"m{seat}",
            state.observation(seat),
            state.legal_actions(seat),
            1000,
            500,
            seat + 1,
        )
        for seat in state.seats_to_act()
    ]
    bodies = [
        wire.request_body(
            wire.action_request(
                "boom", r.match_id, state.observation(i), state.legal_actions(i), 1000, 500
            ),
            r.request_id,
        )
        for i, r in enumerate(requests)
    ]
    assert (
        wire.request_message(bodies[0])
        == pb.RefereeMessage(action_request=requests[0]).SerializeToString()
    )
    batch = wire.requests_message(bodies)
    assert (
        batch
        == pb.RefereeMessage(
            action_requests=pb.ActionRequests(requests=requests)
        ).SerializeToString()
    )
    assert pb.RefereeMessage.FromString(batch).action_requests.requests[2] == requests[2]


def test_the_stream_serializer_passes_encoded_bytes_and_serializes_messages():
    msg = pb.RefereeMessage(pong=pb.Pong(nonce=7))
    assert wire.serialize_referee_message(msg) == msg.SerializeToString()
    assert wire.serialize_referee_message(b"\x1a\x00") == b"\x1a\x00"
