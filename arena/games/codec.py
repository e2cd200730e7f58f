"""What the games' wire codecs (arena/games/*/wire.py, server side) share: the `GameCodec`
interface the referee's translation module (arena/referee/wire.py) calls, and the helpers that
write protobuf's wire format directly.

An action request is built for every move. Built as protobuf objects, with nested messages
copied into repeated fields, it cost 15-40 us of the referee's 100-200 us per move; so
observations and requests are written directly in protobuf's wire format, from fragments made
once per card and per action. The bytes are exactly those protobuf would write
(tests/referee/test_wire_encoding.py compares them with messages built the ordinary way over
random states of every variant), and bots parse them as usual. Field numbers and wire types come
from the generated descriptors (`Keys`), once, at import.

Unlike the rest of arena.games this module and the codecs import protobuf: only the referee's
wire module loads them (GameKit.codec).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from google.protobuf.descriptor import FieldDescriptor

from arena_sdk.proto import arena_pb2 as pb

from .base import Action


class WireError(ValueError):
    """A message from a bot that does not translate into an action of its game."""


class GameCodec(Protocol):
    """One game's translation between its engine's values and its proto messages (the game's
    fields of the `Observation` and `Action` oneofs)."""

    # every message the codec writes in the wire format itself (each key checked by
    # tests/referee/test_wire_messages.py)
    ENCODED: Sequence[Keys]

    def action_to_pb(self, action: Action) -> pb.Action: ...

    def action_from_pb(self, msg: pb.Action) -> Action:
        """The engine action a reply names (`msg` holds this game's field of the oneof).
        Raises WireError when it is not an action of the game (legality is the engine's
        business, not the codec's)."""
        ...

    def observation_bytes(self, obs: Any) -> bytes:
        """The observation as an encoded `Observation` (the game's field of the oneof)."""
        ...

    def legal_field(self, action: Action) -> bytes:
        """The action as an encoded `ActionRequest.legal_actions` field."""
        ...


M64 = (1 << 64) - 1
_ONE_BYTE = tuple(bytes((i,)) for i in range(128))
TRUE = b"\x01"


def varint(n: int) -> bytes:
    if n < 0:  # int32 and int64 fields encode negatives as ten-byte two's complement
        n &= M64
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


class Keys:
    """The encoded key (field number and wire type) of every field of one message, by field
    name, as its descriptor says: `Keys(pb.Card).colour`."""

    def __init__(self, message) -> None:
        self.message = message
        for field in message.DESCRIPTOR.fields:
            setattr(self, field.name, varint(field.number << 3 | _wire_type(field)))

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


OBSERVATION = Keys(pb.Observation)
REQUEST = Keys(pb.ActionRequest)


def field(key: bytes, payload: bytes) -> bytes:
    """A length-delimited field (a message, a string, packed numbers)."""
    return key + varint(len(payload)) + payload


def scalars(out: list[bytes], key: bytes, values) -> None:
    """A packed repeated number field (proto3's encoding), left out when empty."""
    if values:
        try:  # numbers 0..127 (most of them) are one byte each: their varints are their bytes
            payload = bytes(values)
            if not payload.isascii():
                raise ValueError
        except ValueError:  # negative, or 128 and above
            payload = b"".join(map(varint, values))
        out.append(key + varint(len(payload)) + payload)


def numbers(out: list[bytes], fields: Sequence[tuple[bytes, int]]) -> None:
    """Single number fields (key, value), each left out when 0 (proto3's default)."""
    for key, value in fields:
        if value:
            out.append(key + varint(value))


def card_fields(key: bytes, cards) -> tuple[bytes, ...]:
    """The encoded field `key` holding each card, by card id."""
    return tuple(field(key, c.SerializeToString()) for c in cards)


def card_id(card: pb.Card, deck_size: int) -> int:
    if card.id >= deck_size:
        raise WireError(f"card id {card.id} is not in the deck (0..{deck_size - 1})")
    return card.id
