"""Translation between the referee and the protocol's messages (server side).

This is the only server module that builds or reads protobuf messages: what bots send is read
here into plain values (`read_bot_message`, the Play stream's deserializer), and every message to
a bot or a spectator is built here. Engines speak card ids and small ints/tuples; the wire speaks
typed messages (see proto/arena/v1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Callable, ClassVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError

from arena.games import balloon, boom
from arena.games.base import Action, Game
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


class WireError(ValueError):
    """A message from a bot that does not translate into an action of its game."""


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


# ---------------------------------------------------------------- actions

# Card messages are immutable once built and cards are few, so build each once.
_BALLOON_CARDS = tuple(
    pb.Card(id=i, colour=c.colour, value=c.value) for i, c in enumerate(balloon.CARDS)
)
_BOOM_CARDS = tuple(
    pb.Card(id=i, colour=boom.COLOURS[i // 10], value=boom.VALUES[i % 10]) for i in range(50)
)


@cache  # at most 51 distinct actions
def balloon_action_to_pb(action: int) -> pb.Action:
    if action == balloon.DROP_OUT:
        return pb.Action(balloon=pb.BalloonAction(drop_out=True))
    return pb.Action(balloon=pb.BalloonAction(play=_BALLOON_CARDS[action]))


@lru_cache(maxsize=4096)  # every pair and single of 51 cards fits
def boom_action_to_pb(action: tuple[int, ...]) -> pb.Action:
    cards = [_BOOM_CARDS[c] for c in action if c != boom.RUSE]
    return pb.Action(boom=pb.BoomAction(cards=cards, ruse=boom.RUSE in action))


def action_to_pb(game_name: str, action: Action) -> pb.Action:
    return _ACTION_TO_PB[game_name](action)


def action_from_pb(game_name: str, msg: pb.Action) -> Action:
    """The engine action a reply names. Raises WireError when it is not an action of the game
    (legality is the engine's business, not this module's)."""
    which = msg.WhichOneof("game")
    if which != game_name:
        raise WireError(f"expected a {game_name} action, got {which or 'an empty action'}")
    if game_name == "balloon":
        kind = msg.balloon.WhichOneof("kind")
        if kind == "drop_out":
            if not msg.balloon.drop_out:
                raise WireError("drop_out must be true when set")
            return balloon.DROP_OUT
        if kind == "play":
            return _card_id(msg.balloon.play, len(balloon.CARDS))
        raise WireError("a balloon action must set play or drop_out")
    ids = [_card_id(c, 50) for c in msg.boom.cards]
    if msg.boom.ruse:
        ids.append(boom.RUSE)
    return tuple(sorted(ids))


def _card_id(card: pb.Card, deck_size: int) -> int:
    if card.id >= deck_size:
        raise WireError(f"card id {card.id} is not in the deck (0..{deck_size - 1})")
    return card.id


_ACTION_TO_PB = {"balloon": balloon_action_to_pb, "boom": boom_action_to_pb}


# ---------------------------------------------------------------- observations and requests
#
# An action request is built for every move. Built as protobuf objects, with nested messages
# copied into repeated fields, it cost 15-40 us of the referee's 100-200 us per move; so
# observations and requests are written here directly in protobuf's wire format, from fragments
# made once per card and per action. The bytes are exactly those protobuf would write
# (tests/referee/test_wire_encoding.py compares them with messages built the ordinary way over
# random states of every variant), and bots parse them as usual. Where an Observation object
# is wanted (a match's end, spectators), it is parsed from the same bytes: one encoder.
# Field numbers and wire types come from the generated descriptors (`_Keys`), once, at import.

_M64 = (1 << 64) - 1
_ONE_BYTE = tuple(bytes((i,)) for i in range(128))
_TRUE = b"\x01"


def _varint(n: int) -> bytes:
    if n < 0:  # int32 and int64 fields encode negatives as ten-byte two's complement
        n &= _M64
    if n < 128:
        return _ONE_BYTE[n]
    out = bytearray()
    while n >= 128:
        out.append((n & 127) | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


_VARINT_TYPES = frozenset(
    (
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_ENUM,
    )
)
_LENGTH_DELIMITED_TYPES = frozenset(
    (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)
)


class _Keys:
    """The encoded key (field number and wire type) of every field of one message, by field
    name, as its descriptor says: `_Keys(pb.Card).colour`."""

    def __init__(self, message) -> None:
        self.message = message
        for field in message.DESCRIPTOR.fields:
            setattr(self, field.name, _varint(field.number << 3 | _wire_type(field)))

    def __getattr__(self, name: str) -> bytes:
        # Only for names __init__ did not set (and it tells the type checker that the keys
        # set there are bytes).
        raise AttributeError(f"the message has no field {name!r}")


def _wire_type(field: FieldDescriptor) -> int:
    if field.type in _LENGTH_DELIMITED_TYPES or (field.is_repeated and field.is_packed):
        return 2  # a message, a string, packed numbers
    if field.type in _VARINT_TYPES and not field.is_repeated:
        return 0
    raise TypeError(
        f"{field.full_name}: the encoder writes no field of type {field.type} "
        "(unpacked repeated, or fixed-width); teach it, or build the message"
    )


# Every message the encoder writes (tests/referee/test_wire_encoding.py checks each key).
_REQUEST = _Keys(pb.ActionRequest)
_REQUESTS = _Keys(pb.ActionRequests)
_REFEREE = _Keys(pb.RefereeMessage)
_OBSERVATION = _Keys(pb.Observation)
_BALLOON = _Keys(pb.BalloonObservation)
_PLAYED = _Keys(pb.BalloonPlayed)
_BOOM = _Keys(pb.BoomObservation)
_REVEALED = _Keys(pb.BoomRevealed)
_PARADISE = _Keys(pb.BoomParadise)
ENCODED = (
    _REQUEST,
    _REQUESTS,
    _REFEREE,
    _OBSERVATION,
    _BALLOON,
    _PLAYED,
    _BOOM,
    _REVEALED,
    _PARADISE,
)


def _field(key: bytes, payload: bytes) -> bytes:
    """A length-delimited field (a message, a string, packed numbers)."""
    return key + _varint(len(payload)) + payload


def _scalars(out: list[bytes], key: bytes, values) -> None:
    """A packed repeated number field (proto3's encoding), left out when empty."""
    if values:
        try:  # numbers 0..127 (most of them) are one byte each: their varints are their bytes
            payload = bytes(values)
            if not payload.isascii():
                raise ValueError
        except ValueError:  # negative, or 128 and above
            payload = b"".join(map(_varint, values))
        out.append(key + _varint(len(payload)) + payload)


def _card_fields(key: bytes, cards) -> tuple[bytes, ...]:
    """The encoded field `key` holding each card, by card id."""
    return tuple(_field(key, c.SerializeToString()) for c in cards)


_BALLOON_HAND = _card_fields(_BALLOON.hand, _BALLOON_CARDS)
_BALLOON_FACE_UP = _card_fields(_BALLOON.face_up, _BALLOON_CARDS)
_BALLOON_PLAYED_CARD = _card_fields(_PLAYED.card, _BALLOON_CARDS)
_BOOM_HAND = _card_fields(_BOOM.hand, _BOOM_CARDS)
_BOOM_DISCARDED = _card_fields(_BOOM.discarded, _BOOM_CARDS)
_BOOM_REVEALED_CARD = _card_fields(_REVEALED.cards, _BOOM_CARDS)


@lru_cache(maxsize=8192)  # seats x cards x turns
def _balloon_played_field(seat: int, card: int, turn: int) -> bytes:
    payload = (
        (_PLAYED.seat + _varint(seat) if seat else b"")
        + _BALLOON_PLAYED_CARD[card]
        + (_PLAYED.turn + _varint(turn) if turn else b"")
    )
    return _field(_BALLOON.table, payload)


@cache  # at most 51
def _balloon_legal_field(action: int) -> bytes:
    return _field(_REQUEST.legal_actions, balloon_action_to_pb(action).SerializeToString())


@lru_cache(maxsize=8192)  # every single, pair and ruse combination
def _boom_legal_field(action: tuple[int, ...]) -> bytes:
    return _field(_REQUEST.legal_actions, boom_action_to_pb(action).SerializeToString())


@lru_cache(maxsize=8192)
def _boom_revealed_field(cards: tuple[int, ...]) -> bytes:
    payload = b"".join([_BOOM_REVEALED_CARD[c] for c in cards if c != boom.RUSE])
    if boom.RUSE in cards:
        payload += _REVEALED.ruse + _TRUE
    return _field(_BOOM.revealed, payload)


@lru_cache(maxsize=4096)
def _boom_paradise_field(pile: tuple) -> bytes:
    payload = b"".join(
        [
            _field(
                _PARADISE.cards,
                pb.BoomParadiseCard(
                    card=_BOOM_CARDS[p.card], face_up=p.face_up
                ).SerializeToString(),
            )
            for p in pile
        ]
    )
    return _field(_BOOM.paradise, payload)


def _balloon_observation_bytes(obs: "balloon.BalloonObservation") -> bytes:
    k = _BALLOON
    out = [k.seat + _varint(obs.seat)] if obs.seat else []
    if obs.num_players:
        out.append(k.num_players + _varint(obs.num_players))
    if obs.round:
        out.append(k.round + _varint(obs.round))
    if obs.turn:
        out.append(k.turn + _varint(obs.turn))
    if obs.start_seat:
        out.append(k.start_seat + _varint(obs.start_seat))
    if obs.to_act:
        out.append(k.to_act + _varint(obs.to_act))
    hand = _BALLOON_HAND
    out += [hand[c] for c in obs.hand]
    _scalars(out, k.hand_sizes, obs.hand_sizes)
    face_up = _BALLOON_FACE_UP
    out += [face_up[c] for c in obs.face_up]
    out += [_balloon_played_field(p.seat, p.card, p.turn) for p in obs.table]
    _scalars(out, k.dropped_out, obs.dropped_out)
    _scalars(out, k.chips, obs.chips)
    if obs.chips_in_middle:
        out.append(k.chips_in_middle + _varint(obs.chips_in_middle))
    if obs.first_drop_out_chip:
        out.append(k.first_drop_out_chip + _TRUE)
    _scalars(out, k.totals, obs.totals)
    return _field(_OBSERVATION.balloon, b"".join(out))


def _boom_observation_bytes(obs: "boom.BoomObservation") -> bytes:
    k = _BOOM
    out = [k.seat + _varint(obs.seat)] if obs.seat else []
    for key, value in (
        (k.num_players, obs.num_players),
        (k.game_number, obs.game_number),
        (k.round, obs.round),
        (k.step, obs.step),
        (k.guard, obs.guard),
    ):
        if value:
            out.append(key + _varint(value))
    _scalars(out, k.guard_limits, obs.guard_limits)
    if obs.guards_left:
        out.append(k.guards_left + _varint(obs.guards_left))
    if obs.to_play:
        out.append(k.to_play + _varint(obs.to_play))
    hand = _BOOM_HAND
    out += [hand[c] for c in obs.hand if c != boom.RUSE]
    if obs.has_ruse:
        out.append(k.has_ruse + _TRUE)
    _scalars(out, k.hand_sizes, obs.hand_sizes)
    _scalars(out, k.acted, [int(a) for a in obs.acted])
    out += [_boom_revealed_field(r) for r in obs.revealed]
    out += [_boom_paradise_field(pile) for pile in obs.paradise]
    discarded = _BOOM_DISCARDED
    out += [discarded[c] for c in obs.discarded if c != boom.RUSE]
    _scalars(out, k.scores, obs.scores)
    _scalars(out, k.series_totals, obs.series_totals)
    _scalars(out, k.guards_used, obs.guards_used)
    return _field(_OBSERVATION.boom, b"".join(out))


_OBSERVATION_BYTES: dict[str, Callable[[Any], bytes]] = {
    "balloon": _balloon_observation_bytes,
    "boom": _boom_observation_bytes,
}
_LEGAL_FIELD: dict[str, Callable[[Any], bytes]] = {
    "balloon": _balloon_legal_field,
    "boom": _boom_legal_field,
}


def observation_to_pb(game_name: str, obs: Any) -> pb.Observation:
    return pb.Observation.FromString(_OBSERVATION_BYTES[game_name](obs))


def action_request(
    game_name: str, match_id: str, obs: Any, legal, move_ms: int, time_bank_ms: int
) -> tuple[bytes, bytes]:
    """An ActionRequest asking a seat to act, encoded, as (what goes before the request id,
    what goes after it): the id is chosen when the request is sent (`request_body`)."""
    k = _REQUEST
    head = _field(k.match_id, match_id.encode()) if match_id else b""
    to_field = _LEGAL_FIELD[game_name]
    tail = b"".join(
        [
            _field(k.observation, _OBSERVATION_BYTES[game_name](obs)),
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
    return pb.GameOptions(
        num_players=game.num_players,
        **{k: bool(v) for k, v in game.options.items() if k in ("advanced", "ruse", "series")},
    )


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
        msg.public_observation.MergeFromString(_OBSERVATION_BYTES[game_name](public_obs))
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
