"""wire.py is the server's only protobuf translation: what bots send is read into plain values
(and bytes that do not parse raise MalformedMessage, a type, not a text to match), what the
referee sends is built there, and the hand-written encoder's keys are those of the descriptors."""

from __future__ import annotations

import pytest

from arena.games import balloon, make_game
from arena.referee import wire
from arena.referee.match import Limits
from arena.results import ILLEGAL_ACTION, MALFORMED, UNKNOWN_REQUEST
from arena_sdk.proto import arena_pb2 as pb


def read(msg: pb.BotMessage) -> wire.BotMessage:
    return wire.read_bot_message(msg.SerializeToString())


def test_every_kind_of_bot_message_is_read_into_plain_values():
    assert read(
        pb.BotMessage(
            hello=pb.Hello(token="t", name="n", protocol_version=1, max_concurrent=4, batches=True)
        )
    ) == wire.Hello("t", "n", 1, 4, True)
    action = pb.Action(balloon=pb.BalloonAction(drop_out=True))
    reply = read(
        pb.BotMessage(action=pb.ActionReply(match_id="m", request_id=2**64 - 1, action=action))
    )
    assert reply == wire.MoveReply("m", 2**64 - 1, action)
    assert wire.action_from_pb("balloon", reply.action) == balloon.DROP_OUT
    replies = read(
        pb.BotMessage(
            action_replies=pb.ActionReplies(
                replies=[
                    pb.ActionReply(match_id="a", request_id=1),
                    pb.ActionReply(match_id="b", request_id=2),
                ]
            )
        )
    )
    assert [(r.match_id, r.request_id) for r in replies.replies] == [("a", 1), ("b", 2)]
    assert read(pb.BotMessage(ping=pb.Ping(nonce=9))) == wire.Ping(9)
    assert read(pb.BotMessage()) == wire.Unexpected("")
    assert wire.read_watch_request(pb.WatchRequest(match_id="w").SerializeToString()) == "w"


@pytest.mark.parametrize("data", [b"\xff\xff\xff", b"\x0a\x05ab", b"\x12\x80"])
def test_bytes_that_do_not_parse_raise_malformed_message(data):
    with pytest.raises(wire.MalformedMessage, match="does not parse"):
        wire.read_bot_message(data)
    with pytest.raises(wire.MalformedMessage, match="not a WatchRequest"):
        wire.read_watch_request(data)


def test_messages_to_bots_are_built_as_the_protocol_says():
    game = make_game("boom", 3, ruse=True)
    start = wire.match_start(
        "m", game, 2, ["a", "b", "c"], Limits(move_ms=50, time_bank_ms=7, max_strikes=2), 11
    )
    assert start.match_start == pb.MatchStart(
        match_id="m",
        game="boom",
        options=pb.GameOptions(num_players=3, ruse=True),
        seat=2,
        seat_names=["a", "b", "c"],
        limits=pb.Limits(move_ms=50, time_bank_ms=7, max_strikes=2),
        bot_seed=11,
    )
    state = game.new_match(1)
    end = wire.match_end("boom", "m", [3, -1, 0], [0, 2, 1], "completed", state.observation(0))
    assert end.match_end.final_observation == wire.observation_to_pb("boom", state.observation(0))
    assert list(end.match_end.scores) == [3, -1, 0] and end.match_end.reason == "completed"
    played = state.legal_actions(state.seats_to_act()[0])[0]
    rejected = wire.rejected(ILLEGAL_ACTION, "no", "m", 4, "boom", played).rejected
    assert (rejected.fault, rejected.detail, rejected.match_id, rejected.request_id) == (
        pb.FAULT_ILLEGAL_ACTION,
        "no",
        "m",
        4,
    )
    assert rejected.played_instead == wire.action_to_pb("boom", played)
    assert wire.rejected(UNKNOWN_REQUEST, "x").rejected.fault == pb.FAULT_UNKNOWN_REQUEST
    assert wire.rejected(MALFORMED, "x").rejected.fault == pb.FAULT_MALFORMED
    assert not wire.rejected(MALFORMED, "x").rejected.HasField("played_instead")
    assert wire.pong(5) == pb.RefereeMessage(pong=pb.Pong(nonce=5))
    assert wire.welcome("bot", 1, 8) == pb.RefereeMessage(
        welcome=pb.Welcome(bot_name="bot", protocol_version=1, max_concurrent=8)
    )


def _one_field_set(message, field) -> bytes:
    """The message with only `field` set to a value that is written, encoded by protobuf."""
    msg = message()
    if field.message_type is not None:
        sub = getattr(msg, field.name)
        target = sub.add() if field.is_repeated else sub
        target.SetInParent()
        for inner in field.message_type.fields:  # an empty message is still written
            if inner.type == inner.TYPE_UINT32 and not inner.is_repeated:
                setattr(target, inner.name, 1)
                break
    elif field.is_repeated:
        getattr(msg, field.name).append(True if field.type == field.TYPE_BOOL else 1)
    elif field.type == field.TYPE_STRING:
        setattr(msg, field.name, "x")
    else:
        setattr(msg, field.name, True if field.type == field.TYPE_BOOL else 1)
    return msg.SerializeToString()


@pytest.mark.parametrize("keys", wire.encoded(), ids=lambda k: k.message.DESCRIPTOR.name)
def test_the_encoders_keys_are_those_protobuf_writes(keys):
    for field in keys.message.DESCRIPTOR.fields:
        key = getattr(keys, field.name)
        assert _one_field_set(keys.message, field).startswith(key), field.full_name
