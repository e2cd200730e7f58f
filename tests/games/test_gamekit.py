"""The game registry (arena.games, arena/games/kit.py): each registered game's options declared
once and followed by the protocol and the SDK, its codec answering for its own messages, and a
package that is not a game refused with a clear error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.games import ConfigError, game_class, game_kits, register
from arena.referee import wire
from arena_sdk import games as sdk_games
from arena_sdk.proto import arena_pb2 as pb
from tests.cli import ROOT


def test_every_games_options_have_their_protocol_field_and_the_sdk_reads_them():
    fields = {f.name: f for f in pb.GameOptions.DESCRIPTOR.fields}
    for kit in game_kits():
        assert kit.name in pb.Observation.DESCRIPTOR.fields_by_name, kit.name
        assert kit.name in pb.Action.DESCRIPTOR.fields_by_name, kit.name
        for option in kit.options:
            assert option.name in fields, f"{kit.name}: GameOptions has no field {option.name}"
            assert option.help and option.values[0] is False
        sdk = sdk_games.get(kit.name)
        if sdk is not None:  # a game the SDK ships, or one registered in this process
            assert sdk.OPTIONS == tuple(o.name for o in kit.options), kit.name


def test_the_game_options_go_to_the_wire_by_their_declaration():
    from arena.games import make_game

    msg = wire.options_to_pb(make_game("boom", 3, ruse=True, series=True))
    assert (msg.num_players, msg.advanced, msg.ruse, msg.series) == (3, False, True, True)


def test_the_cli_has_a_flag_for_each_declared_option():
    from click.testing import CliRunner

    from arena.cli import main

    out = " ".join(CliRunner().invoke(main, ["match", "--help"]).output.split())
    for kit in game_kits():
        for option in kit.options:
            assert f"--{option.name}" in out and option.help in out


def test_a_package_that_is_not_a_game_is_refused_with_what_to_do():
    with pytest.raises(ConfigError, match="has no KIT"):
        register("arena.results")
    with pytest.raises(ConfigError, match="cannot load the game package"):
        register("arena.no_such_game")


def test_compare_takes_its_default_opponents_from_the_games_kit(tmp_path):
    import click

    from arena.cli.compare import _example_opponents
    from arena.games import game_kit
    from arena.store import Store

    with Store(tmp_path / "arena.db") as store:
        names = _example_opponents(store, "boom")
        assert names == tuple(game_kit("boom").example_bots)
        assert store.get_bot("example-boom-strong") is not None
        with pytest.raises(click.UsageError, match="no example bots"):
            _example_opponents(store, "highcard")


def test_a_pages_option_labels_follow_the_declaration():
    from arena.games import option_labels

    labels = option_labels("boom", {"series": True, "advanced": True, "ruse": False})
    # In the game's declared order, each with its help; a default (ruse off) is left unsaid.
    assert labels == [
        ("advanced", "the advanced game"),
        ("series", next(o.help for o in game_class("boom").declared_options if o.name == "series")),
    ]
    assert option_labels("balloon", {}) == []
    # An option the game does not declare (an old ladder's) still shows, as it was stored.
    assert option_labels("balloon", {"mirror": 2}) == [("mirror 2", "mirror")]


def test_the_registry_loads_once_for_threads_that_ask_at_once():
    """A bot's matches run in threads; the first of them to ask for a game loads the registry,
    and the others, asking meanwhile, wait for it instead of finding no game (seen as "unknown
    game 'balloon'; the games are: " when a ladder's opening round gave one bot process several
    matches at once). In a fresh interpreter, so that the registry is not loaded yet."""
    script = """
import threading
from arena.games import game_kit
barrier = threading.Barrier(8)
failed = []
def ask():
    barrier.wait()
    try:
        game_kit("balloon")
    except Exception as err:
        failed.append(repr(err))
threads = [threading.Thread(target=ask) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(failed)
"""
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
        )
        assert out.stdout.strip() == "[]", out.stdout
