"""Boom: Runaway in the SDK: what a bot sees and says (Revealed, ParadiseCard, BoomObservation,
BoomAction), their translation from and to the protocol's messages, and the game's numbers for
learning bots (arena_sdk.features: the layout is in its docstring). See arena_sdk.games."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from .._common import card, card_id, card_ids, card_to_proto, cards, plan, read
from ..proto import arena_pb2 as pb
from ..types import Card

NAME = "boom"
TITLE = "Boom: Runaway"
OPTIONS: tuple[str, ...] = ("advanced", "ruse", "series")
MARK = "guard"


@dataclass(frozen=True, slots=True)
class Revealed:
    """The cards one seat has revealed in the current Boom round; `ruse`: its ruse card too."""

    cards: tuple[Card, ...]
    ruse: bool


@dataclass(frozen=True, slots=True)
class ParadiseCard:
    """A card in a seat's Boom paradise; a face-down one shows only to its owner."""

    card: Card
    face_up: bool


@dataclass(frozen=True, slots=True)
class BoomObservation:
    """What one seat may see in Boom: Runaway (seat == -1: a spectator, with an empty hand)."""

    seat: int
    num_players: int
    game_number: int  # 1-based; above 1 only in longer play (a series)
    round: int  # 1-based within the game
    step: int  # 1 = first escape, 2 = second escape, 0 = match over
    guard: int  # index of the revealed guard card
    guard_limits: tuple[int, ...]  # per colour
    guards_left: int  # guard cards left in the deck before a reshuffle
    guards_used: tuple[int, ...]  # guard cards revealed since the last shuffle, current one last
    to_play: int  # how many cards this seat plays in this step (0: none now)
    hand: tuple[Card, ...]  # own bomb cards, sorted
    has_ruse: bool  # own ruse card in hand
    hand_sizes: tuple[int, ...]  # bomb cards in each seat's hand
    acted: tuple[bool, ...]  # who has already chosen in this step
    revealed: tuple[Revealed, ...]  # per seat, this round
    paradise: tuple[tuple[ParadiseCard, ...], ...]  # per seat
    discarded: tuple[Card, ...]  # cards discarded face up (advanced game)
    scores: tuple[int, ...]  # this game's scores so far
    series_totals: tuple[int, ...]  # totals of the finished games of the series


@dataclass(frozen=True, slots=True)
class BoomAction:
    """A Boom step: the bomb cards played (kept sorted by id, so an action built by hand equals
    the legal one with the same cards) and whether the seat's own ruse card is among them."""

    cards: tuple[Card, ...] = ()
    ruse: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "cards", tuple(sorted(self.cards)))

    def __str__(self) -> str:
        parts = [str(card) for card in self.cards] + (["ruse"] if self.ruse else [])
        return "play " + (", ".join(parts) if parts else "nothing")


OBSERVATION = BoomObservation
ACTION = BoomAction

# ------------------------------------------------------------------------------ the wire

_PLAN = plan(
    BoomObservation,
    {
        "hand": cards,
        "revealed": lambda revealed: tuple(Revealed(cards(r.cards), r.ruse) for r in revealed),
        "paradise": lambda paradise: tuple(
            tuple(ParadiseCard(card(pc.card), pc.face_up) for pc in p.cards) for p in paradise
        ),
        "discarded": cards,
    },
)


def observation(msg: pb.Observation) -> BoomObservation:
    return read(BoomObservation, _PLAN, msg.boom)


def action(msg: pb.Action) -> BoomAction:
    return BoomAction(cards(msg.boom.cards), msg.boom.ruse)


def action_to_proto(a: BoomAction) -> pb.Action:
    return pb.Action(boom=pb.BoomAction(cards=[card_to_proto(c) for c in a.cards], ruse=a.ruse))


# ------------------------------------------------------------------------------ features

CARDS = 50
RUSE = 50
GUARDS = 8
_IDS = CARDS + 1  # bomb cards and the ruse card
_PAIRS_AT = 1 + _IDS
ACTIONS = _PAIRS_AT + _IDS * (_IDS - 1) // 2  # 1327
_HEAD = 129
_SEAT = 105

