"""The types a bot sees and their translation from and to protobuf."""

import dataclasses
import random
from pathlib import Path

import pytest
from sdk_fake_referee import MATCHES, balloon_request, boom_request, pb

from arena.games import balloon as balloon_engine
from arena.games import boom as boom_engine
from arena_sdk import (
    BalloonAction,
    BalloonObservation,
    BoomAction,
    BoomObservation,
    Card,
    Settings,
    settings_from,
    wire,
)

RED_3 = Card(3, "red", 3)
BLUE_1 = Card(11, "blue", 1)


def field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def test_observations_mirror_the_engines_field_names_and_order() -> None:
    assert field_names(BalloonObservation) == field_names(balloon_engine.BalloonObservation)
    assert field_names(BoomObservation) == field_names(boom_engine.BoomObservation)


def test_balloon_action_plays_a_card_or_drops_out() -> None:
    assert str(BalloonAction(play=RED_3)) == "play red 3"
    assert str(BalloonAction(drop_out=True)) == "drop out"
    with pytest.raises(ValueError, match="either plays a card or drops out"):
        BalloonAction()
    with pytest.raises(ValueError):
        BalloonAction(play=RED_3, drop_out=True)


def test_boom_action_built_in_any_order_equals_the_sorted_legal_one() -> None:
    by_hand = BoomAction((BLUE_1, RED_3), ruse=True)
    assert by_hand == BoomAction((RED_3, BLUE_1), ruse=True)
    assert by_hand.cards == (RED_3, BLUE_1)
    assert hash(by_hand) == hash(BoomAction([BLUE_1, RED_3], ruse=True))
    assert str(by_hand) == "play red 3, blue 1, ruse"
    assert str(BoomAction()) == "play nothing"


@pytest.mark.parametrize("request_of", [balloon_request, boom_request])
def test_legal_actions_survive_a_round_trip_through_protobuf(request_of) -> None:
    for k in range(10):
        req = request_of("m", 1, k)
        legal = wire.legal_actions(req.legal_actions)
        assert len(legal) == len(req.legal_actions) == len(set(legal))
        assert [wire.action_to_proto(a) for a in legal] == list(req.legal_actions)


def test_observations_carry_cards_with_colour_and_value() -> None:
    obs = wire.observation(balloon_request("m", 1, 2).observation)
    assert isinstance(obs, BalloonObservation)
    assert obs.hand[0] == Card(6, "red", 6) and obs.table[0].card == Card(47, "black", 7)
    assert (obs.seat, obs.num_players, obs.to_act, obs.totals) == (1, 3, 1, (3, 2, 7))
    boom = wire.observation(boom_request("m", 1, 1).observation)
    assert isinstance(boom, BoomObservation)
    assert boom.acted == (False, True, False) and boom.paradise[1] == ()
    assert wire.observation(pb.Observation()) is None


def test_match_rng_replays_from_bot_seed() -> None:
    a, b = wire.match(MATCHES[1]), wire.match(MATCHES[1])
    assert [a.rng.random() for _ in range(5)] == [b.rng.random() for _ in range(5)]
    assert wire.match(MATCHES[0]).rng.random() == random.Random(12345).random()


def test_fault_names_are_the_results_kinds() -> None:
    assert wire.fault_name(pb.FAULT_ILLEGAL_ACTION) == "illegal_action"
    assert wire.fault_name(pb.FAULT_UNKNOWN_REQUEST) == "unknown_request"
    assert wire.fault_name(99) == "fault_99"


def test_action_to_proto_rejects_what_is_not_an_action() -> None:
    with pytest.raises(TypeError, match="must return a BalloonAction or a BoomAction"):
        wire.action_to_proto(3)


def test_settings_come_from_arguments_then_command_line_then_environment(tmp_path: Path) -> None:
    env = {"ARENA_ADDRESS": "env:1", "ARENA_TOKEN": "env-token"}
    assert settings_from(argv=[], environ=env) == Settings("env:1", "env-token", None)
    assert settings_from(argv=["--address", "cli:2", "--tls-ca", "ca.pem"], environ=env) == (
        Settings("cli:2", "env-token", "ca.pem")
    )
    assert settings_from("arg:3", argv=["--address", "cli:2"], environ=env).address == "arg:3"
    with pytest.raises(SystemExit) as usage:
        settings_from(argv=[], environ={"ARENA_ADDRESS": "env:1"})
    assert usage.value.code == 2
    # a token may start with "-" (URL-safe tokens issued before the "arena_" prefix)
    assert settings_from(argv=["--address", "cli:2", "--token", "-Ab_9"], environ={}) == (
        Settings("cli:2", "-Ab_9", None)
    )
    assert settings_from(argv=["--token=-x", "--address=cli:2"], environ={}).token == "-x"
    with pytest.raises(SystemExit):
        settings_from(argv=["--address", "cli:2", "--token"], environ={})


def test_a_match_builds_the_same_engine_game_for_simulation() -> None:
    from arena.games import make_game

    games = {}
    for start in MATCHES:
        match = wire.match(start)
        games[match.game] = make_game(match.game, match.num_players, **match.options)
        assert games[match.game].num_players == start.options.num_players
    assert dict(games["boom"].options) == {"advanced": True, "ruse": True, "series": False}
