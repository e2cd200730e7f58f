"""Fair play (issue 28; docs/reliability.md, "Fair play"): what a bot is told gives it no hand it
was not shown, and does not tell it which matches share a deal.

A hostile bot (tests/bots/seed_inverter_bot.py) inverts the referee's old bot-seed formula and
deals its match again with the public engines, in `arena match`, in `arena ladder run` and in
`arena serve`, each time launched in its sandbox beside honest random bots that must play without
a fault. It must recover no match seed and no hand. The test first shows that the attack is real:
on the old formula the bot's own arithmetic gives back the match seed and the hand it was dealt.

Over a ladder it also logs the match ids it is told: they must be unique, random-looking, carry
no ladder name, index or attempt, and be the store's opaque ids for those matches, so that they
do not let it group the matches of a duplicate set.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from itertools import combinations
from pathlib import Path

from arena import replay
from arena.referee import lanes
from tests.bots.seed_inverter_bot import PREFIX, invert_old_bot_seed, old_bot_seed, redealt_hand
from tests.cli import ROOT, ladder_run_args, run_arena, run_match, start_arena
from tests.procs import processes_in
from tests.service.serving import Server, wait_until

INVERTER = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'seed_inverter_bot.py'}"
RANDOM = f"{sys.executable} {ROOT / 'example_bots' / 'random_bot.py'}"
OPAQUE_ID = re.compile(r"[0-9a-f]{16}")


def seen(run_dir: Path, bot: str) -> list[dict]:
    """What the inverter named `bot` logged, one entry per match, from its log(s) under run_dir:
    one per lane (logs/NAME.log, logs/NAME+laneR.log: arena.referee.lanes)."""
    lines = []
    logs = (p for p in run_dir.rglob("logs/*.log") if lanes.bot_of(p.stem) == bot)
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith(PREFIX):
                lines.append(json.loads(line[len(PREFIX) :]))
    return lines


def first_view(doc: dict, seat: int) -> list[int]:
    """The seat's hand before its first move, from the replay."""
    state = replay.replay_game(doc).new_match(doc["seed"])
    for row in doc["moves"]:
        if row[0] == seat:
            return sorted(state.observation(seat).hand)
        state.apply_action(row[0], tuple(row[1]) if isinstance(row[1], list) else row[1])
    raise AssertionError(f"seat {seat} never moved")


def assert_not_recovered(entry: dict, match_seed: int) -> None:
    assert entry["recovered_seed"] != match_seed
    assert not entry["recovered"], f"the bot re-dealt its hand: {entry}"
    # The attack is real: had the referee given the old seed, the same arithmetic would have
    # given the bot the match seed, and the match's deal its hand.
    old = old_bot_seed(match_seed, entry["seat"])
    assert invert_old_bot_seed(old, entry["seat"]) == match_seed
    dealt = redealt_hand(
        entry["game"], entry["num_players"], entry["options"], match_seed, entry["seat"]
    )
    assert dealt == entry["hand"], "the bot's check would have recognised its own hand"


def test_arena_match_gives_a_seed_that_does_not_invert(tmp_path):
    for game, extra, seed in (("balloon", [], 17), ("boom", ["--ruse"], 29)):
        run_dir, replay_file = tmp_path / game, tmp_path / f"{game}.json"
        bots = [INVERTER, RANDOM] if game == "balloon" else [RANDOM, INVERTER, RANDOM]
        proc = run_match(
            game,
            bots,
            seed,
            *extra,
            "--run-dir",
            str(run_dir),
            "--replay",
            str(replay_file),
        )
        assert proc.returncode == 0, proc.stderr
        doc = replay.read(replay_file)
        assert doc["faults"] == [], doc["faults"]  # the honest seats played without a fault
        inverter = doc["seat_names"][bots.index(INVERTER)]
        (entry,) = seen(run_dir, inverter)
        assert entry["hand"] == first_view(doc, entry["seat"])  # it logged what it was dealt
        # The replay keeps the seed each bot was given: a seeded bot replays exactly.
        assert doc["bot_seeds"][entry["seat"]] == entry["bot_seed"]
        assert_not_recovered(entry, doc["seed"])
        assert processes_in(run_dir) == []


