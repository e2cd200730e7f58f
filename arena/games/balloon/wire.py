"""Balloon Challenge on the wire (server side): its actions and observations to and from the
protocol's messages (BalloonAction, BalloonObservation), for the referee's translation module
(arena/referee/wire.py). Observations and legal actions are written in the wire format directly
(arena/games/codec.py says why)."""

from __future__ import annotations

from functools import cache, lru_cache

from arena_sdk.proto import arena_pb2 as pb

from .. import balloon
from ..codec import (
    OBSERVATION,
    REQUEST,
    TRUE,
    Keys,
    WireError,
    card_fields,
    card_id,
    field,
    numbers,
    scalars,
    varint,
)

# Card messages are immutable once built and cards are few, so build each once.
CARDS = tuple(pb.Card(id=i, colour=c.colour, value=c.value) for i, c in enumerate(balloon.CARDS))


@cache  # at most 51 distinct actions
def action_to_pb(action: int) -> pb.Action:
    if action == balloon.DROP_OUT:
        return pb.Action(balloon=pb.BalloonAction(drop_out=True))
    return pb.Action(balloon=pb.BalloonAction(play=CARDS[action]))


def action_from_pb(msg: pb.Action) -> int:
    kind = msg.balloon.WhichOneof("kind")
    if kind == "drop_out":
        if not msg.balloon.drop_out:
            raise WireError("drop_out must be true when set")
        return balloon.DROP_OUT
    if kind == "play":
        return card_id(msg.balloon.play, len(balloon.CARDS))
    raise WireError("a balloon action must set play or drop_out")


_BALLOON = Keys(pb.BalloonObservation)
_PLAYED = Keys(pb.BalloonPlayed)
ENCODED = (_BALLOON, _PLAYED)

_HAND = card_fields(_BALLOON.hand, CARDS)
_FACE_UP = card_fields(_BALLOON.face_up, CARDS)
_PLAYED_CARD = card_fields(_PLAYED.card, CARDS)


@lru_cache(maxsize=8192)  # seats x cards x turns
def _played_field(seat: int, card: int, turn: int) -> bytes:
    payload = (
        (_PLAYED.seat + varint(seat) if seat else b"")
        + _PLAYED_CARD[card]
        + (_PLAYED.turn + varint(turn) if turn else b"")
    )
    return field(_BALLOON.table, payload)


@cache  # at most 51
def legal_field(action: int) -> bytes:
    return field(REQUEST.legal_actions, action_to_pb(action).SerializeToString())


def observation_bytes(obs: balloon.BalloonObservation) -> bytes:
    k = _BALLOON
    out: list[bytes] = []
    numbers(
        out,
        (
            (k.seat, obs.seat),
            (k.num_players, obs.num_players),
            (k.round, obs.round),
            (k.turn, obs.turn),
            (k.start_seat, obs.start_seat),
            (k.to_act, obs.to_act),
        ),
    )
    hand = _HAND
    out += [hand[c] for c in obs.hand]
    scalars(out, k.hand_sizes, obs.hand_sizes)
    face_up = _FACE_UP
    out += [face_up[c] for c in obs.face_up]
    out += [_played_field(p.seat, p.card, p.turn) for p in obs.table]
    scalars(out, k.dropped_out, obs.dropped_out)
    scalars(out, k.chips, obs.chips)
    if obs.chips_in_middle:
        out.append(k.chips_in_middle + varint(obs.chips_in_middle))
    if obs.first_drop_out_chip:
        out.append(k.first_drop_out_chip + TRUE)
    scalars(out, k.totals, obs.totals)
    return field(OBSERVATION.balloon, b"".join(out))
