"""Ladders end to end through the CLI: real SQLite files, real referee, real bot processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from arena.ratings import SkillRating, p_better_calibrated
from arena.schedule import make_schedule
from tests.cli import ladder_run_args, start_arena
from tests.procs import processes_in
from tests.support.ladders import (
    RANDOM,
    arena,
    ladder_args,
    rankings,
    register,
    results,
    wait_for_completed,
)
from tests.timing import scaled


def test_kill_9_mid_ladder_then_resume_equals_an_uninterrupted_run(tmp_path, clean_ladder):
    clean_db, killed_db = clean_ladder["db"], tmp_path / "killed.db"
    register(killed_db, ["a", "b", "c", "d"])

    proc = start_arena(
        *ladder_args(killed_db, tmp_path),
        tmp=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
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
    assert results(killed_db) == clean_ladder["results"]
    # 2 rounds of 4 sets of 3, 3 seats each (margins mode: no opening round).
    assert clean_ladder["results"]["count"] == 24 * 3
    assert rankings(killed_db) == clean_ladder["rankings"]
    # The killed runner's bots died with it (the kernel kills them when their parent dies).
    assert processes_in(tmp_path / "runs") == []


@pytest.mark.parametrize(
    "args,message",
    [
        (["--game", "chess", "-k", "3", "--bots", "a,b,c"], "Invalid value for '--game'"),
        (["--game", "balloon", "-k", "6", "--bots", "a,b,c"], "Invalid value for '--table-size'"),
        (["--game", "balloon", "-k", "4", "--bots", "a,b,c"], "needs at least 4 bots"),
        (["--game", "balloon", "-k", "3", "--bots", "a,b,zz"], "no bot called 'zz'"),
        (["--game", "balloon", "-k", "3", "--bots", "a,b,c", "--ruse"], "has no option ruse"),
    ],
)
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


@pytest.mark.parametrize(
    "args,message",
    [
        (["--until-settled", "0.95"], "--until-settled needs --max-rounds"),
        (["--max-rounds", "3"], "--max-rounds applies with --until-settled"),
        (["--until-settled", "1.5", "--max-rounds", "3"], "Invalid value for '--until-settled'"),
        (["--until-settled", "0.9", "--max-rounds", "2", "--rounds", "3"], "is below --rounds 3"),
    ],
)
def test_bad_until_settled_input_is_refused(tmp_path, args, message):
    db = tmp_path / "a.db"
    register(db, ["a", "b"])
    proc = arena(*ladder_run_args("x", "a,b", db, args), check=False)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM ladders").fetchone()[0] == 0
    con.close()


HEURISTIC = "python example_bots/balloon_heuristic.py"


def settled_after_each_round(db: Path, ladder: str, confidence: float) -> list[bool]:
    """Whether every adjacent pair of the leaderboard was settled at the end of each round,
    recomputed from the stored rating history (the last rating of each bot in rounds 0..r)."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT m.round, m.idx, b.name, h.mu, h.sigma FROM rating_history h "
        "JOIN matches m ON m.id = h.match_id JOIN bots b ON b.id = h.bot_id "
        "JOIN ladders l ON l.id = m.ladder_id WHERE l.name = ? ORDER BY m.idx",
        (ladder,),
    ).fetchall()
    rounds = con.execute("SELECT rounds FROM ladders WHERE name = ?", (ladder,)).fetchone()[0]
    con.close()
    out = []
    for r in range(rounds):
        latest = {}
        for round_, _, bot, mu, sigma in rows:
            if round_ <= r:
                latest[bot] = (mu, sigma)
        board = sorted(latest.values(), key=lambda x: (-(x[0] - 3 * x[1]), -x[0]))
        out.append(
            all(
                p_better_calibrated(SkillRating(*a), SkillRating(*b)) >= confidence
                for a, b in zip(board, board[1:])
            )
        )
    return out


def test_until_settled_stops_at_the_first_round_where_every_rank_is_settled(tmp_path):
    db = tmp_path / "a.db"
    arena("bot", "add", "heuristic", "--command", HEURISTIC, "--db", str(db))
    register(db, ["random"])
    args = ladder_run_args(
        "s",
        "heuristic,random",
        db,
        # TrueSkill's set mode, which needs a few rounds for these two (margins settles them
        # in the first: the rule's rounds would not show)
        ["--seed", "5", "--until-settled", "0.95", "--max-rounds", "8", "--rating-mode", "set"],
        run_dir=tmp_path / "runs",
    )
    out = arena(*args).stdout
    assert "every rank settled at 0.95" in out
    settled = settled_after_each_round(db, "s", 0.95)
    # It played rounds until the first settled one, and no further.
    assert settled[-1] and not any(settled[:-1]), settled
    assert 1 < len(settled) < 8
    doc = json.loads(arena("rankings", "--json", "--db", str(db)).stdout)
    assert [s["bot"] for s in doc["standings"]] == ["heuristic", "random"]
    assert doc["standings"][0]["p_better_than_next"] >= 0.95
    # The same command again adds nothing: the ladder is settled.
    again = arena(*args).stdout
    assert "every rank settled at 0.95" in again
    assert len(settled_after_each_round(db, "s", 0.95)) == len(settled)
    assert results(db)["count"] == 2 + 2 * 2 * len(settled)  # the opening match, then sets
    assert processes_in(tmp_path / "runs") == []


