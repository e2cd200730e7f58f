"""Crash tests of our own side, through the CLI with real processes.

tests/ladder/test_run_ladder.py kills `arena ladder run` (scheduler and referee: one process)
once, mid-ladder, and checks the resumed ladder equals an uninterrupted one. This module reuses
its helpers and adds: killed twice, killed during the very first match, and `arena serve` (the
continuous service) killed and restarted. Replay files that
are truncated, corrupted or of another version are refused by `arena replay` with a clear
message.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.cli import serve_args, start_arena
from tests.procs import processes_in
from tests.support.ladders import arena, count, kill_when, ladder_args, rankings, register, results
from tests.timing import scaled

TOTAL = 24  # matches of the ladder ladder_args describes


@pytest.fixture
def clean_run(clean_ladder):
    """The uninterrupted ladder every interrupted one must equal (tests/conftest.py)."""
    return clean_ladder["results"], clean_ladder["rankings"]


def start_ladder(db: Path, tmp: Path) -> subprocess.Popen:
    return start_arena(
        *ladder_args(db, tmp),
        tmp=tmp,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def leftover_bots(tmp: Path) -> list[int]:
    return processes_in(tmp / "runs")


def test_killed_twice_then_resumed_equals_an_uninterrupted_run(tmp_path, clean_run):
    db = tmp_path / "killed.db"
    register(db, ["a", "b", "c", "d"])
    kill_when(start_ladder(db, tmp_path), lambda: count(db, "completed") >= 3)
    first = count(db, "completed")
    kill_when(start_ladder(db, tmp_path), lambda: count(db, "completed") >= first + 5)
    second = count(db, "completed")
    assert 3 <= first < second < TOTAL
    arena(*ladder_args(db, tmp_path))
    assert (results(db), rankings(db)) == clean_run
    assert leftover_bots(tmp_path) == []
    # Matches the kills cut short were played again, but no attempt failed: each counts one
    # (resumes must not use up the retries that infrastructure failures get).
    con = sqlite3.connect(db)
    assert con.execute("SELECT DISTINCT attempts FROM matches").fetchall() == [(1,)]
    assert con.execute("SELECT count(*) FROM infra_failures").fetchone()[0] == 0
    con.close()


def test_killed_during_the_very_first_match_then_resumed_equals_an_uninterrupted_run(
    tmp_path, clean_run
):
    db = tmp_path / "killed.db"
    register(db, ["a", "b", "c", "d"])
    # The first matches are running (their bots still starting) and none has finished.
    kill_when(
        start_ladder(db, tmp_path),
        lambda: count(db, "running") >= 1 and count(db, "completed") == 0,
    )
    assert count(db, "completed") == 0
    arena(*ladder_args(db, tmp_path))
    assert (results(db), rankings(db)) == clean_run
    assert leftover_bots(tmp_path) == []


# ---------------------------------------------------------------- replay files


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "match.json"
    bot = "python example_bots/random_bot.py"
    arena("match", "boom", bot, bot, bot, "--seed", "5", "--replay", str(path))
    assert arena("replay", str(path), "--quiet").returncode == 0
    return path


def damaged(tmp_path: Path, replay_file: Path, how: str) -> Path:
    text = replay_file.read_text()
    doc = json.loads(text)
    out = tmp_path / f"{how}.json"
    if how == "truncated":
        out.write_text(text[: len(text) // 2])
    elif how == "binary":
        out.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00garbage\xff\xfe")
    elif how == "other_version":
        doc["version"] = 2
        out.write_text(json.dumps(doc))
    elif how == "not_a_replay":
        out.write_text(json.dumps({"hello": "world"}))
    elif how == "moves_cut":
        doc["moves"] = doc["moves"][: len(doc["moves"]) // 2]
        out.write_text(json.dumps(doc))
    elif how == "score_changed":
        doc["scores"][0] += 1
        out.write_text(json.dumps(doc))
    elif how == "move_changed":
        action = doc["moves"][0][1]
        doc["moves"][0][1] = [49, 48] if action != [48, 49] else [0, 1]
        out.write_text(json.dumps(doc))
    elif how == "move_mangled":
        doc["moves"][3] = "seat three played"
        out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(
    "how,message",
    [
        ("truncated", "truncated or corrupted"),
        ("binary", "not valid JSON"),
        ("other_version", "is a version 2 replay; this Arena reads version 1"),
        ("not_a_replay", "is not an Arena replay"),
        ("moves_cut", "ends before the match is over"),
        ("score_changed", "does not reproduce its result"),
        ("move_changed", "does not replay"),
        ("move_mangled", "is damaged: move 3"),
    ],
)
def test_a_damaged_replay_is_refused_with_a_clear_message(tmp_path, replay_file, how, message):
    path = damaged(tmp_path, replay_file, how)
    proc = arena("replay", str(path), check=False)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------- arena serve


def serve(db: Path, tmp: Path, max_matches: int) -> subprocess.Popen:
    return start_arena(
        *serve_args(
            "open=balloon:3",
            "--max-matches",
            str(max_matches),
            "--seed",
            "1",
            "--run-dir",
            str(tmp / "runs"),
            "--move-ms",
            "5000",
            db=db,
        ),
        tmp=tmp,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stored(db: Path) -> tuple[dict, dict]:
    """(results by completed match id, status by match id)."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT r.match_id, r.seat, r.score, r.rank FROM results r ORDER BY r.match_id, r.seat"
        ).fetchall()
        statuses = dict(con.execute("SELECT id, status FROM matches").fetchall())
    finally:
        con.close()
    by_match: dict = {}
    for match_id, seat, score, rank in rows:
        by_match.setdefault(match_id, []).append((seat, score, rank))
    return by_match, statuses


def test_serve_killed_mid_ladder_then_restarted_loses_and_doubles_nothing(tmp_path):
    db = tmp_path / "serve.db"
    register(db, ["a", "b", "c", "d"])
    kill_when(serve(db, tmp_path, 100_000), lambda: count(db, "completed") >= 6)
    before, _ = stored(db)
    assert len(before) >= 6
    restarted = serve(db, tmp_path, 12)
    assert restarted.wait(scaled(120)) == 0
    after, statuses = stored(db)
    completed = {m for m, s in statuses.items() if s == "completed"}
    # Nothing lost: every result from before the kill is still there, unchanged; the restart
    # played its 12 matches; matches cut off by the kill were abandoned, never rated.
    assert {m: after[m] for m in before} == before
    assert set(after) == completed and len(completed) == len(before) + 12
    assert set(statuses.values()) <= {"completed", "abandoned"}
    # Nothing counted twice: three results per match, one per seat, and each bot's rating has
    # taken exactly the matches it played.
    assert all([r[0] for r in rows] == [0, 1, 2] for rows in after.values())
    con = sqlite3.connect(db)
    played = dict(
        con.execute(
            "SELECT b.name, count(*) FROM results r JOIN bots b ON b.id = r.bot_id "
            "JOIN matches m ON m.id = r.match_id WHERE m.status = 'completed' GROUP BY b.name"
        ).fetchall()
    )
    con.close()
    assert {s["bot"]: s["matches"] for s in rankings(db)} == played
    assert leftover_bots(tmp_path) == []
