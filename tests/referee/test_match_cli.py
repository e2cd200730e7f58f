"""`arena match` and `arena replay` through the command line, with real bot processes."""

from __future__ import annotations

import json
import subprocess

from tests.cli import ROOT, run_arena, run_match

RANDOM = "python example_bots/random_bot.py"


def test_match_writes_a_replay_that_replays_from_each_view(tmp_path):
    path = tmp_path / "m.json"
    out = run_match("balloon", [RANDOM, RANDOM], 9, "--replay", str(path))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["seed"] == 9 and result["faults"] == []
    assert result["seat_names"] == ["random_bot", "random_bot#2"]
    doc = json.loads(path.read_text())
    assert doc["format"] == "arena-replay" and doc["version"] == 1
    # What each seat saw is in the replay, and it holds that seat's hand only.
    first = doc["views"]["0"][0]
    assert first["seat"] == 0 and len(first["hand"]) == 6

    public = run_arena("replay", str(path))
    assert public.returncode == 0, public.stderr
    assert "reproduces its recorded result" in public.stdout and "hand before" not in public.stdout
    seat = run_arena("replay", str(path), "--seat", "1")
    assert seat.returncode == 0 and "hand before" in seat.stdout
    bad = run_arena("replay", str(path), "--seat", "5")
    assert bad.returncode == 2 and "between 0 and 1" in bad.stderr


def test_match_refuses_a_bot_command_that_does_not_exist(tmp_path):
    out = run_arena("match", "boom", RANDOM, RANDOM, "python no_such_bot.py")
    assert out.returncode == 2
    assert "no_such_bot.py" in out.stderr and "Traceback" not in out.stderr
    out = run_arena("match", "boom", RANDOM)
    assert out.returncode == 2 and "2 to 5 players" in out.stderr


def test_without_bubblewrap_match_refuses_to_launch_bots_unless_told_no_sandbox(tmp_path):
    # A PATH without bwrap: what a machine without the package looks like to Arena.
    bare = tmp_path / "bin"
    bare.mkdir()
    env = {"PATH": str(bare), "HOME": str(tmp_path), "LANG": "C.UTF-8"}

    def run(*extra: str) -> subprocess.CompletedProcess:
        return run_match("balloon", [RANDOM, RANDOM], 3, *extra, env=env)

    refused = run()
    assert refused.returncode == 1 and refused.stdout == ""
    assert (
        "bwrap is not installed" in refused.stderr
        and "apt-get install bubblewrap" in refused.stderr
        and "--no-sandbox" in refused.stderr
    )
    assert "Traceback" not in refused.stderr

    played = run("--no-sandbox")
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout)["faults"] == []
    assert played.stderr.count("warning: --no-sandbox") == 1
    assert "reach the network" in played.stderr


def test_seat_names_come_from_the_script_or_its_directory_for_a_generic_file_name():
    from arena.app import seat_names_for

    assert seat_names_for(
        [
            "node example_bots/node_random/index.js",
            "python example_bots/random_bot.py",
            "python example_bots/random_bot.py",
            "python bots/alpha/main.py",
            "python bot.py",
            "python bots/x.py --level 3 '{\"a\": 1}'",
            "path/to/mybot",
        ]
    ) == ["node_random", "random_bot", "random_bot#2", "alpha", "bot", "x", "mybot"]


def test_a_relative_run_directory_works_with_the_sandbox(tmp_path):
    # The demo's ladders use a run directory relative to where arena runs.
    bot = f"python {ROOT / 'example_bots' / 'random_bot.py'}"
    out = run_match("boom", [bot, bot], 4, "--run-dir", "runs/here", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["faults"] == []
    assert (tmp_path / "runs" / "here" / "logs" / "random_bot.log").exists()
