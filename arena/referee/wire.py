"""Translation between the rules engines' values and the protocol's messages (server side).

This is the only server module that builds or reads protobuf observations and actions. Engines
speak card ids and small ints/tuples; the wire speaks typed messages (see proto/arena/v1).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from arena.games import balloon, boom
from arena.games.base import Action, Game
from arena_sdk.proto import arena_pb2 as pb


class WireError(ValueError):
    """A message from a bot that does not translate into an action of its game."""


# Card messages are immutable once built and cards are few, so build each once.
_BALLOON_CARDS = tuple(pb.Card(id=i, colour=c.colour, value=c.value)
                       for i, c in enumerate(balloon.CARDS))
_BOOM_CARDS = tuple(pb.Card(id=i, colour=boom.COLOURS[i // 10], value=boom.VALUES[i % 10])
                    for i in range(50))


# ---------------------------------------------------------------- actions

@lru_cache(maxsize=None)  # at most 51 distinct actions
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

_M64 = (1 << 64) - 1
_ONE_BYTE = tuple(bytes((i,)) for i in range(128))


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


def _tag(field: int, wire_type: int) -> bytes:
    return _varint(field << 3 | wire_type)


_LEN_TAGS = tuple(_tag(field, 2) for field in range(32))  # every field number used here


def _field(field: int, payload: bytes) -> bytes:
    """A length-delimited field (a message, a string, packed numbers)."""
    return _LEN_TAGS[field] + _varint(len(payload)) + payload


def _scalars(out: list[bytes], field: int, values) -> None:
    """A packed repeated number field (proto3's encoding), left out when empty."""
    if values:
        try:  # numbers 0..127 (most of them) are one byte each: their varints are their bytes
            payload = bytes(values)
            if not payload.isascii():
                raise ValueError
        except ValueError:  # negative, or 128 and above
            payload = b"".join(map(_varint, values))
        out.append(_LEN_TAGS[field] + _varint(len(payload)) + payload)


# The encoded Card fields of every card, per field number that holds cards.
_BALLOON_CARD_FIELDS = {f: tuple(_field(f, c.SerializeToString()) for c in _BALLOON_CARDS)
                        for f in (7, 9)}  # BalloonObservation.hand, .face_up
_BOOM_CARD_FIELDS = {f: tuple(_field(f, c.SerializeToString()) for c in _BOOM_CARDS)
                     for f in (1, 10, 16)}  # BoomRevealed.cards, BoomObservation.hand, .discarded
_BALLOON_PLAYED_CARD = tuple(_field(2, c.SerializeToString()) for c in _BALLOON_CARDS)


@lru_cache(maxsize=8192)  # seats x cards x turns
def _balloon_played_field(seat: int, card: int, turn: int) -> bytes:
    payload = ((b"\x08" + _varint(seat) if seat else b"") + _BALLOON_PLAYED_CARD[card]
               + (b"\x18" + _varint(turn) if turn else b""))
    return _field(10, payload)  # BalloonObservation.table


@lru_cache(maxsize=None)  # at most 51
def _balloon_legal_field(action: int) -> bytes:
    return _field(4, balloon_action_to_pb(action).SerializeToString())  # ActionRequest.legal_actions


@lru_cache(maxsize=8192)  # every single, pair and ruse combination
def _boom_legal_field(action: tuple[int, ...]) -> bytes:
    return _field(4, boom_action_to_pb(action).SerializeToString())


@lru_cache(maxsize=8192)
def _boom_revealed_field(cards: tuple[int, ...]) -> bytes:
    fields = _BOOM_CARD_FIELDS[1]
    payload = b"".join([fields[c] for c in cards if c != boom.RUSE])
    if boom.RUSE in cards:
        payload += b"\x10\x01"
    return _field(14, payload)  # BoomObservation.revealed


@lru_cache(maxsize=4096)
def _boom_paradise_field(pile: tuple) -> bytes:
    payload = b"".join([_field(1, pb.BoomParadiseCard(card=_BOOM_CARDS[p.card],
                                                      face_up=p.face_up).SerializeToString())
                        for p in pile])
    return _field(15, payload)  # BoomObservation.paradise


def _balloon_observation_bytes(obs: "balloon.BalloonObservation") -> bytes:
    out = [b"\x08" + _varint(obs.seat)] if obs.seat else []
    if obs.num_players:
        out.append(b"\x10" + _varint(obs.num_players))
    if obs.round:
        out.append(b"\x18" + _varint(obs.round))
    if obs.turn:
        out.append(b"\x20" + _varint(obs.turn))
    if obs.start_seat:
        out.append(b"\x28" + _varint(obs.start_seat))
    if obs.to_act:
        out.append(b"\x30" + _varint(obs.to_act))
    hand = _BALLOON_CARD_FIELDS[7]
    out += [hand[c] for c in obs.hand]
    _scalars(out, 8, obs.hand_sizes)
    face_up = _BALLOON_CARD_FIELDS[9]
    out += [face_up[c] for c in obs.face_up]
    out += [_balloon_played_field(p.seat, p.card, p.turn) for p in obs.table]
    _scalars(out, 11, obs.dropped_out)
    _scalars(out, 12, obs.chips)
    if obs.chips_in_middle:
        out.append(b"\x68" + _varint(obs.chips_in_middle))
    if obs.first_drop_out_chip:
        out.append(b"\x70\x01")
    _scalars(out, 15, obs.totals)
    return _field(1, b"".join(out))  # Observation.balloon


def _boom_observation_bytes(obs: "boom.BoomObservation") -> bytes:
    out = [b"\x08" + _varint(obs.seat)] if obs.seat else []
    for key, value in ((b"\x10", obs.num_players), (b"\x18", obs.game_number),
                       (b"\x20", obs.round), (b"\x28", obs.step), (b"\x30", obs.guard)):
        if value:
            out.append(key + _varint(value))
    _scalars(out, 7, obs.guard_limits)
    if obs.guards_left:
        out.append(b"\x40" + _varint(obs.guards_left))
    if obs.to_play:
        out.append(b"\x48" + _varint(obs.to_play))
    hand = _BOOM_CARD_FIELDS[10]
    out += [hand[c] for c in obs.hand if c != boom.RUSE]
    if obs.has_ruse:
        out.append(b"\x58\x01")
    _scalars(out, 12, obs.hand_sizes)
    _scalars(out, 13, [int(a) for a in obs.acted])
    out += [_boom_revealed_field(r) for r in obs.revealed]
    out += [_boom_paradise_field(pile) for pile in obs.paradise]
    discarded = _BOOM_CARD_FIELDS[16]
    out += [discarded[c] for c in obs.discarded if c != boom.RUSE]
    _scalars(out, 17, obs.scores)
    _scalars(out, 18, obs.series_totals)
    _scalars(out, 19, obs.guards_used)
    return _field(2, b"".join(out))  # Observation.boom


_OBSERVATION_BYTES = {"balloon": _balloon_observation_bytes, "boom": _boom_observation_bytes}
_LEGAL_FIELD = {"balloon": _balloon_legal_field, "boom": _boom_legal_field}


def observation_to_pb(game_name: str, obs: Any) -> pb.Observation:
    return pb.Observation.FromString(_OBSERVATION_BYTES[game_name](obs))


def action_request(game_name: str, match_id: str, obs: Any, legal, move_ms: int,
                   time_bank_ms: int) -> tuple[bytes, bytes]:
    """An ActionRequest asking a seat to act, encoded, as (what goes before the request id,
    what goes after it): the id is chosen when the request is sent (`request_body`)."""
    head = _field(1, match_id.encode()) if match_id else b""
    to_field = _LEGAL_FIELD[game_name]
    tail = b"".join([_field(3, _OBSERVATION_BYTES[game_name](obs)),
                     *[to_field(a) for a in legal],
                     b"\x28" + _varint(move_ms) if move_ms else b"",
                     b"\x30" + _varint(time_bank_ms) if time_bank_ms else b""])
    return head, tail


def request_body(request: tuple[bytes, bytes], request_id: int) -> bytes:
    """The encoded ActionRequest with its id."""
    head, tail = request
    return head + (b"\x10" + _varint(request_id) if request_id else b"") + tail


def request_message(body: bytes) -> bytes:
    """The encoded RefereeMessage holding one ActionRequest (field 3)."""
    return b"\x1a" + _varint(len(body)) + body


def requests_message(bodies: list[bytes]) -> bytes:
    """The encoded RefereeMessage holding ActionRequests (field 7) of several."""
    inner = b"".join([b"\x0a" + _varint(len(b)) + b for b in bodies])
    return b"\x3a" + _varint(len(inner)) + inner


def serialize_referee_message(msg: pb.RefereeMessage | bytes) -> bytes:
    """The Play stream's serializer: messages built as objects, and those encoded above."""
    return msg if msg.__class__ is bytes else msg.SerializeToString()


# ---------------------------------------------------------------- match messages

def options_to_pb(game: Game) -> pb.GameOptions:
    return pb.GameOptions(num_players=game.num_players, **{
        k: bool(v) for k, v in game.options.items() if k in ("advanced", "ruse", "series")})


def limits_to_pb(limits) -> pb.Limits:
    return pb.Limits(move_ms=limits.move_ms, time_bank_ms=limits.time_bank_ms,
                     max_strikes=limits.max_strikes)


def event_to_pb(match_id: str, index: int, event, game_name: str,
                public_obs: Any = None, final: bool = False) -> pb.MatchEvent:
    data = {k: _text(v) for k, v in (event.data or {}).items()}
    msg = pb.MatchEvent(match_id=match_id, index=index, kind=event.kind, seat=event.seat,
                        data=data, final=final)
    if public_obs is not None:
        msg.public_observation.MergeFromString(_OBSERVATION_BYTES[game_name](public_obs))
    return msg


def _text(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return " ".join(_text(v) for v in value)
    return str(value)
