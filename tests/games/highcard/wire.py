"""High card on the wire (server side): its messages built as protobuf objects, plainly (a
game need not write the wire format itself: arena/games/codec.py's GameCodec)."""

from __future__ import annotations

from arena.games.codec import REQUEST, WireError, field
from arena_sdk.proto import arena_pb2 as pb

from . import DECK, HighCardObservation, card_colour, card_value

CARDS = tuple(pb.Card(id=c, colour=card_colour(c), value=card_value(c)) for c in range(DECK))
ENCODED = ()  # nothing written in the wire format by hand


def action_to_pb(action: int) -> pb.Action:
    return pb.Action(highcard=pb.HighCardAction(play=CARDS[action]))


def action_from_pb(msg: pb.Action) -> int:
    if not msg.highcard.HasField("play"):
        raise WireError("a highcard action must name the card it plays")
    card = msg.highcard.play.id
    if card >= DECK:
        raise WireError(f"card id {card} is not in the deck (0..{DECK - 1})")
    return card


def observation_bytes(obs: HighCardObservation) -> bytes:
    msg = pb.HighCardObservation(
        seat=obs.seat,
        num_players=obs.num_players,
        round=obs.round,
        to_act=obs.to_act,
        hand=[CARDS[c] for c in obs.hand],
        played=obs.played,
        scores=obs.scores,
    )
    return pb.Observation(highcard=msg).SerializeToString()


def legal_field(action: int) -> bytes:
    return field(REQUEST.legal_actions, action_to_pb(action).SerializeToString())
