"""A whole competition for real: `arena competition create` from a config, `arena serve
--competition`, an owner's upload through `arena submit` verified and playing the open ladder,
the freeze by `arena competition advance`, a late upload refused, the finals begun by the clock
among the frozen versions, the server killed with -9 in the middle of them and restarted, the
standings published, and `arena competition verify` accepting the archive and rejecting one
with a changed result."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.store import Store
from tests.cli import ROOT
from tests.service.serving import RANDOM, Server, wait_until
from tests.support.competitions import config_text
from tests.timing import scaled

CONFIG = config_text(
    top='bots = ["r1", "r2", "mine"]',
    phases='freeze = "1h"\nfinals = "1s"',  # frozen by hand; the finals a second later
    finals="confidence = 0.95\nmax_matches = 6",  # 3 entrants at tables of 3: two rounds
)

# One match at a time: every bot then runs one process (a lane each match in flight).
SERVE = ["--competition", "cup", "-j", "1"]


def arena(*args: str, exit_code: int = 0):
    """`arena ARGS` in this process (its imports are loaded already: a second each saved); the
    server and the uploads are processes of their own."""
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == exit_code, (args, result.output, result.exception)
    return result


def submit(server: Server, key_file: Path, folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", "submit", "--server", server.web, "--key-file",
         str(key_file), "--timeout", "120", str(folder)],
        cwd=ROOT, text=True, capture_output=True, timeout=scaled(180),
    )  # fmt: skip


def query(db: Path, sql: str, *args) -> list[tuple]:
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def completed(db: Path, ladder: str) -> dict[int, str]:
    """The ladder's completed matches: index -> its result (the scores, as stored)."""
    rows = query(
        db,
        "SELECT m.idx, group_concat(r.score) FROM matches m JOIN ladders l ON l.id = "
        "m.ladder_id JOIN results r ON r.match_id = m.id WHERE l.name = ? AND "
        "m.status = 'completed' GROUP BY m.idx",
        ladder,
    )
    return dict(rows)


def joined(db: Path, ladder: str) -> set[str]:
    """The bots that joined the ladder."""
    rows = query(
        db,
        "SELECT b.name FROM ladder_bots lb JOIN bots b ON b.id = lb.bot_id JOIN ladders l "
        "ON l.id = lb.ladder_id WHERE l.name = ?",
        ladder,
    )
    return {name for (name,) in rows}


def phase(db: Path) -> str:
    return query(db, "SELECT phase FROM competitions WHERE name = 'cup'")[0][0]


def test_a_competition_from_open_uploads_to_verified_standings(tmp_path):
    db = tmp_path / "arena.db"
    with Store(db) as store:  # the house bots and the owner's bot: set-up, not under test
        for name in ("r1", "r2"):
            store.add_bot(name, RANDOM, cwd=ROOT)
        key = store.new_owner_key("mine")
    key_file = tmp_path / "owner.key"
    key_file.write_text(key + "\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "arena-bot.toml").write_text(
        'name = "mine"\nruntime = "python"\ncommand = ["bot.py"]\n'
    )
    (mine / "bot.py").write_text((ROOT / "example_bots" / "random_bot.py").read_text())
    config = tmp_path / "cup.toml"
    config.write_text(CONFIG)
    created = arena("competition", "create", str(config), "--db", str(db))
    assert "competition cup is open" in created.output

    server = Server(tmp_path, db, extra=SERVE, ladder=None)
    try:
        wait_until(server.up, "the web server", server=server)
        passed = submit(server, key_file, mine)
        assert passed.returncode == 0, passed.stdout + passed.stderr + server.log_tail()
        wait_until(lambda: "mine" in joined(db, "cup.open"), "mine in the ladder", server=server)
        frozen = arena("competition", "advance", "cup", "--db", str(db))
        assert "open -> frozen" in frozen.output and "entrants: mine, r1, r2" in frozen.output
        (mine / "bot.py").write_text((mine / "bot.py").read_text() + "\n# version 2\n")
        late = submit(server, key_file, mine)
        assert late.returncode == 1 and "refused (403)" in late.stderr, late.stderr
        assert "uploads closed at its freeze" in late.stderr
        # The clock starts the finals; the server is killed once one of their matches is in.
        wait_until(lambda: completed(db, "cup.finals"), "a match of the finals", server=server)
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
    finally:
        if server.proc.poll() is None:
            server.stop()
    before = completed(db, "cup.finals")
    assert phase(db) == "finals"

    again = Server(tmp_path, db, extra=SERVE, ladder=None)
    try:
        wait_until(lambda: phase(db) == "published", "the standings", server=again)
    finally:
        assert again.stop() == 0, again.log_tail()
    after = completed(db, "cup.finals")
    assert len(after) == 6  # two rounds of one set of 3 matches: each played once
    assert {i: after[i] for i in before} == before  # what was in before the kill stays
    shown = json.loads(arena("competition", "show", "cup", "--json", "--db", str(db)).output)
    assert shown["entrants"] == ["mine", "r1", "r2"]  # mine@2 was never made
    assert shown["finals_end"] == "budget"
    assert sorted(s["bot"] for s in shown["standings"]) == ["mine", "r1", "r2"]
    assert all(s["matches"] == 6 for s in shown["standings"])

    out = tmp_path / "cup.zip"
    arena("competition", "archive", "cup", "-o", str(out), "--db", str(db))
    accepted = arena("competition", "verify", str(out))
    assert "accepted: 6 matches replayed" in accepted.output
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(out) as zin, zipfile.ZipFile(tampered, "w") as zout:
        for item in zin.namelist():
            raw = zin.read(item)
            if item == "matches/000004.json":
                doc = json.loads(raw)
                doc["replay"]["scores"][1] += 5
                raw = json.dumps(doc).encode()
            zout.writestr(item, raw)
    rejected = arena("competition", "verify", str(tampered), exit_code=1)
    assert "match 4: the replay does not reproduce its result" in rejected.stderr
