"""What the SDK's game modules (arena_sdk.games) share: cards read from their messages (one
object per card), an observation read field by field into its dataclass, and card ids from a
bot's or an engine's cards. Touches generated classes: only arena_sdk.wire's side uses it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields
from typing import Any, TypeVar

from .proto import arena_pb2 as pb
from .types import Card

_Record = TypeVar("_Record")

# Cards are immutable and a game has a few dozen of them: share one object per card rather than
# build a frozen dataclass per card per message (most of the cost of translating a request).
_card_cache: dict[tuple[int, str, int], Card] = {}


def card(msg: pb.Card) -> Card:
    key = (msg.id, msg.colour, msg.value)
    c = _card_cache.get(key)
    if c is None:
        if len(_card_cache) >= 4096:  # only a misbehaving referee sends this many distinct cards
            _card_cache.clear()
        c = _card_cache[key] = Card(*key)
    return c


def cards(msgs: Iterable[pb.Card]) -> tuple[Card, ...]:
    return tuple(map(card, msgs))


def card_to_proto(c: Card) -> pb.Card:
    return pb.Card(id=c.id, colour=c.colour, value=c.value)


# An observation's message has a field of the same name for each of the dataclass's. Its plan
# reads them in order: those that hold cards through their conversion, the other repeated ones
# (the dataclass's tuples) as tuples, the rest as they are.
Plan = tuple[tuple[str, Callable[[Any], Any] | None], ...]


def plan(record: type, card_fields: Mapping[str, Callable[[Any], Any]]) -> Plan:
    return tuple(
        (f.name, card_fields.get(f.name, tuple if str(f.type).startswith("tuple[") else None))
        for f in fields(record)
    )


def read(record: type[_Record], plan: Plan, msg: Any) -> _Record:
    values = []
    for name, convert in plan:
        value = getattr(msg, name)
        values.append(value if convert is None else convert(value))
    return record(*values)


def card_id(c: Any) -> int:
    """A card's id: an engine's card is its id, a bot's Card has one."""
    return c if c.__class__ is int else c.id


def card_ids(cs: Iterable[Any]) -> list[int]:
    return [c if c.__class__ is int else c.id for c in cs]
