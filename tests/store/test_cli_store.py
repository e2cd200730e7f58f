"""The store's refusals as a user meets them: the `arena` command line as real processes, on
real SQLite files (damaged, foreign, read-only in a read-only folder), and commands and names
refused at registration."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import httpx

from arena.store import QUICK_CHECK_READ_MAX
from arena.web.sample import build_demo
from tests.cli import ROOT, free_ports
from tests.store.helpers import damage, digest, foreign_db, schema
from tests.support.ladders import arena
from tests.support.unprivileged import unprivileged
from tests.timing import scaled, wait_until


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------- damage


def test_a_damaged_database_is_refused_by_every_command_and_left_as_it_was(tmp_path):
    db = tmp_path / "arena.db"
    build_demo(str(db))
    damage(db)
    before = digest(db)
    for args in (
        ["rankings"],
        ["ladder", "list"],
        ["bot", "list"],
        ["bot", "add", "x", "--remote"],
        ["report", "--out", str(tmp_path / "site")],
        [
            "ladder",
            "run",
            "balloon3",
            "--game",
            "balloon",
            "-k",
            "3",
            "--bots",
            "alice,bob,carol,dave,erin,frank",
            "--seed",
            "11",
            "--no-progress",
        ],
    ):
        proc = arena(*args, "--db", str(db), check=False)
        no_traceback(proc)
        assert f"database {db} is damaged" in proc.stderr, (args, proc.stderr)
        assert f"sqlite3 {db} .recover" in proc.stderr
    assert digest(db) == before


def big_damaged_db(tmp_path: Path) -> Path:
    """A database too big for the check at every read-only open (past QUICK_CHECK_READ_MAX),
    with its matches' root page overwritten."""
    db = tmp_path / "arena.db"
    build_demo(str(db))
    con = sqlite3.connect(db)
    con.executemany(
        "INSERT INTO infra_failures (match_id, attempt, detail, at) VALUES (1, 1, ?, 0)",
        [("x" * 4000,)] * 1500,
    )  # ~6 MB
    con.commit()
    con.close()
    assert db.stat().st_size > QUICK_CHECK_READ_MAX
    damage(db)
    return db


def test_damage_past_the_open_check_is_still_one_clear_message(tmp_path):
    """`arena report` meets the damaged page mid-way and says so, without a traceback."""
    db = big_damaged_db(tmp_path)
    proc = arena("report", "--db", str(db), "--out", str(tmp_path / "site"), check=False)
    no_traceback(proc)
    assert f"database {db} is damaged (database disk image is malformed)" in proc.stderr


def test_the_web_pages_say_a_page_met_damage(tmp_path):
    from fastapi.testclient import TestClient

    from arena.web.factory import create_app

    db = big_damaged_db(tmp_path)
    with TestClient(create_app(db)) as client:
        assert client.get("/api/ladders").status_code == 200  # sound pages still serve
        page = client.get("/api/ladders/balloon3/matches/0")
    assert page.status_code == 503
    assert f"database {db} is damaged" in page.text and ".recover" in page.text


# --------------------------------------------------------------------- foreign files


def test_a_foreign_database_gets_no_arena_tables(tmp_path):
    db = foreign_db(tmp_path / "other_app.db")
    before = digest(db)
    for args in (["bot", "list"], ["bot", "add", "x", "--remote"], ["rankings"]):
        proc = arena(*args, "--db", str(db), check=False)
        no_traceback(proc)
        assert f"{db} is not an Arena database" in proc.stderr
        assert "Arena leaves it untouched" in proc.stderr
    assert digest(db) == before and schema(db) == ["notes"]


# ------------------------------------------------------------------ read-only folders


def run_unprivileged(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        unprivileged(list(args)), cwd=ROOT, text=True, capture_output=True, timeout=scaled(120)
    )


def test_reading_commands_work_on_a_read_only_database_in_a_read_only_folder(readonly_copy):
    db, out = readonly_copy
    before = digest(db)
    rankings = run_unprivileged("rankings", "balloon3", "--db", str(db))
    assert rankings.returncode == 0, rankings.stderr
    assert "balloon3: balloon" in rankings.stdout and "alice" in rankings.stdout
    bots = run_unprivileged("bot", "list", "--db", str(db))
    assert bots.returncode == 0 and bots.stdout.split()[0] == "alice", bots.stderr
    ladders = run_unprivileged("ladder", "list", "--db", str(db))
    assert ladders.returncode == 0 and "boom4" in ladders.stdout, ladders.stderr
    report = run_unprivileged("report", "--db", str(db), "--out", str(out / "site"))
    assert report.returncode == 0, report.stderr
    assert (out / "site" / "index.html").is_file()
    # Writing is refused with the reason, not attempted.
    add = run_unprivileged("bot", "add", "x", "--remote", "--db", str(db))
    assert add.returncode == 1 and "not writable" in add.stderr, add.stderr
    assert digest(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["arena.db"]  # no -wal, no -shm


def test_the_web_pages_serve_a_read_only_database_in_a_read_only_folder(readonly_copy):
    db, _ = readonly_copy
    (port,) = free_ports(1)
    proc = subprocess.Popen(
        unprivileged(["web", "--db", str(db), "--port", str(port)]),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    # A fresh interpreter importing the web stack, then its first page: CPU-bound, so every
    # wait here scales with the machine's load (tests/timing.py).
    def answer() -> httpx.Response | None:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/api/ladders", timeout=scaled(2))
        except httpx.HTTPError:
            return None

    def exited() -> str | None:
        if proc.poll() is None:
            return None
        return f"`arena web` exited ({proc.returncode}):\n{proc.stderr.read()}"

    try:
        ladders = wait_until(answer, "`arena web` to answer /api/ladders", 60, gave_up=exited)
        assert ladders.status_code == 200
        assert {lad["name"] for lad in ladders.json()} == {"balloon3", "boom4"}
        page = httpx.get(f"http://127.0.0.1:{port}/ladders/boom4", timeout=scaled(10))
        assert page.status_code == 200
    finally:
        proc.terminate()
        proc.wait(scaled(30))


# ------------------------------------------------------------------ commands and names


def test_a_command_with_shell_syntax_is_refused_at_registration(tmp_path):
    (tmp_path / "ok.py").write_text("print('hi')\n")
    db = tmp_path / "arena.db"
    proc = arena(
        "bot",
        "add",
        "x",
        "--command",
        "python ok.py; rm -rf X",
        "--db",
        str(db),
        cwd=tmp_path,
        check=False,
    )
    no_traceback(proc)
    assert "runs without a shell" in proc.stderr and "';'" in proc.stderr
    assert "no bots yet" in arena("bot", "list", "--db", str(db)).stdout


def test_a_bad_ladder_name_is_refused_as_a_ladder_name(tmp_path):
    db = tmp_path / "arena.db"
    for name in ("a", "b"):
        arena("bot", "add", name, "--remote", "--db", str(db))
    proc = arena(
        "ladder",
        "run",
        "my ladder!",
        "--game",
        "balloon",
        "-k",
        "2",
        "--bots",
        "a,b",
        "--db",
        str(db),
        "--no-progress",
        check=False,
    )
    no_traceback(proc)
    assert "ladder name 'my ladder!' is not allowed" in proc.stderr
    assert "bot name" not in proc.stderr
