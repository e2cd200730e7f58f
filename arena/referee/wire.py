"""Translation between the referee and the protocol's messages (server side).

This is the only server module that builds or reads protobuf messages: what bots send is read
here into plain values (`read_bot_message`, the Play stream's deserializer), and every message to
a bot or a spectator is built here. Engines speak card ids and small ints/tuples; the wire speaks
typed messages (see proto/arena/v1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, cast

from google.protobuf.message import DecodeError

from arena.games import game_kit, game_kits
from arena.games.base import Action, Game
from arena.games.codec import OBSERVATION, GameCodec, Keys, WireError
from arena.games.codec import field as _field
from arena.games.codec import varint as _varint
from arena.results import (
    CRASH,
    DISCONNECT,
    ILLEGAL_ACTION,
    MALFORMED,
    TIMEOUT,
    UNKNOWN_REQUEST,
    MatchResult,
)
from arena_sdk.proto import arena_pb2 as pb


class MalformedMessage(ValueError):
    """Bytes from a bot that are not a BotMessage: they do not parse."""


# ---------------------------------------------------------------- what bots send


@dataclass(slots=True, frozen=True)
class Hello:
    """The first message of a Play stream."""

    kind: ClassVar[str] = "hello"
    token: str
    name: str  # the bot's own word for itself: informational
    protocol_version: int
    max_concurrent: int  # 0 means 1
    batches: bool  # the bot reads ActionRequests


@dataclass(slots=True)
class MoveReply:
    """A bot's reply to an action request. `action` is read by `action_from_pb` only."""

    kind: ClassVar[str] = "action"
    match_id: str
    request_id: int
    action: pb.Action


@dataclass(slots=True)
class MoveReplies:
    """Several replies at once, each as if sent alone."""

    kind: ClassVar[str] = "action_replies"
    replies: list[MoveReply]


@dataclass(slots=True)
class Ping:
    kind: ClassVar[str] = "ping"
    nonce: int


@dataclass(slots=True)
class Unexpected:
    """A message of a kind the referee does not take from bots ("" for an empty message)."""

    kind: str


BotMessage = Hello | MoveReply | MoveReplies | Ping | Unexpected


def read_bot_message(data: bytes) -> BotMessage:
    """The Play stream's deserializer: the bot's message, read. Raises MalformedMessage for
    bytes that do not parse (gRPC hands the exception to the stream's reader)."""
    try:
        msg = pb.BotMessage.FromString(data)
    except DecodeError as err:
        raise MalformedMessage(
            f"a message on the stream is not a BotMessage (it does not parse: {err})"
        ) from None
    return from_bot_message(msg)


def from_bot_message(msg: pb.BotMessage) -> BotMessage:
    """A parsed BotMessage as the referee reads it."""
    kind = msg.WhichOneof("kind")
    if kind == "action":
        reply = msg.action
        return MoveReply(reply.match_id, reply.request_id, reply.action)
    if kind == "action_replies":
        return MoveReplies(
            [MoveReply(r.match_id, r.request_id, r.action) for r in msg.action_replies.replies]
        )
    if kind == "ping":
        return Ping(msg.ping.nonce)
    if kind == "hello":
        h = msg.hello
        return Hello(h.token, h.name, h.protocol_version, h.max_concurrent, h.batches)
    return Unexpected(kind or "")


def read_watch_request(data: bytes) -> str:
    """The Watch call's deserializer: the id of the match to watch."""
    try:
        return pb.WatchRequest.FromString(data).match_id
    except DecodeError as err:
        raise MalformedMessage(
            f"the request is not a WatchRequest (it does not parse: {err})"
        ) from None


# ---------------------------------------------------------------- what the referee sends

# What goes to a bot's stream: a message built here, or bytes this module encoded.
Outgoing = pb.RefereeMessage | bytes

_FAULTS = {
    TIMEOUT: pb.FAULT_TIMEOUT,
    ILLEGAL_ACTION: pb.FAULT_ILLEGAL_ACTION,
    UNKNOWN_REQUEST: pb.FAULT_UNKNOWN_REQUEST,
    DISCONNECT: pb.FAULT_DISCONNECT,
    CRASH: pb.FAULT_CRASH,
    MALFORMED: pb.FAULT_MALFORMED,
}


