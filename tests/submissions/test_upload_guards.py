"""What an uploader can learn of the server, and how much they may upload, with `arena serve`
running for real (its own process, real SQLite, bots in the sandbox) and uploads over HTTP:

- a manifest's arguments reach the bot as written: probing /etc/passwd, the database and
  admin.key (absolute, or climbing out of the bot's folder with ..) shows the uploader the same
  thing whether the path exists on the server or not;
- names the file system cannot hold (400 bytes of UTF-8, bytes that are not UTF-8) are 422s
  saying so, and nothing of them is kept;
- the uploads per bot per day: past the limit a 429 with Retry-After and when, nothing kept, and
  the limit given to `arena serve` holds across a restart without the flag."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import tarfile
import time
import zipfile
from pathlib import Path

import httpx

from arena.store.snapshots import snapshot_root
from arena.submissions.archive import pack_directory
from tests.cli import run_arena
from tests.service.serving import RANDOM, Server, arena, wait_until
from tests.submissions import hostile

MANIFEST = 'runtime = "python"\ncommand = {command}\n'
# Says what it was given, and exits: its verification fails, with this in the owner's excerpt.
PRINT_ARGV = "import json, sys\nprint('ARGV ' + json.dumps(sys.argv[1:]), file=sys.stderr)\n"
PRINT_ARGV += "sys.exit(3)\n"


def owner_key(db: Path, name: str) -> str:
    added = arena("bot", "add", name, "--owner", "--db", str(db)).stdout
    return next(line for line in added.splitlines() if line.startswith("owner key")).split()[-1]


def archive_of(
    folder: Path, command: list[str], code: str = PRINT_ARGV, files: dict[str, str] | None = None
) -> bytes:
    """A bot's folder made and packed as `arena submit` packs it."""
    for name, text in {"bot.py": code, **(files or {})}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (folder / "arena-bot.toml").write_text(MANIFEST.format(command=json.dumps(command)))
    out = folder.with_suffix(".tar.gz")
    return pack_directory(folder, out).read_bytes()


def upload(server: Server, key: str, body: bytes, bot: str = "mine") -> httpx.Response:
    return httpx.post(
        f"{server.web}/api/bots/{bot}/versions",
        content=body,
        headers={"X-Owner-Key": key},
        timeout=60,
    )


def verdict(server: Server, key: str, version: int, bot: str = "mine") -> dict:
    def done():
        got = httpx.get(
            f"{server.web}/api/bots/{bot}/versions/{version}",
            headers={"X-Owner-Key": key},
            timeout=10,
        )
        assert got.status_code == 200, got.text
        return got.json() if got.json()["verdict"] is not None else None

    return wait_until(done, f"the verdict on version {version}", timeout=120, server=server)


