"""Protobuf <-> arena_sdk.types: the only module of the SDK that touches generated classes.

Incoming messages become the frozen dataclasses a bot sees; the bot's actions become protobuf
on the way out. Every function is pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from . import games
from ._common import card, card_to_proto  # noqa: F401 - part of this module's interface
from .proto import arena_pb2 as pb
from .types import Action, Limits, Match, MatchResult, Observation, Rejection

PROTOCOL_VERSION = 1

_FAULT_PREFIX = "FAULT_"


def game_options(game: str) -> tuple[str, ...]:
    """The variant options `game` reads from GameOptions (the others are meaningless for it)."""
    module = games.get(game)
    return module.OPTIONS if module is not None else ()


def observation(msg: pb.Observation) -> Observation | None:
    """The observation inside `msg`, or None if it holds none (or one of a game the SDK does not
    know)."""
    which = msg.WhichOneof("game")
    module = games.get(which) if which else None
    return module.observation(msg) if module is not None else None


def action(msg: pb.Action) -> Action | None:
    """The action inside `msg`, or None if it holds none (or one of a game the SDK does not
    know)."""
    which = msg.WhichOneof("game")
    module = games.get(which) if which else None
    return module.action(msg) if module is not None else None


def action_to_proto(a: Action) -> pb.Action:
    """Raises TypeError for anything but an action of a game the SDK knows."""
    for module in games.all_games():
        if isinstance(a, module.ACTION):
            return module.action_to_proto(a)
    kinds = " or a ".join(m.ACTION.__name__ for m in games.all_games())
    raise TypeError(
        f"act() must return a {kinds} (one of legal_actions), not {type(a).__name__}: {a!r}"
    )


def legal_actions(msgs: Iterable[pb.Action]) -> tuple[Action, ...]:
    return tuple(a for a in (action(m) for m in msgs) if a is not None)


def match(msg: pb.MatchStart) -> Match:
    names = game_options(msg.game)
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
