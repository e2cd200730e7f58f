"""Protobuf <-> arena_sdk.types: the only module of the SDK that touches generated classes.

Incoming messages become the frozen dataclasses a bot sees; the bot's actions become protobuf
on the way out. Every function is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields
from types import MappingProxyType
from typing import Any, TypeVar

from .proto import arena_pb2 as pb
from .types import (
    Action,
    BalloonAction,
    BalloonObservation,
    BoomAction,
    BoomObservation,
    Card,
    Limits,
    Match,
    MatchResult,
    Observation,
    ParadiseCard,
    Played,
    Rejection,
    Revealed,
)

PROTOCOL_VERSION = 1

_Record = TypeVar("_Record")

# The variant options each game reads from GameOptions (the others are meaningless for it).
GAME_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "balloon": (),
    "boom": ("advanced", "ruse", "series"),
}

_FAULT_PREFIX = "FAULT_"


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


def _cards(msgs: Iterable[pb.Card]) -> tuple[Card, ...]:
    return tuple(map(card, msgs))


def card_to_proto(c: Card) -> pb.Card:
    return pb.Card(id=c.id, colour=c.colour, value=c.value)


# An observation's message has a field of the same name for each of the dataclass's. Its plan
# reads them in order: those that hold cards through their conversion, the other repeated ones
# (the dataclass's tuples) as tuples, the rest as they are.
_Plan = tuple[tuple[str, Callable[[Any], Any] | None], ...]


def _plan(record: type, card_fields: Mapping[str, Callable[[Any], Any]]) -> _Plan:
    return tuple(
        (f.name, card_fields.get(f.name, tuple if str(f.type).startswith("tuple[") else None))
        for f in fields(record)
    )


def _read(record: type[_Record], plan: _Plan, msg: Any) -> _Record:
    values = []
    for name, convert in plan:
        value = getattr(msg, name)
        values.append(value if convert is None else convert(value))
    return record(*values)


_BALLOON_PLAN = _plan(
    BalloonObservation,
    {
        "hand": _cards,
        "face_up": _cards,
        "table": lambda table: tuple(Played(p.seat, card(p.card), p.turn) for p in table),
    },
)
_BOOM_PLAN = _plan(
    BoomObservation,
    {
        "hand": _cards,
        "revealed": lambda revealed: tuple(Revealed(_cards(r.cards), r.ruse) for r in revealed),
        "paradise": lambda paradise: tuple(
            tuple(ParadiseCard(card(pc.card), pc.face_up) for pc in p.cards) for p in paradise
        ),
        "discarded": _cards,
    },
)


def balloon_observation(msg: pb.BalloonObservation) -> BalloonObservation:
    return _read(BalloonObservation, _BALLOON_PLAN, msg)


def boom_observation(msg: pb.BoomObservation) -> BoomObservation:
    return _read(BoomObservation, _BOOM_PLAN, msg)


def observation(msg: pb.Observation) -> Observation | None:
    """The observation inside `msg`, or None if it holds none."""
    which = msg.WhichOneof("game")
    if which == "balloon":
        return balloon_observation(msg.balloon)
    if which == "boom":
        return boom_observation(msg.boom)
    return None


_DROP_OUT = BalloonAction(drop_out=True)
# As cards: actions are immutable, and a Balloon move is one of a few dozen.
_balloon_plays: dict[Card, BalloonAction] = {}


def action(msg: pb.Action) -> Action | None:
    """The action inside `msg`, or None if it holds none."""
    which = msg.WhichOneof("game")
    if which == "balloon":
        if msg.balloon.WhichOneof("kind") == "play":
            c = card(msg.balloon.play)
            a = _balloon_plays.get(c)
            if a is None:
                if len(_balloon_plays) >= 4096:
                    _balloon_plays.clear()
                a = _balloon_plays[c] = BalloonAction(play=c)
            return a
        return _DROP_OUT
    if which == "boom":
        return BoomAction(_cards(msg.boom.cards), msg.boom.ruse)
    return None


def action_to_proto(a: Action) -> pb.Action:
    """Raises TypeError for anything but a BalloonAction or a BoomAction."""
    if isinstance(a, BalloonAction):
        if a.drop_out:
            return pb.Action(balloon=pb.BalloonAction(drop_out=True))
        assert a.play is not None  # BalloonAction guarantees one of the two
        return pb.Action(balloon=pb.BalloonAction(play=card_to_proto(a.play)))
    if isinstance(a, BoomAction):
        return pb.Action(boom=pb.BoomAction(cards=[card_to_proto(c) for c in a.cards], ruse=a.ruse))
    raise TypeError(
        f"act() must return a BalloonAction or a BoomAction (one of legal_actions), "
        f"not {type(a).__name__}: {a!r}"
    )


def legal_actions(msgs: Iterable[pb.Action]) -> tuple[Action, ...]:
    return tuple(a for a in (action(m) for m in msgs) if a is not None)


def match(msg: pb.MatchStart) -> Match:
    names = GAME_OPTIONS.get(msg.game, ())
    return Match(
        match_id=msg.match_id,
        game=msg.game,
        num_players=msg.options.num_players,
        options=MappingProxyType({name: getattr(msg.options, name) for name in names}),
        seat=msg.seat,
        seat_names=tuple(msg.seat_names),
        limits=Limits(msg.limits.move_ms, msg.limits.time_bank_ms, msg.limits.max_strikes),
        bot_seed=msg.bot_seed,
    )


def stand_in_match(msg: pb.ActionRequest) -> Match:
    """A Match for a request whose MatchStart this connection never saw (the referee should not
    do that); built from what the request says, with bot_seed 0."""
    obs = observation(msg.observation)
    game = msg.observation.WhichOneof("game") or ""
    num_players = obs.num_players if obs is not None else 0
    return Match(
        match_id=msg.match_id,
        game=game,
        num_players=num_players,
        options=MappingProxyType({}),
        seat=obs.seat if obs is not None else -1,
        seat_names=tuple("" for _ in range(num_players)),
        limits=Limits(msg.move_ms, msg.time_bank_ms, 0),
        bot_seed=0,
    )


def result(msg: pb.MatchEnd) -> MatchResult:
    return MatchResult(
        scores=tuple(msg.scores),
        ranks=tuple(msg.ranks),
        reason=msg.reason,
        final_observation=observation(msg.final_observation),
    )


def fault_name(value: int) -> str:
    """FAULT_ILLEGAL_ACTION -> "illegal_action" (the names arena.results uses)."""
    try:
        name = pb.Fault.Name(value)
    except ValueError:
        return f"fault_{value}"  # a fault kind newer than this SDK
    return name.removeprefix(_FAULT_PREFIX).lower()


def rejection(msg: pb.Rejected) -> Rejection:
    return Rejection(
        request_id=msg.request_id,
        fault=fault_name(msg.fault),
        detail=msg.detail,
        played_instead=action(msg.played_instead) if msg.HasField("played_instead") else None,
    )


def hello(token: str, name: str, max_concurrent: int) -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(
            token=token,
            name=name,
            protocol_version=PROTOCOL_VERSION,
            max_concurrent=max_concurrent,
            batches=True,
        )
    )


def reply(match_id: str, request_id: int, a: pb.Action | None) -> pb.ActionReply:
    """An ActionReply; `a` None leaves the action empty (the bot has none to give)."""
    msg = pb.ActionReply(match_id=match_id, request_id=request_id)
    if a is not None:
        msg.action.CopyFrom(a)
    return msg


def replies(ready: list[pb.ActionReply]) -> pb.BotMessage:
    """The message carrying the replies ready to go: one alone, several as ActionReplies."""
    if len(ready) == 1:
        return pb.BotMessage(action=ready[0])
    return pb.BotMessage(action_replies=pb.ActionReplies(replies=ready))
