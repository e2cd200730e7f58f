"""High card in the SDK (an arena_sdk.games module, registered by the bot that plays it and by
the tests: `arena_sdk.games.register`): what a bot sees and says, their translation, and the
game's numbers for learning bots.

Arrays: [0, 10) own hand, [10, 20) cards on the table this round, 20 round / 2, then per seat k
places after the observer: 21 + 2k score / 2, 22 + 2k to act (0/1). Actions 0..9: a card id."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena_sdk._common import card_id, card_ids, card_to_proto, cards
from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.types import Card

NAME = "highcard"
TITLE = "High card"
OPTIONS: tuple[str, ...] = ()
MARK = "played"
DECK = 10


@dataclass(frozen=True, slots=True)
class HighCardObservation:
    seat: int
    num_players: int
    round: int
    to_act: int
    hand: tuple[Card, ...]
    played: tuple[int, ...]  # card ids, -1: none yet
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HighCardAction:
    play: Card

    def __str__(self) -> str:
        return f"play {self.play}"


OBSERVATION = HighCardObservation
ACTION = HighCardAction


def observation(msg: pb.Observation) -> HighCardObservation:
    o = msg.highcard
    return HighCardObservation(
        o.seat, o.num_players, o.round, o.to_act, cards(o.hand), tuple(o.played), tuple(o.scores)
    )


def action(msg: pb.Action) -> HighCardAction:
    return HighCardAction(cards([msg.highcard.play])[0])


def action_to_proto(a: HighCardAction) -> pb.Action:
    return pb.Action(highcard=pb.HighCardAction(play=card_to_proto(a.play)))


ACTIONS = DECK


def observation_size(num_players: int) -> int:
    return 21 + 2 * num_players


def action_key(a: HighCardAction) -> int:
    return a.play.id


def action_index(key: Any, shown: Any) -> int:
    if key.__class__ is not int or not 0 <= key < DECK:
        raise ValueError(f"{shown!r} is not a high card action (card ids 0..{DECK - 1})")
    return key


def index_action(index: int) -> int:
    return index


def legal_indices(legal_actions: Iterable[Any], key_of) -> list[int]:
    return [action_index(key_of(a), a) for a in legal_actions]


def legal_mask(legal_actions: Sequence[Any], mask) -> bool:
    return False  # numbered one by one (legal_indices)


def encode(obs: Any, np) -> Any:
    n = obs.num_players
    me = obs.seat if obs.seat >= 0 else 0
    out = np.zeros(observation_size(n), np.float32)
    out[card_ids(obs.hand)] = 1
    out[[10 + card_id(c) for c in obs.played if c >= 0]] = 1
    out[20] = obs.round / 2
    for k in range(n):
        s = (me + k) % n
        out[21 + 2 * k] = obs.scores[s] / 2
        out[22 + 2 * k] = 1.0 if obs.to_act == s else 0.0
    return out