def kept(db: Path, family: str) -> tuple[list[int], list[str]]:
    """The bot's versions in the store, and what is in its folder of the bot store."""
    con = sqlite3.connect(db, timeout=10)
    try:
        rows = con.execute("SELECT version FROM bots WHERE family = ? ORDER BY version", (family,))
        versions = [r[0] for r in rows]
    finally:
        con.close()
    folder = snapshot_root(db) / family
    return versions, sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_probing_the_servers_files_through_arguments_shows_nothing(tmp_path):
    db = tmp_path / "arena.db"
    for name in ("r1", "r2"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    key = owner_key(db, "mine")
    admin_key = tmp_path / "admin.key"
    admin_key.write_text("an-admin-key-for-the-probe-test\n")
    admin_key.chmod(0o600)
    up = "../../../"  # from a version's folder, arena.db.bots/mine/N, to the database's
    assert (snapshot_root(db) / "mine" / "1" / up / "arena.db").resolve() == db.resolve()
    pairs = {  # a path that exists on the server, and one that does not
        "/etc/passwd": "/etc/arena-no-such-file",
        f"{up}arena.db": f"{up}arena-no-such.db",
        f"{up}admin.key": f"{up}admin-no-such.key",
        str(admin_key): str(tmp_path / "admin-no-such.key"),
        f"--model={up}arena.db": f"--model={up}arena-no-such.db",
    }
    server = Server(
        tmp_path,
        db,
        ["--admin-key-file", str(admin_key), "--uploads-per-day", "50"],
        admin_env={"ARENA_ADMIN_KEY": None},
    )
    try:
        wait_until(server.up, "the web server", server=server)
        seen: dict[str, tuple[str, str]] = {}
        for i, probe in enumerate([p for pair in pairs.items() for p in pair]):
            answer = upload(server, key, archive_of(tmp_path / f"probe-{i}", ["bot.py", probe]))
            assert answer.status_code == 202, answer.text
            v = verdict(server, key, answer.json()["version"])
            assert v["status"] == "failed" and v["log_excerpt"], v
            argv_lines = [ln for ln in v["log_excerpt"].splitlines() if ln.startswith("ARGV ")]
            assert argv_lines == ["ARGV " + json.dumps([probe])], v["log_excerpt"]
            seen[probe] = (v["verdict"], v["log_excerpt"].replace(probe, "PROBE"))
        for there, missing in pairs.items():
            assert seen[there] == seen[missing], (there, missing)
        # A program naming the server's files is refused alike, whether they exist or not.
        messages = {}
        for i, program in enumerate([f"{up}arena.db", f"{up}arena-no-such.db", "/etc/passwd"]):
            answer = upload(server, key, archive_of(tmp_path / f"program-{i}", [program]))
            assert answer.status_code == 422, answer.text
            messages[program] = answer.json()["error"]["message"].replace(program, "PROGRAM")
        assert len(set(messages.values())) == 1, messages
        assert "leaves the bot's folder" in messages["/etc/passwd"]
        # And a bot's own files, named relative to its folder, are there for it.
        code = "import sys\nprint(open(sys.argv[1]).read(), file=sys.stderr)\nsys.exit(3)\n"
        files = {"data/note.txt": "MY-OWN-DATA-FILE\n"}
        body = archive_of(tmp_path / "own-file", ["bot.py", "data/note.txt"], code, files)
        answer = upload(server, key, body)
        assert answer.status_code == 202, answer.text
        assert "MY-OWN-DATA-FILE" in verdict(server, key, answer.json()["version"])["log_excerpt"]
    finally:
        assert server.stop() == 0, server.log_tail()


def test_names_the_file_system_cannot_hold_are_422s_and_nothing_is_kept(tmp_path):
    db = tmp_path / "arena.db"
    key = owner_key(db, "mine")
    good = {
        "arena-bot.toml": MANIFEST.format(command='["bot.py"]').encode(),
        "bot.py": b"print('hi')\n",
    }
    t = hostile.tar_member
    long_name = "é" * 200  # 200 characters, 400 bytes
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    archives = {
        "tar": hostile.write_tar(
            inputs / "long.tar.gz", [t(n, d) for n, d in good.items()] + [t(long_name, b"x")]
        ),
        "zip": hostile.write_zip(inputs / "long.zip", {**good, f"data/{'名' * 134}": b"x"}),
        "tar folder": hostile.write_tar(
            inputs / "long-dir.tar.gz",
            [t(n, d) for n, d in good.items()] + [t(f"{long_name}/a.py", b"x")],
        ),
    }
    not_utf8 = inputs / "latin1.tar"
    with tarfile.open(not_utf8, "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tf:
        for name, data in [*good.items(), ("caf\xe9.py", b"x")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)
        for what, archive in archives.items():
            answer = upload(server, key, archive.read_bytes())
            assert answer.status_code == 422, (what, answer.text)
            said = answer.json()["error"]["message"]
            assert "bytes" in said and "at most 255 bytes in UTF-8" in said, said
            assert "use a shorter name" in said and len(said) < 400, said
        answer = upload(server, key, not_utf8.read_bytes())
        assert answer.status_code == 422, answer.text
        assert "is not a UTF-8 name" in answer.json()["error"]["message"]
        assert kept(db, "mine") == ([], [])
        # The same bot with short names is taken.
        with zipfile.ZipFile(inputs / "fine.zip", "w") as zf:
            for name, data in good.items():
                zf.writestr(name, data)
        answer = upload(server, key, (inputs / "fine.zip").read_bytes())
        assert answer.status_code == 202, answer.text
        assert kept(db, "mine") == ([1], ["1"])
    finally:
        assert server.stop() == 0, server.log_tail()
    assert "Traceback" not in server.log.read_text()


def test_uploads_past_the_daily_limit_are_429s_and_the_limit_holds_across_restarts(tmp_path):
    db = tmp_path / "arena.db"
    key = owner_key(db, "mine")
    other = owner_key(db, "other")
    bodies = [archive_of(tmp_path / f"v{i}", ["bot.py", str(i)]) for i in range(5)]
    server = Server(tmp_path, db, ["--uploads-per-day", "2"])
    try:
        wait_until(server.up, "the web server", server=server)
        for body in bodies[:2]:
            assert upload(server, key, body).status_code == 202
        before = time.time()
        refused = upload(server, key, bodies[2])
        assert refused.status_code == 429, refused.text
        said = refused.json()["error"]["message"]
        assert "bot 'mine' has had 2 uploads in the last 24 hours" in said, said
        assert "the next may be uploaded at " in said and " UTC (in 24 h)" in said, said
        wait_s = int(refused.headers["Retry-After"])
        assert 24 * 3600 - 60 <= wait_s <= 24 * 3600 and time.time() - before < 60
        assert kept(db, "mine") == ([1, 2], ["1", "2"])  # nothing of the refused one
        # `arena submit` of a 12 MB bot (urllib sends it whole, then reads the answer) gets the
        # 429's message, not a connection reset mid-body.
        big = tmp_path / "big"
        archive_of(big, ["bot.py"], files={"data.txt": os.urandom(6 << 20).hex()})
        key_file = tmp_path / "mine.key"
        key_file.write_text(key + "\n")
        submit = run_arena(
            "submit", "--server", server.web, "--key-file", str(key_file), "--bot", "mine", str(big)
        )
        assert submit.returncode == 1, submit.stdout + submit.stderr
        assert "refused (429): bot 'mine' has had 2 uploads" in submit.stderr, submit.stderr
        assert kept(db, "mine") == ([1, 2], ["1", "2"])
        assert upload(server, other, bodies[0], bot="other").status_code == 202  # its own count
    finally:
        assert server.stop() == 0, server.log_tail()
    # Restarted without the flag: the stored limit (2), not the default (5).
    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)
        refused = upload(server, key, bodies[2])
        assert refused.status_code == 429 and "has had 2 uploads" in refused.text, refused.text
    finally:
        assert server.stop() == 0, server.log_tail()
    # Restarted with a higher one: one more upload, then refused again.
    server = Server(tmp_path, db, ["--uploads-per-day", "3"])
    try:
        wait_until(server.up, "the web server", server=server)
        assert upload(server, key, bodies[2]).status_code == 202
        refused = upload(server, key, bodies[3])
        assert refused.status_code == 429 and "has had 3 uploads" in refused.text, refused.text
        assert kept(db, "mine") == ([1, 2, 3], ["1", "2", "3"])
    finally:
        assert server.stop() == 0, server.log_tail()
