"""Hostile builds, contained end to end: `arena serve` running its ladder, four owners upload
with `arena submit` C++ bots whose `build = [...]` runs for ever, writes without bound, forks
without bound, or reaches for the network. Each version fails at its build step with a message
naming the limit it met, `arena submit` prints that step and its last lines, nothing of the
build is left (no process, no control group, no build folder or mount, no cache entry), and the
server plays matches on.

The server's build limits are small (`arena serve --build-time-s/--build-processes/
--build-disk-mb`), so the test waits for nothing but the first case's time limit; the four are
uploaded at once (one bot each: a bot's uploads are verified in turn, different bots' at once).
tests/reliability/test_hostile_builds.py has the same cases one level down, a build box alone."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from arena.referee import sandbox
from arena.referee.launcher import group_layout
from arena.runtimes import Runtimes
from arena.store.snapshots import snapshot_root
from tests.service.serving import RANDOM, Server, arena, wait_until
from tests.support.uploads import owner_key, start_submit
from tests.timing import scaled

pytestmark = [
    pytest.mark.skipif(
        sandbox.unavailable_reason() is not None,
        reason=f"no sandbox here: {sandbox.unavailable_reason()}",
    ),
    pytest.mark.skipif(
        bool(Runtimes().by_name["cpp"].missing()),
        reason=f"the cpp runtime lacks {Runtimes().by_name['cpp'].missing()} (scripts/setup)",
    ),
]

TOKEN = f"hostile-{uuid.uuid4().hex[:12]}"  # in every hostile command line: found if left
TIME_S = max(4, round(scaled(4)))  # the build time limit (a step that ends by itself: well under)
PROCESSES = 16
DISK_MB = 8

# bot: (its build script, what its failed step's detail says, a line of its output)
CASES = {
    "forever": (
        f'echo started-{TOKEN}; exec python3 -c "import time; time.sleep(600)" {TOKEN}',
        f"it did not finish within the build's {TIME_S} s (its time limit",
        f"started-{TOKEN}",
    ),
    "filler": (
        f"echo started-{TOKEN}; dd if=/dev/zero of=big bs=1M count=100",
        f"a build's folder holds at most {DISK_MB} MB",
        "No space left on device",
    ),
    "forker": (
        # Each shell forks two more, for ever (the forks are shells: TOKEN in each one's line).
        f": {TOKEN}; f() {{ f | f & }}; f; sleep 600",
        f"more than {PROCESSES} processes at once (its limit)",
        "",
    ),
    "caller": (
        # connect() of a UDP socket sends nothing: it only needs a route, which the
        # sandbox lacks (a documentation address, RFC 5737: no traffic to anyone either way).
        f'echo started-{TOKEN}; python3 -c "import socket; '
        f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(('192.0.2.1', 9))\" {TOKEN}",
        "it exited with code 1",
        "Network is unreachable",  # the sandbox has no network: its own empty loopback
    ),
}


def hostile_bot(folder: Path, name: str, script: str) -> Path:
    folder.mkdir()
    (folder / "arena-bot.toml").write_text(
        f'name = "{name}"\nruntime = "cpp"\ncommand = ["bot"]\n'
        f"build = {json.dumps(['sh', '-c', script])}\n"
    )
    return folder


def submit(server: Server, key_file: Path, folder: Path) -> subprocess.Popen:
    return start_submit(server, key_file, folder, 120, merged=True)


def completed(db: Path) -> int:
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute("SELECT count(*) FROM matches WHERE status = 'completed'").fetchone()[0]
    finally:
        con.close()


def left_processes() -> list[str]:
    """The command lines of the machine's processes that carry this test's token."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if TOKEN in line and "pytest" not in line:
            found.append(f"{pid}: {line}")
    return found


def build_groups(pid: int) -> list[str]:
    """The build control groups (arena.referee.build) the server process `pid` has now."""
    where = group_layout()
    if where is None:
        return []
    return [
        g.name
        for d in where.owner_dirs(pid)
        if d.is_dir()
        for g in d.iterdir()
        if g.name.startswith("build-")
    ]


@pytest.mark.timeout(scaled(300))
def test_hostile_builds_uploaded_to_a_serving_arena_fail_saying_why_and_leave_nothing(tmp_path):
    db = tmp_path / "arena.db"
    for name in ("r1", "r2", "r3"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    keys = {name: owner_key(db, name, tmp_path) for name in CASES}
    tmpdir = tmp_path / "tmp"  # the server's TMPDIR: where its builds' folders are made
    tmpdir.mkdir()
    limits = ["--build-time-s", str(TIME_S), "--build-processes", str(PROCESSES)]
    limits += ["--build-disk-mb", str(DISK_MB), "--build-memory-mb", "256"]
    server = Server(tmp_path, db, extra=limits, tmpdir=tmpdir)
    try:
        wait_until(server.up, "the web server", server=server)
        wait_until(lambda: completed(db) >= 1, "a first ladder match", server=server)
        uploads = {
            name: submit(server, keys[name], hostile_bot(tmp_path / name, name, script))
            for name, (script, _, _) in CASES.items()
        }
        for name, proc in uploads.items():
            said, _ = proc.communicate(timeout=scaled(180))
            script, detail, line = CASES[name]
            command = shlex.join(["sh", "-c", script])
            assert proc.returncode == 1, said + server.log_tail()
            step = next(s for s in said.splitlines() if s.startswith(f"build `{command}`: "))
            assert "FAILED: " in step and detail in step, said
            if line:  # the step's last lines
                assert "its output (the last 20 lines):" in said and line in said, said
            verdict = next(s for s in said.splitlines() if s.startswith("verdict: "))
            assert verdict.startswith(f"verdict: failed: build ({command}): "), said
            assert detail in verdict and verdict.endswith("(status: failed)"), said
            if name == "forker":  # stopped when it met its process limit, not its time's
                assert "did not finish within" not in said, said
        # Nothing of the builds is left: each ended before its verdict was recorded.
        assert left_processes() == []
        assert build_groups(server.proc.pid) == []
        assert list(tmpdir.glob("arena-build-*")) == []
        assert str(tmpdir) not in Path("/proc/self/mounts").read_text()
        cache = snapshot_root(db) / ".runtimes"  # the server's own (no --build-cache)
        assert list(cache.glob("*/*")) == [], list(cache.glob("*/*"))
        # The server plays on.
        before = completed(db)
        wait_until(lambda: completed(db) > before, "a ladder match after the builds", server=server)
    finally:
        assert server.stop() == 0, server.log_tail()