def test_until_settled_stops_at_the_cap_and_the_same_command_with_a_higher_cap_goes_on(tmp_path):
    db = tmp_path / "a.db"
    register(db, ["r1", "r2", "r3"])  # three random bots: equal, so never settled

    def run(cap: int) -> subprocess.CompletedProcess:
        return arena(
            *ladder_run_args(
                "c",
                "r1,r2,r3",
                db,
                ["--seed", "3", "--until-settled", "0.95", "--max-rounds", str(cap)],
                run_dir=tmp_path / "runs",
            )
        )

    proc = run(2)
    assert "not every rank settled at 0.95 after 2 rounds" in proc.stderr
    assert settled_after_each_round(db, "c", 0.95) == [False, False]
    # 2 rounds of 3 sets of 2 matches (margins mode: no opening round); 2 seats.
    assert results(db)["count"] == 2 * 2 * 3 * 2
    proc = run(3)
    assert "after 3 rounds" in proc.stderr
    assert settled_after_each_round(db, "c", 0.95) == [False, False, False]
    assert results(db)["count"] == 2 * 2 * 3 * 3
    shown = arena("rankings", "--db", str(db)).stdout
    assert "?" in shown  # unsettled ranks are marked, and what P(> next) comes from is said
    assert "(margins rating)" in shown and "the score-margin model" in shown


def test_until_settled_killed_after_adding_a_round_resumes_to_the_uninterrupted_result(tmp_path):
    clean_db, killed_db = tmp_path / "clean.db", tmp_path / "killed.db"

    def args(db: Path, runs: Path) -> list[str]:
        return ladder_run_args(
            "u",
            "a,b,c,d",
            db,
            ["--seed", "9", "--until-settled", "0.95", "--max-rounds", "3", "-j", "1"],
            run_dir=runs,
        )

    for db in (clean_db, killed_db):
        register(db, ["a", "b", "c", "d"])  # four random bots: never settled, so 3 rounds
    arena(*args(clean_db, tmp_path / "clean"))
    proc = start_arena(
        *args(killed_db, tmp_path / "runs"),
        tmp=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    opening = 0  # margins mode: no opening round
    a_round = 6 * 2  # 6 tables of 2, each a set of 2 matches
    first = opening + a_round
    done = wait_for_completed(killed_db, first + 2, proc)
    assert proc.poll() is None, "the ladder finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert first < done < first + 2 * a_round  # killed in a round the run added
    arena(*args(killed_db, tmp_path / "runs"))  # the same command resumes
    assert results(killed_db) == results(clean_db)
    assert results(clean_db)["count"] == (opening + 3 * a_round) * 2
    assert rankings(killed_db) == rankings(clean_db)
    assert processes_in(tmp_path / "runs") == []


def stored_schedule(db: Path, ladder: str) -> list[tuple]:
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT m.idx, m.set_index, m.round, m.rotation, m.seed, m.seats FROM matches m "
        "JOIN ladders l ON l.id = m.ladder_id WHERE l.name = ? ORDER BY m.idx",
        (ladder,),
    ).fetchall()
    con.close()
    return [(*r[:5], tuple(json.loads(r[5]))) for r in rows]


def test_a_new_ladder_opens_with_single_matches_when_told_and_a_resumed_one_keeps_its_own(
    tmp_path,
):
    db = tmp_path / "a.db"
    register(db, ["r1", "r2", "r3"])
    ids = [i for i, _ in sorted(bot_ids(db).items(), key=lambda x: x[1])]

    def run(name: str, *options: str) -> None:
        arena(*ladder_run_args(name, "r1,r2,r3", db, ["--seed", "7", *options]))

    run("opened", "--opening-round")
    run("plain")  # margins mode's default: no opening round
    opened, plain = stored_schedule(db, "opened"), stored_schedule(db, "plain")
    assert opened == [
        (m.index, m.set_index, m.round, m.rotation, m.seed, m.seats)
        for m in make_schedule(ids, 2, 1, 7, opening_round=True)
    ]
    assert plain == [
        (m.index, m.set_index, m.round, m.rotation, m.seed, m.seats)
        for m in make_schedule(ids, 2, 1, 7)
    ]
    assert len(opened) == 3 + len(plain)
    # Resumed with more rounds and without the flag, each ladder keeps its own kind of schedule;
    # asked for the other kind, an opened one refuses and changes nothing.
    run("plain", "--rounds", "2")
    assert stored_schedule(db, "plain") == [
        (m.index, m.set_index, m.round, m.rotation, m.seed, m.seats)
        for m in make_schedule(ids, 2, 2, 7)
    ]
    proc = arena(
        *ladder_run_args("opened", "r1,r2,r3", db, ["--seed", "7", "--no-opening-round"]),
        check=False,
    )
    assert proc.returncode != 0
    assert "opening round is True, not False" in proc.stderr
    assert stored_schedule(db, "opened") == opened
    assert results(db)["count"] == 2 * (len(opened) + 2 * len(plain))


def bot_ids(db: Path) -> dict[int, str]:
    con = sqlite3.connect(db)
    found = dict(con.execute("SELECT id, name FROM bots").fetchall())
    con.close()
    return found


def test_missing_database_directory_is_a_clear_error(tmp_path):
    proc = arena("rankings", "--db", str(tmp_path / "nope" / "a.db"), check=False)
    assert proc.returncode != 0 and "does not exist" in proc.stderr
    proc = arena(*ladder_run_args("x", "a,b", tmp_path / "nope" / "a.db"), check=False)
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
    proc = start_arena(
        *ladder_args(db, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_completed(db, 3, proc)
    assert proc.poll() is None, "the ladder finished before Ctrl-C"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=scaled(60))
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    con = sqlite3.connect(db)
    running = con.execute("SELECT count(*) FROM matches WHERE status='running'").fetchone()[0]
    con.close()
    assert running == 0  # the matches in flight went back to pending
    arena(*ladder_args(db, tmp_path))
    assert results(db)["count"] == 24 * 3  # 2 rounds of sets (margins mode: no opening round)
