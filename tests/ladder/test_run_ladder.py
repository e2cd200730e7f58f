"""Ladders end to end through the CLI: real SQLite files, real referee, real bot processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.procs import processes_in

ROOT = Path(__file__).resolve().parents[2]
RANDOM = "python example_bots/random_bot.py"


def arena(*args: str, cwd: Path = ROOT, check: bool = True, timeout: float = 240):
    proc = subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"arena {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def register(db: Path, names: list[str]) -> None:
    for name in names:
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))


def ladder_args(db: Path, tmp: Path, name: str = "l1") -> list[str]:
    return ["ladder", "run", name, "--game", "balloon", "-k", "3", "--bots", "a,b,c,d",
            "--seed", "11", "--rounds", "2", "--db", str(db), "--run-dir", str(tmp / "runs"),
            "--no-progress", "-j", "3", "--move-ms", "5000"]


def results(db: Path) -> dict:
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT m.idx, r.seat, r.score, r.rank FROM matches m JOIN results r "
        "ON r.match_id = m.id ORDER BY m.idx, r.seat").fetchall()
    counts = con.execute("SELECT count(*) FROM results").fetchone()[0]
    con.close()
    return {"rows": rows, "count": counts}


def wait_for_completed(db: Path, n: int, proc: subprocess.Popen, timeout_s: float = 120) -> int:
    """Wait on the condition itself (n matches stored), not on time; stop early if the
    ladder's process ends. Returns how many were completed."""
    deadline = time.monotonic() + timeout_s
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            con = sqlite3.connect(db, timeout=5)
            done = con.execute("SELECT count(*) FROM matches WHERE status='completed'"
                               ).fetchone()[0]
            con.close()
        except sqlite3.OperationalError:  # not created yet
            done = 0
        if done >= n:
            break
        time.sleep(0.02)  # polling a condition, with a deadline
    return done


def rankings(db: Path) -> list[dict]:
    doc = json.loads(arena("rankings", "--json", "--db", str(db)).stdout)
    return [{k: s[k] for k in ("bot", "mu", "sigma", "matches", "wins", "faults")}
            for s in doc["standings"]]


def test_kill_9_mid_ladder_then_resume_equals_an_uninterrupted_run(tmp_path):
    clean_db, killed_db = tmp_path / "clean.db", tmp_path / "killed.db"
    for db in (clean_db, killed_db):
        register(db, ["a", "b", "c", "d"])
    arena(*ladder_args(clean_db, tmp_path / "clean"))

    proc = subprocess.Popen([sys.executable, "-m", "arena", *ladder_args(killed_db, tmp_path)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done = wait_for_completed(killed_db, 4, proc)
    assert proc.poll() is None, "the ladder finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 4 <= done < 24

    arena(*ladder_args(killed_db, tmp_path))  # the same command resumes
    for db in (clean_db, killed_db):  # real play, not bots that never started
        con = sqlite3.connect(db)
        assert con.execute("SELECT count(*) FROM faults").fetchone()[0] == 0
        con.close()
    assert results(killed_db) == results(clean_db)
    assert results(clean_db)["count"] == 24 * 3
    assert rankings(killed_db) == rankings(clean_db)
    # The killed runner's bots died with it (the kernel kills them when their parent dies).
    assert processes_in(tmp_path / "runs") == []


@pytest.mark.parametrize("args,message", [
    (["--game", "chess", "-k", "3", "--bots", "a,b,c"], "Invalid value for '--game'"),
    (["--game", "balloon", "-k", "6", "--bots", "a,b,c"], "Invalid value for '--table-size'"),
    (["--game", "balloon", "-k", "4", "--bots", "a,b,c"], "needs at least 4 bots"),
    (["--game", "balloon", "-k", "3", "--bots", "a,b,zz"], "no bot called 'zz'"),
    (["--game", "balloon", "-k", "3", "--bots", "a,b,c", "--ruse"], "has no option ruse"),
])
def test_bad_ladder_input_is_refused_and_changes_nothing(tmp_path, args, message):
    db = tmp_path / "a.db"
    register(db, ["a", "b", "c"])
    proc = arena("ladder", "run", "x", *args, "--db", str(db), "--no-progress", check=False)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM ladders").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM matches").fetchone()[0] == 0
    assert [r[0] for r in con.execute("SELECT name FROM bots ORDER BY name")] == ["a", "b", "c"]
    con.close()


def test_missing_database_directory_is_a_clear_error(tmp_path):
    proc = arena("rankings", "--db", str(tmp_path / "nope" / "a.db"), check=False)
    assert proc.returncode != 0 and "does not exist" in proc.stderr
    proc = arena("ladder", "run", "x", "--game", "balloon", "-k", "2", "--bots", "a,b",
                 "--db", str(tmp_path / "nope" / "a.db"), check=False)
    assert proc.returncode != 0 and "does not exist" in proc.stderr
    assert not (tmp_path / "nope").exists()


def test_locked_database_is_a_clear_error(tmp_path):
    db = tmp_path / "a.db"
    register(db, ["a", "b", "c"])
    holder = sqlite3.connect(db)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        proc = arena("bot", "add", "d", "--command", RANDOM, "--db", str(db), check=False)
    finally:
        holder.rollback()
        holder.close()
    assert proc.returncode != 0
    assert "locked" in proc.stderr.lower() and "Traceback" not in proc.stderr
    assert "d" not in arena("bot", "list", "--db", str(db)).stdout.split()


def test_ctrl_c_stops_cleanly_and_the_same_command_resumes(tmp_path):
    db = tmp_path / "a.db"
    register(db, ["a", "b", "c", "d"])
    proc = subprocess.Popen([sys.executable, "-m", "arena", *ladder_args(db, tmp_path)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_completed(db, 3, proc)
    assert proc.poll() is None, "the ladder finished before Ctrl-C"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    con = sqlite3.connect(db)
    running = con.execute("SELECT count(*) FROM matches WHERE status='running'").fetchone()[0]
    con.close()
    assert running == 0  # the matches in flight went back to pending
    arena(*ladder_args(db, tmp_path))
    assert results(db)["count"] == 24 * 3
