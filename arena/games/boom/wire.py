"""Boom: Runaway on the wire (server side): its actions and observations to and from the
protocol's messages (BoomAction, BoomObservation), for the referee's translation module
(arena/referee/wire.py). Observations and legal actions are written in the wire format directly
(arena/games/codec.py says why)."""

from __future__ import annotations

from functools import lru_cache

from arena_sdk.proto import arena_pb2 as pb

from .. import boom
from ..codec import (
    OBSERVATION,
    REQUEST,
    TRUE,
    Keys,
    card_fields,
    card_id,
    field,
    numbers,
    scalars,
)

# Card messages are immutable once built and cards are few, so build each once.
CARDS = tuple(
    pb.Card(id=i, colour=boom.COLOURS[i // 10], value=boom.VALUES[i % 10])
    for i in range(boom.NUM_CARDS)
)


@lru_cache(maxsize=4096)  # every pair and single of 51 cards fits
def action_to_pb(action: tuple[int, ...]) -> pb.Action:
    cards = [CARDS[c] for c in action if c != boom.RUSE]
    return pb.Action(boom=pb.BoomAction(cards=cards, ruse=boom.RUSE in action))


def action_from_pb(msg: pb.Action) -> tuple[int, ...]:
    ids = [card_id(c, boom.NUM_CARDS) for c in msg.boom.cards]
    if msg.boom.ruse:
        ids.append(boom.RUSE)
    return tuple(sorted(ids))


_BOOM = Keys(pb.BoomObservation)
_REVEALED = Keys(pb.BoomRevealed)
_PARADISE = Keys(pb.BoomParadise)
ENCODED = (_BOOM, _REVEALED, _PARADISE)

_HAND = card_fields(_BOOM.hand, CARDS)
_DISCARDED = card_fields(_BOOM.discarded, CARDS)
_REVEALED_CARD = card_fields(_REVEALED.cards, CARDS)


@lru_cache(maxsize=8192)  # every single, pair and ruse combination
def legal_field(action: tuple[int, ...]) -> bytes:
    return field(REQUEST.legal_actions, action_to_pb(action).SerializeToString())


@lru_cache(maxsize=8192)
def _revealed_field(cards: tuple[int, ...]) -> bytes:
    payload = b"".join([_REVEALED_CARD[c] for c in cards if c != boom.RUSE])
    if boom.RUSE in cards:
        payload += _REVEALED.ruse + TRUE
    return field(_BOOM.revealed, payload)


@lru_cache(maxsize=4096)
def _paradise_field(pile: tuple) -> bytes:
    payload = b"".join(
        [
            field(
                _PARADISE.cards,
                pb.BoomParadiseCard(card=CARDS[p.card], face_up=p.face_up).SerializeToString(),
            )
            for p in pile
        ]
    )
    return field(_BOOM.paradise, payload)


def observation_bytes(obs: boom.BoomObservation) -> bytes:
    k = _BOOM
    out: list[bytes] = []
    numbers(
        out,
        (
            (k.seat, obs.seat),
            (k.num_players, obs.num_players),
            (k.game_number, obs.game_number),
            (k.round, obs.round),
            (k.step, obs.step),
            (k.guard, obs.guard),
        ),
    )
    scalars(out, k.guard_limits, obs.guard_limits)
    numbers(out, ((k.guards_left, obs.guards_left), (k.to_play, obs.to_play)))
    hand = _HAND
    out += [hand[c] for c in obs.hand if c != boom.RUSE]
    if obs.has_ruse:
        out.append(k.has_ruse + TRUE)
    scalars(out, k.hand_sizes, obs.hand_sizes)
    scalars(out, k.acted, [int(a) for a in obs.acted])
    out += [_revealed_field(r) for r in obs.revealed]
    out += [_paradise_field(pile) for pile in obs.paradise]
    discarded = _DISCARDED
    out += [discarded[c] for c in obs.discarded if c != boom.RUSE]
    scalars(out, k.scores, obs.scores)
    scalars(out, k.series_totals, obs.series_totals)
    scalars(out, k.guards_used, obs.guards_used)
    return field(OBSERVATION.boom, b"".join(out))
