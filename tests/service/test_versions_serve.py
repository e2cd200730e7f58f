"""`arena serve` and bot versions: a continuous ladder takes each bot's latest version, and the
admin API acts on the version a name means (NAME the latest, NAME@N that one)."""

from __future__ import annotations

import sqlite3

import httpx

from tests.ladder.test_run_ladder import arena
from tests.service.test_serve import ADMIN, RANDOM, Server, wait_until


def completed(db) -> int:
    con = sqlite3.connect(db, timeout=5)
    try:
        return con.execute("SELECT count(*) FROM matches WHERE status = 'completed'").fetchone()[0]
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
