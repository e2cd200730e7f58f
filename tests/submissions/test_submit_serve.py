"""Submitting for real: `arena serve` running, an owner uploads a bot directory with `arena
submit` (the CLI, a process of its own); the version is verified in the sandbox, passes, and
plays ladder matches; a broken version (it crashes as it starts) is refused with its log excerpt
printed by `arena submit`, and the older version keeps playing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.cli import ROOT
from tests.service.serving import RANDOM, Server, arena, played, wait_until
from tests.timing import scaled

MARKER = "BROKEN-BOT-MARKER"


def bot(folder: Path, code: str) -> Path:
    folder.mkdir()
    (folder / "arena-bot.toml").write_text(
        'name = "mine"\nruntime = "python"\ncommand = ["bot.py"]\n'
    )
    (folder / "bot.py").write_text(code)
    return folder


def submit(server: Server, key_file: Path, folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", "submit", "--server", server.web, "--key-file",
         str(key_file), "--timeout", "120", str(folder)],
        cwd=ROOT, text=True, capture_output=True, timeout=scaled(180),
    )  # fmt: skip


def test_an_owner_submits_a_bot_that_plays_then_a_broken_version_is_refused(tmp_path):
    db = tmp_path / "arena.db"
    for name in ("r1", "r2"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    added = arena("bot", "add", "mine", "--owner", "--db", str(db)).stdout
    key = next(line for line in added.splitlines() if line.startswith("owner key")).split()[-1]
    key_file = tmp_path / "owner.key"
    key_file.write_text(key + "\n")
    good = bot(tmp_path / "good", (ROOT / "example_bots" / "random_bot.py").read_text())
    broken = bot(
        tmp_path / "broken",
        f"import sys\nprint('{MARKER}: no model file', file=sys.stderr)\nsys.exit(3)\n",
    )
    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)
        wrong_key = tmp_path / "wrong.key"
        wrong_key.write_text("arena_owner_not-the-key\n")
        refused = submit(server, wrong_key, good)
        assert refused.returncode == 1 and "refused (401)" in refused.stderr, refused.stderr
        passed = submit(server, key_file, good)
        assert passed.returncode == 0, passed.stdout + passed.stderr + server.log_tail()
        assert "as version 1 of mine" in passed.stdout and "verdict: passed" in passed.stdout
        wait_until(lambda: played(db, "mine") >= 1, "a ladder match of mine", server=server)

        failed = submit(server, key_file, broken)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "as version 2 of mine" in failed.stdout and "verdict: failed" in failed.stdout
        assert MARKER in failed.stdout  # the log excerpt, printed for its author
        before = played(db, "mine")
        wait_until(lambda: played(db, "mine") > before, "mine playing on", server=server)
        assert played(db, "mine@2") == 0
    finally:
        assert server.stop() == 0, server.log_tail()
    con = sqlite3.connect(db)
    statuses = dict(con.execute("SELECT name, status FROM bots WHERE family = 'mine'"))
    con.close()
    assert statuses == {"mine": "active", "mine@2": "failed"}
