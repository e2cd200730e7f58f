"""Scrimmages for real: `arena serve` running its ladder, a bot's owner asks with `arena
scrimmage` (the CLI, a process of its own) for unrated duplicate sets against chosen opponents;
they are played by launched bot processes beside the ladder, their results and replays are the
owner's alone (key only), never in a rating or the public API, within a quota of sets a day;
a request that cannot be played is refused saying why."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx

from arena import replay
from tests.cli import ROOT
from tests.service.serving import RANDOM, Server, arena, wait_until
from tests.timing import scaled


def scrimmage(server: Server, key_file: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", "scrimmage", "mine", "--server", server.web,
         "--key-file", str(key_file), "--timeout", str(scaled(120)), *args],
        cwd=ROOT, text=True, capture_output=True, timeout=scaled(180),
    )  # fmt: skip


def test_an_owner_scrimmages_chosen_opponents_unrated_private_and_within_a_quota(tmp_path):
    db = tmp_path / "arena.db"
    for name in ("r1", "r2", "r3"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    added = arena("bot", "add", "mine", "--command", RANDOM, "--owner", "--db", str(db)).stdout
    key = next(line for line in added.splitlines() if line.startswith("owner key")).split()[-1]
    key_file = tmp_path / "owner.key"
    key_file.write_text(key + "\n")
    server = Server(tmp_path, db, extra=["--scrimmage-sets-per-day", "3"])
    api = f"{server.web}/api/bots/mine/scrimmages"
    try:
        wait_until(server.up, "the web server", server=server)
        # What cannot be played is refused, saying why, and takes nothing of the quota.
        for against, why in (
            ("r1", "seats 3 at a table: name 2 opponents, not 1"),
            ("r1,nobody", "'nobody' may not play now in ladder 'bal'"),
            ("r1,mine", "'mine' is a version of 'mine' itself"),
        ):
            refused = scrimmage(server, key_file, "--against", against)
            assert refused.returncode == 1, refused.stdout
            assert "refused (422)" in refused.stderr and why in refused.stderr, refused.stderr
        assert httpx.get(api).status_code == 401  # no key
        assert httpx.get(api, headers={"X-Owner-Key": "arena_owner_wrong"}).status_code == 401

        done = scrimmage(server, key_file, "--against", "r1,r2", "--sets", "2")
        assert done.returncode == 0, done.stdout + done.stderr + server.log_tail()
        assert "2 set(s) of mine against r1, r2 (unrated)" in done.stdout
        assert "(done): 6 of 6 matches played" in done.stdout, done.stdout
        assert "mine over r1:" in done.stdout and "mine over r2:" in done.stdout

        listing = httpx.get(api, headers={"X-Owner-Key": key}).json()
        assert listing["sets_per_day"] == 3
        (made,) = listing["scrimmages"]
        doc = httpx.get(f"{api}/{made['id']}", headers={"X-Owner-Key": key}).json()
        assert doc["status"] == "done" and doc["rated"] is False
        matches = doc["matches"]
        assert [(m["set"], m["rotation"]) for m in matches] == [
            (s, r) for s in range(2) for r in range(3)
        ]
        for m in matches:
            assert m["status"] == "completed" and sorted(m["seats"]) == ["mine", "r1", "r2"]
            # Each set one deal, the seats rotated; every replay re-runs to its result.
            doc_replay = m["replay"]
            assert doc_replay["seat_names"] == m["seats"]
            assert doc_replay["scores"] == m["scores"]
            replay.verify(replay.check(doc_replay, f"match {m['index']}"))
        seeds = {m["replay"]["seed"] for m in matches}
        assert len(seeds) == 2

        # The quota: 2 of 3 sets used; 2 more are refused, saying when more may be asked for.
        over = scrimmage(server, key_file, "--against", "r1,r3", "--sets", "2")
        assert over.returncode == 1 and "refused (429)" in over.stderr, over.stderr
        assert "may have 3 scrimmage sets in 24 hours; it has had 2" in over.stderr
        one_more = scrimmage(server, key_file, "--against", "r2,r3", "--no-wait")
        assert one_more.returncode == 0, one_more.stderr
    finally:
        assert server.stop() == 0, server.log_tail()
    # Never rated, never a ladder's match: no match of the ladder has a scrimmage's deal, and
    # the ladder's standings count only its own matches.
    con = sqlite3.connect(db)
    try:
        placeholders = ", ".join("?" for _ in seeds)
        assert con.execute(
            f"SELECT count(*) FROM matches WHERE seed IN ({placeholders})", tuple(seeds)
        ).fetchone() == (0,)
        counted = dict(
            con.execute(
                "SELECT b.name, r.matches FROM ratings r JOIN bots b ON b.id = r.bot_id"
            ).fetchall()
        )
        seated = dict(
            con.execute(
                "SELECT b.name, count(*) FROM results r JOIN matches m ON m.id = r.match_id "
                "JOIN bots b ON b.id = r.bot_id WHERE m.rated = 1 GROUP BY b.name"
            ).fetchall()
        )
    finally:
        con.close()
    assert {b: n for b, n in counted.items() if n} == seated