# The first pair number of each first card a: pairs (a, b), a < b, counted in order.
PAIR_START = tuple(_PAIRS_AT + a * _IDS - a * (a + 1) // 2 for a in range(_IDS))
_INDEX_PAIR = tuple((a, b) for a in range(_IDS) for b in range(a + 1, _IDS))


def observation_size(num_players: int) -> int:
    return _HEAD + _SEAT * num_players


def action_key(a: BoomAction) -> tuple[int, ...]:
    """The engine's action: a sorted tuple of card ids, RUSE for the ruse card."""
    ids = [c.id for c in a.cards]
    if a.ruse:
        ids.append(RUSE)
    return tuple(sorted(ids))


def action_index(key: Any, shown: Any) -> int:
    if isinstance(key, int):
        key = (key,)
    if not all(0 <= c <= RUSE for c in key) or list(key) != sorted(set(key)):
        raise ValueError(f"{shown!r} is not a Boom action (sorted distinct card ids 0..50)")
    if len(key) == 0:
        return 0
    if len(key) == 1:
        return 1 + key[0]
    if len(key) == 2:
        a, b = key
        return PAIR_START[a] + b - a - 1
    raise ValueError(f"{shown!r} plays {len(key)} cards; a Boom step plays at most 2")


def index_action(index: int) -> tuple[int, ...]:
    if index == 0:
        return ()
    if index < _PAIRS_AT:
        return (index - 1,)
    return _INDEX_PAIR[index - _PAIRS_AT]


def legal_indices(legal_actions: Iterable[Any], key_of) -> list[int]:
    start = PAIR_START
    out = []
    for a in legal_actions:
        key = key_of(a)
        if isinstance(key, int):  # a Boom action of one card given as its id
            key = (key,)
        n = len(key)
        out.append(
            start[key[0]] + key[1] - key[0] - 1
            if n == 2
            else 1 + key[0]
            if n == 1
            else action_index(key, a)
        )
    return out


_pair_start_array: list = []


def legal_mask(legal_actions: Sequence[Any], mask) -> bool:
    """Set `mask` at once where it can (engine actions of one step all play the same number of
    cards: numbered at once); False if it cannot."""
    import numpy as np

    first = legal_actions[0]
    if first.__class__ is not tuple or not 1 <= len(first) <= 2:
        return False
    ids = np.fromiter(chain.from_iterable(legal_actions), np.intp)
    if len(first) == 1:
        mask[ids + 1] = 1
    else:
        if not _pair_start_array:  # a constant, built on first use (numpy is optional)
            _pair_start_array.append(np.array(PAIR_START, np.intp))
        a, b = ids[0::2], ids[1::2]
        mask[_pair_start_array[0][a] + b - a - 1] = 1
    return True


def _revealed_ids(revealed: Any) -> Sequence[int]:
    if revealed.__class__ is tuple:  # the engine's: card ids, RUSE among them
        return revealed
    ids = [c.id for c in revealed.cards]
    if revealed.ruse:
        ids.append(RUSE)
    return ids


def encode(obs: Any, np) -> Any:
    n = obs.num_players
    me = obs.seat if obs.seat >= 0 else 0
    out = np.zeros(_HEAD + _SEAT * n, np.float32)
    # every value set at once: (index, value) pairs gathered here, one numpy call at the end
    at = [c for c in card_ids(obs.hand) if c < CARDS]
    if obs.has_ruse:
        at.append(50)
    at += (52 + min(obs.step, 2), 55 + obs.guard, *(68 + g for g in obs.guards_used))
    at += [79 + c for c in card_ids(obs.discarded) if c < CARDS]
    values = [1.0] * len(at)
    at += (51, 63, 64, 65, 66, 67, 76, 77, 78)
    values += (
        obs.to_play / 2,
        *(limit / 16 for limit in obs.guard_limits),
        obs.guards_left / 8,
        obs.round / 20,
        obs.game_number / 10,
    )
    totals = obs.series_totals
    for k in range(n):
        s = (me + k) % n
        base = _HEAD + _SEAT * k
        revealed = _revealed_ids(obs.revealed[s])
        at += [base + c for c in revealed]
        values += [1.0] * len(revealed)
        for p in obs.paradise[s]:
            at.append(base + 51 + card_id(p.card))
            values.append(1.0 if p.face_up else 0.5)
        at += (base + 101, base + 102, base + 103, base + 104)
        values += (
            obs.hand_sizes[s] / 16,
            1.0 if obs.acted[s] else 0.0,
            obs.scores[s] / 100,
            totals[s] / 200 if totals else 0.0,
        )
    out[at] = values
    return out
