"""Translation between the rules engines' values and the protocol's messages (server side).

This is the only server module that builds or reads protobuf observations and actions. Engines
speak card ids and small ints/tuples; the wire speaks typed messages (see proto/arena/v1).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from arena.games import balloon, boom
from arena.games.base import Action, Game
from arena_sdk.proto import arena_pb2 as pb


class WireError(ValueError):
    """A message from a bot that does not translate into an action of its game."""


# Card messages are immutable once built and cards are few, so build each once.
_BALLOON_CARDS = tuple(pb.Card(id=i, colour=c.colour, value=c.value)
                       for i, c in enumerate(balloon.CARDS))
_BOOM_CARDS = tuple(pb.Card(id=i, colour=boom.COLOURS[i // 10], value=boom.VALUES[i % 10])
                    for i in range(50))


# ---------------------------------------------------------------- actions

@lru_cache(maxsize=None)  # at most 51 distinct actions
def balloon_action_to_pb(action: int) -> pb.Action:
    if action == balloon.DROP_OUT:
        return pb.Action(balloon=pb.BalloonAction(drop_out=True))
    return pb.Action(balloon=pb.BalloonAction(play=_BALLOON_CARDS[action]))


@lru_cache(maxsize=4096)  # every pair and single of 51 cards fits
def boom_action_to_pb(action: tuple[int, ...]) -> pb.Action:
    cards = [_BOOM_CARDS[c] for c in action if c != boom.RUSE]
    return pb.Action(boom=pb.BoomAction(cards=cards, ruse=boom.RUSE in action))


def action_to_pb(game_name: str, action: Action) -> pb.Action:
    return _ACTION_TO_PB[game_name](action)


def action_from_pb(game_name: str, msg: pb.Action) -> Action:
    """The engine action a reply names. Raises WireError when it is not an action of the game
    (legality is the engine's business, not this module's)."""
    which = msg.WhichOneof("game")
    if which != game_name:
        raise WireError(f"expected a {game_name} action, got {which or 'an empty action'}")
    if game_name == "balloon":
        kind = msg.balloon.WhichOneof("kind")
        if kind == "drop_out":
            if not msg.balloon.drop_out:
                raise WireError("drop_out must be true when set")
            return balloon.DROP_OUT
        if kind == "play":
            return _card_id(msg.balloon.play, len(balloon.CARDS))
        raise WireError("a balloon action must set play or drop_out")
    ids = [_card_id(c, 50) for c in msg.boom.cards]
    if msg.boom.ruse:
        ids.append(boom.RUSE)
    return tuple(sorted(ids))


def _card_id(card: pb.Card, deck_size: int) -> int:
    if card.id >= deck_size:
        raise WireError(f"card id {card.id} is not in the deck (0..{deck_size - 1})")
    return card.id


_ACTION_TO_PB = {"balloon": balloon_action_to_pb, "boom": boom_action_to_pb}


# ---------------------------------------------------------------- observations

def _balloon_cards(ids) -> list[pb.Card]:
    return [_BALLOON_CARDS[i] for i in ids]


def _boom_cards(ids) -> list[pb.Card]:
    return [_BOOM_CARDS[i] for i in ids if i != boom.RUSE]


@lru_cache(maxsize=8192)  # seats x cards x turns: a few thousand at most
def _balloon_played(seat: int, card: int, turn: int) -> pb.BalloonPlayed:
    return pb.BalloonPlayed(seat=seat, card=_BALLOON_CARDS[card], turn=turn)


def fill_balloon_observation(obs: "balloon.BalloonObservation", target: pb.Observation) -> None:
    b = target.balloon
    b.seat, b.num_players, b.round, b.turn = obs.seat, obs.num_players, obs.round, obs.turn
    b.start_seat, b.to_act = obs.start_seat, obs.to_act
    b.hand.extend(_balloon_cards(obs.hand))
    b.hand_sizes.extend(obs.hand_sizes)
    b.face_up.extend(_balloon_cards(obs.face_up))
    b.table.extend([_balloon_played(p.seat, p.card, p.turn) for p in obs.table])
    b.dropped_out.extend(obs.dropped_out)
    b.chips.extend(obs.chips)
    b.chips_in_middle = obs.chips_in_middle
    b.first_drop_out_chip = obs.first_drop_out_chip
    b.totals.extend(obs.totals)


def fill_boom_observation(obs: "boom.BoomObservation", target: pb.Observation) -> None:
    b = target.boom
    b.seat, b.num_players, b.game_number, b.round = (obs.seat, obs.num_players,
                                                     obs.game_number, obs.round)
    b.step, b.guard, b.guards_left, b.to_play = obs.step, obs.guard, obs.guards_left, obs.to_play
    b.guard_limits.extend(obs.guard_limits)
    b.guards_used.extend(obs.guards_used)
    b.hand.extend(_boom_cards(obs.hand))
    b.has_ruse = obs.has_ruse
    b.hand_sizes.extend(obs.hand_sizes)
    b.acted.extend(obs.acted)
    b.revealed.extend([pb.BoomRevealed(cards=_boom_cards(r), ruse=boom.RUSE in r)
                       for r in obs.revealed])
    b.paradise.extend([pb.BoomParadise(cards=[pb.BoomParadiseCard(card=_BOOM_CARDS[p.card],
                                                                  face_up=p.face_up)
                                              for p in pile])
                       for pile in obs.paradise])
    b.discarded.extend(_boom_cards(obs.discarded))
    b.scores.extend(obs.scores)
    b.series_totals.extend(obs.series_totals)


def fill_observation(game_name: str, obs: Any, target: pb.Observation) -> None:
    """Write an engine observation into an (empty) Observation message in place: building the
    request message where it will be sent saves the copies nested constructors make."""
    _FILL[game_name](obs, target)


def observation_to_pb(game_name: str, obs: Any) -> pb.Observation:
    msg = pb.Observation()
    _FILL[game_name](obs, msg)
    return msg


_FILL = {"balloon": fill_balloon_observation, "boom": fill_boom_observation}


def action_request(game_name: str, match_id: str, obs: Any, legal, move_ms: int,
                   time_bank_ms: int) -> pb.RefereeMessage:
    """The RefereeMessage asking a seat to act (its request_id is set when it is sent)."""
    msg = pb.RefereeMessage()
    req = msg.action_request
    req.match_id, req.move_ms, req.time_bank_ms = match_id, move_ms, time_bank_ms
    _FILL[game_name](obs, req.observation)
    to_pb = _ACTION_TO_PB[game_name]
    req.legal_actions.extend([to_pb(a) for a in legal])
    return msg


# ---------------------------------------------------------------- match messages

def options_to_pb(game: Game) -> pb.GameOptions:
    return pb.GameOptions(num_players=game.num_players, **{
        k: bool(v) for k, v in game.options.items() if k in ("advanced", "ruse", "series")})


def limits_to_pb(limits) -> pb.Limits:
    return pb.Limits(move_ms=limits.move_ms, time_bank_ms=limits.time_bank_ms,
                     max_strikes=limits.max_strikes)


def event_to_pb(match_id: str, index: int, event, game_name: str,
                public_obs: Any = None, final: bool = False) -> pb.MatchEvent:
    data = {k: _text(v) for k, v in (event.data or {}).items()}
    msg = pb.MatchEvent(match_id=match_id, index=index, kind=event.kind, seat=event.seat,
                        data=data, final=final)
    if public_obs is not None:
        msg.public_observation.CopyFrom(observation_to_pb(game_name, public_obs))
    return msg


def _text(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return " ".join(_text(v) for v in value)
    return str(value)
