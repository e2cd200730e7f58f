"""`arena serve` for real: a server process, launched and remote bots, the web API, the admin
API, suspension of a faulting bot, a graceful SIGTERM and a restart that carries on."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests import timing
from tests.cli import ROOT, serve_args
from tests.service.serving import (
    ADMIN,
    RANDOM,
    Server,
    arena,
    free_port,
    wait_until,
)

CRASHER = f"python {ROOT / 'tests' / 'bots' / 'fault_bot.py'} crash_start"


def completed(db: Path) -> int:
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute("SELECT count(*) FROM matches WHERE status = 'completed'").fetchone()[0]
    finally:
        con.close()


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "arena.db"
    for name in ("r1", "r2", "r3"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(path))
    return path


def test_serve_runs_matches_shows_them_and_stops_gracefully(tmp_path, db):
    remote_token = arena("bot", "add", "owner", "--remote", "--db", str(db)).stdout.split()[-1]
    server = Server(tmp_path, db, ["--allow-remote"])
    remote = None
    try:
        wait_until(server.up, "the web server", server=server)
        remote_log = tmp_path / "remote-bot.log"
        with open(remote_log, "w") as log:
            remote = subprocess.Popen(
                [
                    sys.executable,
                    str(ROOT / "example_bots" / "random_bot.py"),
                    "--address",
                    f"127.0.0.1:{server.port}",
                    "--token",
                    remote_token,
                ],
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )

        def remote_played():
            board = httpx.get(f"{server.web}/api/ladders/bal").json()
            played = {row["bot"] for row in board["standings"] if row["matches"] > 0}
            return played if completed(db) >= 9 and "owner" in played else None

        # The remote bot connects when it is ready, joins and gets its share of the tables.
        try:
            names = wait_until(remote_played, "the remote bot's matches", server=server)
        except AssertionError as err:
            raise AssertionError(
                f"{err}\nthe remote bot's log:\n{remote_log.read_text(errors='replace')[-3000:]}"
            ) from None
        assert {"r1", "r2", "r3", "owner"} <= names
        assert httpx.get(f"{server.web}/ladders/bal").status_code == 200

        # The admin API: a wrong key is refused; the right one registers a bot, token once.
        bad = httpx.post(
            f"{server.web}/api/admin/bots",
            json={"name": "x", "remote": True},
            headers={"X-Admin-Key": "wrong"},
        )
        assert bad.status_code == 401
        good = httpx.post(
            f"{server.web}/api/admin/bots",
            json={"name": "api-bot", "remote": True},
            headers={"X-Admin-Key": ADMIN},
        )
        assert good.status_code == 201 and len(good.json()["token"]) > 20
        dup = httpx.post(
            f"{server.web}/api/admin/bots",
            json={"name": "api-bot", "remote": True},
            headers={"X-Admin-Key": ADMIN},
        )
        assert dup.status_code == 400 and "already exists" in dup.json()["error"]["message"]
    finally:
        code = server.stop()
        if remote is not None:
            remote.terminate()
            remote.wait(timing.scaled(10))
    assert code == 0
    con = sqlite3.connect(db)
    statuses = dict(con.execute("SELECT status, count(*) FROM matches GROUP BY status"))
    unrated_done = con.execute(
        "SELECT count(*) FROM matches WHERE status='abandoned' AND rated=1"
    ).fetchone()[0]
    # What the launched bots wrote in each match is kept for their owners; the remote bot
    # keeps its own log (docs/web.md#match-logs).
    logged = {
        name
        for (name,) in con.execute(
            "SELECT DISTINCT b.name FROM match_logs g JOIN bots b ON b.id = g.bot_id"
        )
    }
    con.close()
    assert logged and logged <= {"r1", "r2", "r3"}
    assert statuses.get("running", 0) == 0 and statuses.get("pending", 0) == 0
    assert unrated_done == 0  # abandoned matches are never rated
    before = completed(db)

    # A restart carries on from where it stopped.
    again = Server(tmp_path, db, ["--max-matches", "3"])
    try:
        assert again.proc.wait(timing.scaled(120)) == 0
    finally:
        again.stop()
    assert completed(db) >= before + 3


def test_a_bot_that_keeps_faulting_is_suspended_with_a_reason(tmp_path, db):
    arena("bot", "add", "crasher", "--command", CRASHER, "--db", str(db))
    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)

        def suspended():
            bot = httpx.get(f"{server.web}/api/bots/crasher").json()["bot"]
            return bot if bot["suspended"] else None

        bot = wait_until(suspended, "the crasher's suspension", server=server)
        assert "faulted in" in bot["suspended_reason"]
        back = httpx.post(
            f"{server.web}/api/admin/bots/crasher/reinstate", headers={"X-Admin-Key": ADMIN}
        )
        assert back.status_code == 200 and back.json()["suspended"] is False
    finally:
        assert server.stop() == 0


def test_a_bot_whose_folder_is_gone_is_suspended_and_the_others_play_on(tmp_path, db):
    """A bot registered from a folder that was removed afterwards cannot be launched: that is
    its own problem, not the platform's. It is suspended with a reason that names no path of
    the server, the log says why, and the other bots' matches go on (before, the ladder
    retried launching the same table every second, for ever)."""
    folder = tmp_path / "gone"
    folder.mkdir()
    (folder / "arena-bot.toml").write_text('command = "python bot.py"\n')
    (folder / "bot.py").write_text((ROOT / "example_bots" / "random_bot.py").read_text())
    arena("bot", "add", "gone", "--dir", str(folder), "--db", str(db))
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)

        def suspended():
            bot = httpx.get(f"{server.web}/api/bots/gone").json()["bot"]
            return bot if bot["suspended"] else None

        bot = wait_until(suspended, "the unlaunchable bot's suspension", server=server)
        assert bot["suspended_reason"] == (
            "its command cannot be launched (the server's log says why)"
        )
        wait_until(lambda: completed(db) >= 2, "matches of the other bots", server=server)
    finally:
        assert server.stop() == 0
    log = server.log.read_text()
    assert "suspended gone: bot gone cannot be launched: " in log and str(folder) in log
    con = sqlite3.connect(db)
    seated = {
        n
        for (n,) in con.execute(
            "SELECT DISTINCT b.name FROM results r JOIN bots b ON b.id = r.bot_id"
        )
    }
    con.close()
    assert seated == {"r1", "r2", "r3"}


def test_serve_refuses_a_database_of_a_newer_schema(tmp_path, db):
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    proc = arena(*serve_args("bal=balloon:3", db=db), check=False)
    assert proc.returncode != 0
    assert "schema" in proc.stderr.lower() and "Traceback" not in proc.stderr


def test_serve_rejects_a_bad_ladder_option():
    proc = arena("serve", "--ladder", "bal=balloon", check=False)
    assert proc.returncode == 2 and "NAME=GAME:K" in proc.stderr
    proc = arena("serve", "--ladder", "b=boom:3:turbo", check=False)
    assert proc.returncode == 2 and "turbo" in proc.stderr


def test_members_keep_each_ladder_to_its_own_bots(tmp_path, db):
    proc = arena(
        "serve",
        "--db",
        str(db),
        "--ladder",
        "bal=balloon:2",
        "--ladder",
        "boo=boom:2",
        "--members",
        "bal=r1,r2",
        "--members",
        "boo=r2,r3",
        "--port",
        "0",
        "--web-port",
        str(free_port()),
        "--max-matches",
        "8",
        "--run-dir",
        str(tmp_path / "runs"),
        "--seed",
        "4",
        "--move-ms",
        "3000",
    )
    assert proc.returncode == 0, proc.stderr
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT l.name, b.name FROM results r JOIN matches m ON m.id = r.match_id "
        "JOIN ladders l ON l.id = m.ladder_id JOIN bots b ON b.id = r.bot_id"
    ).fetchall()
    con.close()
    played = {(ladder, bot) for ladder, bot in rows}
    assert {b for lad, b in played if lad == "bal"} == {"r1", "r2"}
    assert {b for lad, b in played if lad == "boo"} == {"r2", "r3"}


def test_members_must_name_a_ladder():
    proc = arena("serve", "--ladder", "bal=balloon:2", "--members", "nope=r1", check=False)
    assert proc.returncode == 2 and "LADDER=BOT" in proc.stderr


def test_a_match_in_progress_can_be_watched_live(tmp_path):
    db = tmp_path / "live.db"
    for name in ("s1", "s2", "s3"):  # strong bots think, so a match lasts long enough to watch
        arena(
            "bot",
            "add",
            name,
            "--command",
            "python example_bots/balloon_strong.py",
            "--db",
            str(db),
        )
    server = Server(tmp_path, db, ["--max-matches", "6"])
    try:
        wait_until(server.up, "the web server", server=server)

        def running_match():
            found = httpx.get(
                f"{server.web}/api/matches", params={"ladder": "bal", "status": "running"}
            ).json()["matches"]
            return found[0]["index"] if found else None

        index = wait_until(running_match, "a running match", server=server)

        def live_frames():
            live = httpx.get(
                f"{server.web}/api/ladders/bal/matches/{index}/live", params={"since": 0}
            )
            assert live.status_code == 200
            body = live.json()
            return body if body["frames"] else None

        # Frames come from the referee's live feed while the match is played (from the stored
        # replay if it ended between the requests). A match is running in the store from the
        # moment it is started, before its bots are seated and its deal made: the feed's first
        # frame may come a moment later.
        body = wait_until(live_frames, "the live feed's first frame", server=server)
        assert body["status"] in ("running", "completed")
        page = httpx.get(f"{server.web}/ladders/bal/matches/{index}")
        assert page.status_code == 200
    finally:
        assert server.stop() == 0


def test_the_admin_api_says_what_was_wrong(tmp_path):
    """A 3 MB suspension reason is refused (it would be on every bot page) and an unknown bot's
    404 keeps its own message, not the web app's "there is no page at ..."."""
    db = tmp_path / "admin.db"
    arena("bot", "add", "r1", "--command", RANDOM, "--db", str(db))
    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)
        key = {"X-Admin-Key": ADMIN}
        huge = httpx.post(
            f"{server.web}/api/admin/bots/r1/suspend",
            headers=key,
            json={"reason": "x" * 3_000_000},
            timeout=timing.scaled(30),
        )
        assert huge.status_code == 400
        message = huge.json()["error"]["message"]
        assert "at most 500 characters, not 3000000" in message and len(message) < 300
        assert httpx.get(f"{server.web}/api/bots/r1").json()["bot"]["suspended"] is False
        missing = httpx.post(
            f"{server.web}/api/admin/bots/nobody/suspend", headers=key, json={"reason": "gone"}
        )
        assert missing.status_code == 404
        assert "there is no bot called 'nobody'" in missing.json()["error"]["message"]
        match = httpx.get(f"{server.web}/api/admin/ladders/bal/matches/99999", headers=key)
        assert match.status_code == 404 and "has no match 99999" in match.text
        assert httpx.get(f"{server.web}/api/admin/ladders/bal/matches/0").status_code == 401
        nowhere = httpx.get(f"{server.web}/api/nowhere")
        assert nowhere.status_code == 404 and "there is no page at /api/nowhere" in nowhere.text
    finally:
        assert server.stop() == 0


def test_a_second_server_of_the_same_ladder_refuses_and_names_the_first(tmp_path, db):
    first = Server(tmp_path, db)
    try:
        wait_until(first.up, "the web server", server=first)
        second = Server(tmp_path, db)
        try:
            code = second.proc.wait(timing.scaled(60))
        finally:
            second.stop()
        assert code == 1, second.log_tail()
        assert (
            f"ladder 'bal' is being run by another arena process: pid {first.proc.pid} on "
            f"{socket.gethostname()}"
        ) in second.log.read_text()
        assert "Traceback" not in second.log.read_text()
        assert first.up()  # the first one serves on, untouched
    finally:
        assert first.stop() == 0
