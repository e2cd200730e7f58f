"""Balloon Challenge in the SDK: what a bot sees and says (Played, BalloonObservation,
BalloonAction), their translation from and to the protocol's messages, and the game's numbers
for learning bots (arena_sdk.features: the layout is in its docstring). See arena_sdk.games."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._common import card, card_id, card_ids, card_to_proto, cards, plan, read
from ..proto import arena_pb2 as pb
from ..types import Card

NAME = "balloon"
TITLE = "Balloon Challenge"
OPTIONS: tuple[str, ...] = ()
MARK = "first_drop_out_chip"


@dataclass(frozen=True, slots=True)
class Played:
    """A card on the Balloon Challenge table: who played it, in which turn (row, 1-based)."""

    seat: int
    card: Card
    turn: int


@dataclass(frozen=True, slots=True)
class BalloonObservation:
    """What one seat may see in Balloon Challenge (seat == -1: a spectator, with an empty hand)."""

    seat: int
    num_players: int
    round: int  # 1..5
    turn: int  # the row being played, 1-based
    start_seat: int
    to_act: int  # seat to act now, -1 when the match is over
    hand: tuple[Card, ...]  # own cards, sorted
    hand_sizes: tuple[int, ...]
    face_up: tuple[Card, ...]  # the two-player start of the balloon
    table: tuple[Played, ...]  # cards played this round, in order
    dropped_out: tuple[int, ...]  # turn in which each seat dropped out this round, 0 = still in
    chips: tuple[int, ...]  # chips each seat holds this round
    chips_in_middle: int
    first_drop_out_chip: bool  # the set-aside chip is still there
    totals: tuple[int, ...]  # scores of the finished rounds


@dataclass(frozen=True, slots=True)
class BalloonAction:
    """A Balloon Challenge move: play one card from the hand, or drop out of the round.

    `BalloonAction(play=card)` or `BalloonAction(drop_out=True)`; exactly one of the two.
    """

    play: Card | None = None
    drop_out: bool = False

    def __post_init__(self) -> None:
        if (self.play is None) == (not self.drop_out):
            raise ValueError(
                "a BalloonAction either plays a card or drops out: give play=card or "
                f"drop_out=True, not play={self.play!r}, drop_out={self.drop_out!r}"
            )

    def __str__(self) -> str:
        return "drop out" if self.drop_out else f"play {self.play}"


OBSERVATION = BalloonObservation
ACTION = BalloonAction

# ------------------------------------------------------------------------------ the wire

_PLAN = plan(
    BalloonObservation,
    {
        "hand": cards,
        "face_up": cards,
        "table": lambda table: tuple(Played(p.seat, card(p.card), p.turn) for p in table),
    },
)


def observation(msg: pb.Observation) -> BalloonObservation:
    return read(BalloonObservation, _PLAN, msg.balloon)


_DROP_OUT = BalloonAction(drop_out=True)
# As cards: actions are immutable, and a Balloon move is one of a few dozen.
_plays: dict[Card, BalloonAction] = {}


def action(msg: pb.Action) -> BalloonAction:
    if msg.balloon.WhichOneof("kind") == "play":
        c = card(msg.balloon.play)
        a = _plays.get(c)
        if a is None:
            if len(_plays) >= 4096:
                _plays.clear()
            a = _plays[c] = BalloonAction(play=c)
        return a
    return _DROP_OUT


def action_to_proto(a: BalloonAction) -> pb.Action:
    if a.drop_out:
        return pb.Action(balloon=pb.BalloonAction(drop_out=True))
    assert a.play is not None  # BalloonAction guarantees one of the two
    return pb.Action(balloon=pb.BalloonAction(play=card_to_proto(a.play)))


# ------------------------------------------------------------------------------ features

CARDS = 50
DROP_OUT = 50
ACTIONS = 51
_HEAD = 162
_SEAT = 6


def observation_size(num_players: int) -> int:
    return _HEAD + _SEAT * num_players


def action_key(a: BalloonAction) -> int:
    """The engine's action: a card id, or DROP_OUT."""
    assert a.play is not None or a.drop_out
    return DROP_OUT if a.drop_out else a.play.id  # type: ignore[union-attr]


def action_index(key: Any, shown: Any) -> int:
    if key.__class__ is not int or not 0 <= key <= DROP_OUT:
        raise ValueError(f"{shown!r} is not a Balloon Challenge action (card ids 0..49, 50)")
    return key


def index_action(index: int) -> int:
    return index


def legal_indices(legal_actions: Iterable[Any], key_of) -> list[int]:
    return [action_index(key_of(a), a) for a in legal_actions]


def legal_mask(legal_actions: Sequence[Any], mask) -> bool:
    """Set `mask` at once where it can (engine actions are their numbers); False if it cannot."""
    if legal_actions[0].__class__ is int:
        mask[list(legal_actions)] = 1
        return True
    return False


def encode(obs: Any, np) -> Any:
    n = obs.num_players
    me = obs.seat if obs.seat >= 0 else 0
    hand = card_ids(obs.hand)
    face_up = card_ids(obs.face_up)
    table = [card_id(p.card) for p in obs.table]
    # every value set at once: indices and values gathered here, one numpy call at the end
    at = [*hand, *[50 + c for c in face_up], *[100 + c for c in table]]
    values = [1.0] * len(at)
    colours = [0] * 6
    for c in face_up + table:
        colours[c >> 3 if c < 40 else 5] += 1
    volume = sum((c & 7) if c < 40 else c - 40 for c in hand)
    at += range(150, _HEAD + _SEAT * n)
    values += (
        *(k / 8 for k in colours),
        obs.round / 5,
        obs.turn / 12,
        (len(face_up) + len(table)) / 50,
        volume / 50,
        obs.chips_in_middle / 12,
        1.0 if obs.first_drop_out_chip else 0.0,
    )
    sizes, dropped, chips, totals = obs.hand_sizes, obs.dropped_out, obs.chips, obs.totals
    to_act, start = obs.to_act, obs.start_seat
    for k in range(n):
        s = (me + k) % n
        values += (
            sizes[s] / 10,
            1.0 if dropped[s] else 0.0,
            chips[s] / 12,
            totals[s] / 100,
            1.0 if to_act == s else 0.0,
            1.0 if start == s else 0.0,
        )
    out = np.zeros(_HEAD + _SEAT * n, np.float32)
    out[at] = values
    return out