def _ladder_db(tmp_path: Path) -> Path:
    db = tmp_path / "arena.db"
    for name, command in (("inv1", INVERTER), ("inv2", INVERTER), ("r1", RANDOM), ("r2", RANDOM)):
        proc = run_arena("bot", "add", name, "--command", command, "--db", str(db))
        assert proc.returncode == 0, proc.stderr
    return db


def _stored(db: Path) -> dict[str, dict]:
    """Each stored match by the id its bots were told: ladder, index, set, seed, replay."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT m.match_key, l.name, m.idx, m.set_index, m.rotation, m.seed, m.replay, "
            "m.status FROM matches m JOIN ladders l ON l.id = m.ladder_id"
        ).fetchall()
        faults = con.execute("SELECT count(*) FROM faults").fetchone()[0]
    finally:
        con.close()
    assert faults == 0, "every seat, honest or not, played without a fault"
    keys = "key ladder index set rotation seed replay status".split()
    return {r[0]: dict(zip(keys, r)) for r in rows if r[0] is not None}


def test_a_ladder_tells_bots_nothing_of_seeds_or_sets(tmp_path):
    db, runs = _ladder_db(tmp_path), tmp_path / "runs"
    args = ladder_run_args(
        "fair", "inv1,inv2,r1,r2", db, ["--seed", "5", "--rounds", "2", "-j", "3"], 3, runs
    )
    proc = run_arena(*args)
    assert proc.returncode == 0, proc.stderr
    stored = _stored(db)
    # 2 rounds of 4 sets of 3 (margins mode: no opening round).
    assert len(stored) == 2 * 4 * 3
    assert all(m["status"] == "completed" for m in stored.values())
    entries = seen(runs, "inv1") + seen(runs, "inv2")
    # Each inverter sits at 3 of the 4 tables of a round: 2 * 3 sets of 3 matches.
    assert len(entries) == 2 * (2 * 3 * 3)
    for entry in entries:
        match = stored[entry["match_id"]]  # the store's opaque id for the match it played
        doc = json.loads(match["replay"])
        assert doc["match_id"] == entry["match_id"]
        assert doc["bot_seeds"][entry["seat"]] == entry["bot_seed"]
        assert entry["hand"] == first_view(doc, entry["seat"])
        assert_not_recovered(entry, match["seed"])
    _assert_ids_group_nothing(entries, stored, "fair")
    assert processes_in(runs) == []


def _assert_ids_group_nothing(entries: list[dict], stored: dict[str, dict], ladder: str) -> None:
    """The match ids a bot is told: one per match, opaque, and nothing in common between the
    matches of one set but what every match of the ladder shares."""
    by_bot: dict[str, list[str]] = {}
    for entry in entries:
        by_bot.setdefault(entry["seat_names"][entry["seat"]], []).append(entry["match_id"])
    for ids in by_bot.values():
        assert len(set(ids)) == len(ids), "a bot was told one id for two matches"
    for entry in entries:
        mid, match = entry["match_id"], stored[entry["match_id"]]
        assert OPAQUE_ID.fullmatch(mid), f"{mid!r} is not 16 hex digits"
        assert ladder not in mid and f".{match['index']}." not in mid
        # The rest of MatchStart is the same in every match of the ladder: the game, its
        # options and limits (the seat and the seat names are the seat's own).
        assert (entry["game"], entry["options"], entry["limits"]) == (
            entries[0]["game"],
            entries[0]["options"],
            entries[0]["limits"],
        )
    # Two matches of one set share no more of their ids than two random ids do: at most a few
    # leading hex digits by chance (five or more: about 1 in 10^6 per pair).
    sets: dict[int, list[str]] = {}
    for mid, match in stored.items():
        sets.setdefault(match["set"], []).append(mid)
    for ids in sets.values():
        for a, b in combinations(ids, 2):
            shared = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), len(a))
            assert shared < 5, f"the ids of one set, {a} and {b}, share a prefix"


def test_serve_gives_launched_bots_seeds_that_do_not_invert(tmp_path):
    db = _ladder_db(tmp_path)
    server = Server(tmp_path, db, ["--max-matches", "6"])
    try:
        wait_until(lambda: server.proc.poll() is not None, "serve to play 6 matches and stop")
    finally:
        code = server.stop()
    assert code == 0, server.log_tail()
    stored = _stored(db)
    entries = seen(tmp_path / "runs", "inv1") + seen(tmp_path / "runs", "inv2")
    assert entries, "the inverters played"
    for entry in entries:
        match = stored[entry["match_id"]]
        if match["replay"] is None:  # abandoned by the quota's stop: nothing to compare
            continue
        doc = json.loads(match["replay"])
        assert doc["bot_seeds"][entry["seat"]] == entry["bot_seed"]
        assert entry["hand"] == first_view(doc, entry["seat"])
        assert_not_recovered(entry, match["seed"])
    assert processes_in(tmp_path / "runs") == []


def _with_remote_bot(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "arena.db"
    for name in ("r1", "r2", "r3"):
        assert run_arena("bot", "add", name, "--command", RANDOM, "--db", str(db)).returncode == 0
    added = run_arena("bot", "add", "owner", "--remote", "--db", str(db))
    assert added.returncode == 0, added.stderr
    return db, added.stdout.split()[-1]


def test_a_ladder_run_warns_of_remote_bots_and_no_remote_refuses_them(tmp_path):
    db, _ = _with_remote_bot(tmp_path)
    args = ladder_run_args("mixed", "r1,r2,owner", db, ["--seed", "3"], 2, tmp_path / "runs")
    refused = run_arena(*args, "--no-remote")
    assert refused.returncode == 1
    assert "ladder mixed would seat remote bots (owner), and --no-remote refuses them" in (
        refused.stderr
    )
    assert "results are fair only among trusted remote bots" in refused.stderr
    assert "no ladders yet" in run_arena("ladder", "list", "--db", str(db)).stdout  # none made
    # Without --no-remote it runs, and says so before the first match.
    log = tmp_path / "ladder.log"
    with open(log, "w") as out:
        proc = start_arena(*args, stdout=out, stderr=out, start_new_session=True)
    try:
        wait_until(lambda: "warning:" in log.read_text(), "the ladder's warning")
        proc.send_signal(signal.SIGTERM)  # stopped at once: it resumes later
        proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert (
        "warning: ladder mixed seats remote bots (owner); a remote bot can see every hand of a "
        "set over its rotations: results are fair only among trusted remote bots. To refuse "
        "them: --no-remote" in log.read_text()
    )


def test_serve_refuses_remote_bots_unless_allowed(tmp_path):
    db, token = _with_remote_bot(tmp_path)
    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)
        assert "remote bots are not seated (owner)" in server.log.read_text()
        # The remote bot is refused at its Hello, saying why; the SDK stops there.
        bot = subprocess.run(
            [
                sys.executable,
                "example_bots/random_bot.py",
                "--address",
                f"127.0.0.1:{server.port}",
                "--token",
                token,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert bot.returncode == 1
        assert "PERMISSION_DENIED" in bot.stderr and "seats no remote bots" in bot.stderr
        assert "its organiser did not pass --allow-remote" in bot.stderr
    finally:
        assert server.stop() == 0, server.log_tail()
    allowing = Server(tmp_path, db, ["--allow-remote"])
    try:
        wait_until(allowing.up, "the web server", server=allowing)
        wait_until(
            lambda: "results are fair only among trusted remote bots" in allowing.log.read_text(),
            "the warning of a server that seats remote bots",
            server=allowing,
        )
        assert "arena serve (--allow-remote) seats remote bots (owner)" in allowing.log.read_text()
    finally:
        assert allowing.stop() == 0, allowing.log_tail()