def welcome(bot_name: str, protocol_version: int, max_concurrent: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(
        welcome=pb.Welcome(
            bot_name=bot_name, protocol_version=protocol_version, max_concurrent=max_concurrent
        )
    )


def match_start(
    match_id: str, game: Game, seat: int, seat_names, limits, bot_seed: int
) -> pb.RefereeMessage:
    return pb.RefereeMessage(
        match_start=pb.MatchStart(
            match_id=match_id,
            game=game.name,
            options=options_to_pb(game),
            seat=seat,
            seat_names=seat_names,
            limits=limits_to_pb(limits),
            bot_seed=bot_seed,
        )
    )


def match_end(
    game_name: str, match_id: str, scores, ranks, reason: str, final_observation: Any
) -> pb.RefereeMessage:
    return pb.RefereeMessage(
        match_end=pb.MatchEnd(
            match_id=match_id,
            scores=scores,
            ranks=ranks,
            reason=reason,
            final_observation=observation_to_pb(game_name, final_observation),
        )
    )


def rejected(
    fault_kind: str,
    detail: str,
    match_id: str = "",
    request_id: int = 0,
    game_name: str = "",
    played_instead: Action | None = None,
) -> pb.RefereeMessage:
    """A Rejected: the fault (a kind of arena.results) the bot is charged with and why, and the
    action played in its stead, if one was (of `game_name`)."""
    msg = pb.Rejected(
        match_id=match_id,
        request_id=request_id,
        fault=_FAULTS.get(fault_kind, pb.FAULT_UNSPECIFIED),
        detail=detail,
    )
    if played_instead is not None:
        msg.played_instead.CopyFrom(action_to_pb(game_name, played_instead))
    return pb.RefereeMessage(rejected=msg)


def pong(nonce: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(pong=pb.Pong(nonce=nonce))


# ---------------------------------------------------------------- actions and observations
#
# Each game's codec (its package's wire.py: arena/games/codec.py) translates its actions and
# writes its observations and legal actions in protobuf's wire format directly; an action
# request is put together here from their bytes. Where an Observation object is wanted (a
# match's end, spectators), it is parsed from the same bytes: one encoder.


@cache
def codec(game_name: str) -> GameCodec:
    """The wire codec of the game (its package's wire module)."""
    return cast(GameCodec, game_kit(game_name).load("codec"))


def action_to_pb(game_name: str, action: Action) -> pb.Action:
    return codec(game_name).action_to_pb(action)


def action_from_pb(game_name: str, msg: pb.Action) -> Action:
    """The engine action a reply names. Raises WireError when it is not an action of the game
    (legality is the engine's business, not this module's)."""
    which = msg.WhichOneof("game")
    if which != game_name:
        raise WireError(f"expected a {game_name} action, got {which or 'an empty action'}")
    return codec(game_name).action_from_pb(msg)


_REQUEST = Keys(pb.ActionRequest)
_REQUESTS = Keys(pb.ActionRequests)
_REFEREE = Keys(pb.RefereeMessage)


def encoded() -> tuple[Keys, ...]:
    """Every message the encoder writes, the games' included (tests/referee/test_wire_messages.py
    checks each key)."""
    games = [k for kit in game_kits() for k in codec(kit.name).ENCODED]
    return (_REQUEST, _REQUESTS, _REFEREE, OBSERVATION, *games)


def observation_to_pb(game_name: str, obs: Any) -> pb.Observation:
    return pb.Observation.FromString(codec(game_name).observation_bytes(obs))


def action_request(
    game_name: str, match_id: str, obs: Any, legal, move_ms: int, time_bank_ms: int
) -> tuple[bytes, bytes]:
    """An ActionRequest asking a seat to act, encoded, as (what goes before the request id,
    what goes after it): the id is chosen when the request is sent (`request_body`)."""
    k = _REQUEST
    head = _field(k.match_id, match_id.encode()) if match_id else b""
    game = codec(game_name)
    to_field = game.legal_field
    tail = b"".join(
        [
            _field(k.observation, game.observation_bytes(obs)),
            *[to_field(a) for a in legal],
            k.move_ms + _varint(move_ms) if move_ms else b"",
            k.time_bank_ms + _varint(time_bank_ms) if time_bank_ms else b"",
        ]
    )
    return head, tail


_REQUEST_ID = _REQUEST.request_id
_ONE_REQUEST = _REFEREE.action_request
_BATCH = _REFEREE.action_requests
_BATCHED = _REQUESTS.requests


def request_body(request: tuple[bytes, bytes], request_id: int) -> bytes:
    """The encoded ActionRequest with its id."""
    head, tail = request
    return head + (_REQUEST_ID + _varint(request_id) if request_id else b"") + tail


def request_message(body: bytes) -> bytes:
    """The encoded RefereeMessage holding one ActionRequest."""
    return _ONE_REQUEST + _varint(len(body)) + body


def requests_message(bodies: list[bytes]) -> bytes:
    """The encoded RefereeMessage holding ActionRequests of several."""
    inner = b"".join([_BATCHED + _varint(len(b)) + b for b in bodies])
    return _BATCH + _varint(len(inner)) + inner


def serialize_referee_message(msg: Outgoing) -> bytes:
    """The Play stream's serializer: messages built as objects, and those encoded above."""
    # __class__ (quicker here than type() or isinstance) narrows only the `is` branch for mypy
    return msg if msg.__class__ is bytes else msg.SerializeToString()  # type: ignore[union-attr]


# ---------------------------------------------------------------- match messages


def options_to_pb(game: Game) -> pb.GameOptions:
    """The game's options, each in the GameOptions field of its name (GameOption)."""
    return pb.GameOptions(num_players=game.num_players, **game.options)


def limits_to_pb(limits) -> pb.Limits:
    return pb.Limits(
        move_ms=limits.move_ms, time_bank_ms=limits.time_bank_ms, max_strikes=limits.max_strikes
    )


def event_to_pb(
    match_id: str, index: int, event, game_name: str, public_obs: Any = None, final: bool = False
) -> pb.MatchEvent:
    data = {k: _text(v) for k, v in (event.data or {}).items()}
    msg = pb.MatchEvent(
        match_id=match_id, index=index, kind=event.kind, seat=event.seat, data=data, final=final
    )
    if public_obs is not None:
        msg.public_observation.MergeFromString(codec(game_name).observation_bytes(public_obs))
    return msg


def match_end_event(match_id: str, index: int, result: MatchResult) -> pb.MatchEvent:
    """A spectator's last event of a match: its scores, ranks and faults."""
    return pb.MatchEvent(
        match_id=match_id,
        index=index,
        kind="match_end",
        seat=-1,
        data={
            "scores": " ".join(map(str, result.scores)),
            "ranks": " ".join(map(str, result.ranks)),
            "faults": " ".join(f"{f.seat}:{f.kind}" for f in result.faults),
        },
        final=True,
    )


def serialize_match_event(event: pb.MatchEvent) -> bytes:
    """The Watch call's serializer."""
    return event.SerializeToString()


def _text(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return " ".join(_text(v) for v in value)
    return str(value)
