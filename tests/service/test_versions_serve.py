"""`arena serve` and bot versions: a continuous ladder takes each bot's latest version, and the
admin API acts on the version a name means (NAME the latest, NAME@N that one)."""

from __future__ import annotations

import sqlite3

import grpc
import httpx

from tests.procs import bot_processes, processes_in
from tests.service.probe import hello
from tests.service.serving import ADMIN, RANDOM, Server, wait_until
from tests.support.ladders import arena


def completed(db) -> int:
    con = sqlite3.connect(db, timeout=5)
    try:
        return con.execute("SELECT count(*) FROM matches WHERE status = 'completed'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0
    finally:
        con.close()


def completed_seating(db, name: str) -> int:
    """Completed matches that seated the bot row named `name` (a version: "r1" is r1@1)."""
    con = sqlite3.connect(db, timeout=5)
    try:
        return con.execute(
            "SELECT count(DISTINCT m.id) FROM matches m JOIN results r ON r.match_id = m.id "
            "JOIN bots b ON b.id = r.bot_id WHERE m.status = 'completed' AND b.name = ?",
            (name,),
        ).fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0
    finally:
        con.close()


def test_serve_plays_the_latest_version_and_the_admin_api_acts_on_it(tmp_path):
    db = tmp_path / "arena.db"
    for name in ("r1", "r2", "r3"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    arena("bot", "update", "r1", "--command", RANDOM, "--note", "v2", "--db", str(db))
    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)
        wait_until(lambda: completed(db) >= 1, "a completed match", server=server)
        key = {"X-Admin-Key": ADMIN}
        answer = httpx.post(
            f"{server.web}/api/admin/bots/r1/suspend",
            headers=key,
            json={"reason": "testing versions"},
        )
        assert answer.status_code == 200 and answer.json()["name"] == "r1@2"
        back = httpx.post(f"{server.web}/api/admin/bots/r1@1/reinstate", headers=key)
        assert back.status_code == 200 and back.json()["name"] == "r1"
        wrong = httpx.post(f"{server.web}/api/admin/bots/r1@9/reinstate", headers=key)
        assert wrong.status_code == 404
        assert "bot 'r1' has versions 1, 2; no version 9" in wrong.json()["error"]["message"]
    finally:
        assert server.stop() == 0
    con = sqlite3.connect(db)
    seated = {
        name
        for (name,) in con.execute(
            "SELECT DISTINCT b.name FROM results r JOIN bots b ON b.id = r.bot_id"
        )
    }
    members = {
        name
        for (name,) in con.execute(
            "SELECT b.name FROM ladder_bots lb JOIN bots b ON b.id = lb.bot_id"
        )
    }
    suspended = dict(con.execute("SELECT name, suspended FROM bots"))
    con.close()
    assert seated == members == {"r1@2", "r2", "r3"}
    assert suspended == {"r1": 0, "r1@2": 1, "r2": 0, "r3": 0}


def test_a_retired_version_is_stopped_while_serve_plays_on(tmp_path):
    """A version retired while `arena serve` runs (here by a rollback) has every lane stopped,
    process and token, while the service plays on with the version that replaces it (the idle
    time is long: the stop is the retirement's)."""
    db = tmp_path / "arena.db"
    for name in ("r1", "r2", "r3"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    update = arena("bot", "update", "r1", "--command", RANDOM, "--note", "v2", "--db", str(db))
    token = update.stdout.split("keep it secret): ")[1].split()[0]  # r1@2's registered token
    bots = tmp_path / "runs" / "bots"
    # --allow-remote: without it every registered token is refused as a remote bot's, and the
    # refusal checked below is the retirement's.
    server = Server(tmp_path, db, ["--idle-stop", "600", "--allow-remote"])
    try:
        wait_until(server.up, "the web server", server=server)
        wait_until(lambda: bot_processes(bots, "r1@2"), "r1@2's processes", server=server)
        before = completed_seating(db, "r1")
        arena("bot", "rollback", "r1", "1", "--db", str(db))
        wait_until(
            lambda: not bot_processes(bots, "r1@2"), "the retired r1@2 to stop", server=server
        )
        # Version 1 plays on in its place: matches seating it complete. (Matches in flight at the
        # rollback may complete after, with r1@2's seat lost, so the check counts r1@1's own.)
        wait_until(
            lambda: completed_seating(db, "r1") >= before + 2,
            "matches seating r1@1 after the rollback",
            server=server,
        )
        assert not bot_processes(bots, "r1@2")
        # Its registered token no longer plays either.
        code, detail = hello(f"127.0.0.1:{server.port}", token)
        assert code == grpc.StatusCode.PERMISSION_DENIED, (code, detail)
        assert "r1@2 can no longer be seated" in detail, detail
    finally:
        assert server.stop() == 0
    assert processes_in(tmp_path / "runs") == []
    assert "ending idle or retired bot lanes: r1@2" in server.log.read_text()


def test_serve_ends_idle_bots_and_launches_them_again_when_seated(tmp_path):
    """With --idle-stop shorter than the time a suspended bot's table waits, the bots of a
    ladder that cannot seat a table end; reinstated, the ladder seats them again."""
    db = tmp_path / "arena.db"
    for name in ("r1", "r2", "r3"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    runs = tmp_path / "runs"
    server = Server(tmp_path, db, ["--idle-stop", "1"])
    try:
        wait_until(server.up, "the web server", server=server)
        wait_until(lambda: completed(db) >= 1, "a completed match", server=server)
        arena("bot", "suspend", "r3", "--reason", "pause", "--db", str(db))
        # Three bots at tables of 3: with r3 suspended no table is seated, and the others idle.
        wait_until(lambda: processes_in(runs) == [], "idle bots to end", server=server)
        played = completed(db)
        arena("bot", "reinstate", "r3", "--db", str(db))
        wait_until(lambda: completed(db) >= played + 3, "matches after reinstating", server=server)
    finally:
        assert server.stop() == 0
    assert processes_in(runs) == []
