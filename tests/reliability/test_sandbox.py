"""Launched bots in their bubblewrap sandbox, tried as a hostile bot author would.

Real bots in real sandboxes on a real referee: each way out is tried by `hostile_bot.py escape`
(files outside its directory and the database, other processes' environment, TCP to the
referee's port and to a listener the test opens, writing outside its work directory, a setsid
child and a double-forked grandchild) and `fork_bomb`. Each attempt must fail, the match must
complete, the other seats must play without a fault, and afterwards no process of the bot may be
left, checked by the pids the platform saw in its PID namespace.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from arena.games import make_game
from arena.referee import sandbox
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, ResourceLimits, namespace_members
from arena.store import Store
from tests.timing import scaled, wait_until

from .conftest import BOTS, FAST, ROOT, hostile, kinds, report_of, reported

pytestmark = pytest.mark.skipif(
    sandbox.unavailable_reason() is not None,
    reason=f"no sandbox here: {sandbox.unavailable_reason()}",
)

SECRET = "the other bot's private strategy"


def manifest_bot(directory: Path, script: str, files: dict[str, str] | None = None) -> Path:
    """A bot directory: arena-bot.toml, its script, and data files of its own."""
    directory.mkdir(parents=True)
    (directory / "arena-bot.toml").write_text('command = "python3 bot.py"\n')
    (directory / "bot.py").write_text(script)
    for name, text in (files or {}).items():
        (directory / name).write_text(text)
    return directory


# A bot that plays only if it can read the data file in its own directory.
BOOK_BOT = """
from pathlib import Path
from arena_sdk import Bot, run

BOOK = Path("book.txt").read_text()


class BookBot(Bot):
    def act(self, observation, legal_actions, match):
        return legal_actions[len(BOOK) % len(legal_actions)]


run(BookBot())
"""


class Listener:
    """A TCP listener on loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()
        self._thread.join(5)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def all_gone(pids: list[int], namespace: str) -> None:
    """Wait until none of `pids` is alive and the PID namespace is empty. The platform has
    killed them all when its host stops (it looks for about 2 s); the kernel ends killed
    processes asynchronously, later on a loaded machine: a short wait, scaled by the load."""
    wait_until(
        lambda: not [pid for pid in pids if alive(pid)] and not namespace_members(namespace),
        f"the sandbox's processes {pids} and its namespace's members to be gone",
        5,
    )


def test_a_bot_cannot_get_out_of_its_sandbox_and_leaves_no_process(tmp_path):
    db = tmp_path / "arena.db"
    Store(db).close()  # a real Arena database, which no bot may read
    neighbour = manifest_bot(
        tmp_path / "neighbour", BOOK_BOT, {"book.txt": "opening book", "secret.txt": SECRET}
    )
    admin_file = tmp_path / "admin-notes.txt"
    admin_file.write_text("the admin key")
    listener = Listener()
    run_dir = tmp_path / "run"
    planted = f"/tmp/arena-escape-{os.getpid()}.txt"

    async def main():
        async with RefereeHost(run_dir) as host:
            await host.launch("neighbour", _manifest_command(neighbour))
            await host.launch("good", _good())
            neighbour_pids = await _until_running(host, "neighbour")
            targets = {
                "read": [
                    str(db),
                    str(neighbour / "secret.txt"),
                    str(admin_file),
                    str(run_dir / "logs" / "neighbour.log"),
                    str(run_dir / "bots" / "neighbour"),
                    "/etc/shadow",
                    str(Path.home() / ".bash_history"),
                ],
                "environ_pids": neighbour_pids + [os.getpid(), 1],
                "tcp": [host.server.port, listener.port],
                "write": [
                    str(BOTS / "escaped.txt"),
                    str(run_dir / "escaped.txt"),
                    str(tmp_path / "escaped.txt"),
                    "/usr/escaped.txt",
                    "/escaped.txt",
                    str(Path(sandbox.python_paths()[0]) / "escaped.txt"),
                    planted,
                ],
            }
            escaper = await host.launch("escaper", hostile("escape", json.dumps(targets)))
            game = make_game("balloon", 3)
            result = await host.run_match(game, 11, ["escaper", "neighbour", "good"], FAST)
            report = report_of(run_dir, "escaper")
            # Everything it started is still running in its namespace: the bot, its setsid
            # child, its double-forked grandchild, and bubblewrap's init.
            inside = escaper.sandbox_pids()
            namespace = escaper._pid_namespace()
        return result, report, inside, namespace

    try:
        result, report, inside, namespace = asyncio.run(main())
    finally:
        listener.close()
    assert result.faults == (), result.faults
    assert report is not None, "the escaping bot reported nothing"
    print("FIGURE escape attempts:", json.dumps(report, indent=1))
    for kind in ("read", "environ", "tcp"):
        for target, outcome in report[kind].items():
            assert not outcome.startswith("ok"), (kind, target, outcome)
    for target, outcome in report["write"].items():
        if target == planted:  # its private /tmp is writable, and thrown away
            assert outcome.startswith("ok"), outcome
            assert not Path(planted).exists()
        else:
            assert not outcome.startswith("ok"), (target, outcome)
            assert not Path(target).exists(), target
    assert listener.accepted == 0
    # It sees only its own sandbox's processes, and runs as a user of its own.
    assert len(report["proc"]) <= 4, report["proc"]
    if os.geteuid() == 0:
        assert report["uid"] in sandbox.SANDBOX_UIDS and report["gid"] == report["uid"]
        assert report["groups"] == []
    assert report["children_ready"] == ["d", "s"]
    assert len(inside) >= 4, inside  # init, the bot, the setsid child, the grandchild
    assert namespace is not None
    # Afterwards: not one of those pids is alive, and the namespace is empty.
    all_gone(inside, namespace)


def test_a_fork_bomb_is_capped_and_ends_with_its_sandbox(tmp_path):
    limits = ResourceLimits(max_processes=48)

    async def main():
        async with RefereeHost(tmp_path, resource_limits=limits) as host:
            bomber = await host.launch("bomber", hostile("fork_bomb"))
            await host.launch("good", _good())
            await host.launch("good-2", _good())
            game = make_game("balloon", 3)
            result = await host.run_match(game, 3, ["bomber", "good", "good-2"], FAST)
            # It forks until it cannot, then reports: maybe after its match (it was retired).
            report = await reported(tmp_path, "bomber")
            inside = bomber.sandbox_pids()
            namespace = bomber._pid_namespace()
        return result, report, inside, namespace

    result, report, inside, namespace = asyncio.run(main())
    print(
        f"FIGURE fork bomb: {report['forked']} children, then {report['error']!r}; "
        f"{len(inside)} processes in its sandbox at the match's end"
    )
    assert report["error"], report
    if os.geteuid() == 0:  # RLIMIT_NPROC of its own user: threads and processes together
        assert report["forked"] < limits.max_processes
    assert kinds(result, 1) == [] and kinds(result, 2) == []
    assert result.moves and len(result.ranks) == 3
    all_gone(inside, namespace)


def test_bots_that_need_their_own_files_still_play(tmp_path):
    book = manifest_bot(tmp_path / "book", BOOK_BOT, {"book.txt": "opening book"})
    node = ROOT / "example_bots" / "node_random" / "index.js"

    async def main():
        async with RefereeHost(tmp_path / "run") as host:
            await host.launch("book", _manifest_command(book))
            await host.launch("node", BotCommand(("node", str(node)), None))
            await host.launch("good", _good())
            return await host.run_match(make_game("boom", 3), 2, ["book", "node", "good"], FAST)

    result = asyncio.run(main())
    assert result.faults == ()
    assert {m.seat for m in result.moves if not m.default} == {0, 1, 2}


def test_without_bubblewrap_launching_is_refused_with_what_to_do(tmp_path, monkeypatch):
    from arena.referee import launcher

    monkeypatch.setattr(
        launcher.sandbox,
        "unavailable_reason",
        lambda: (
            "bwrap is not installed; install it (apt-get install bubblewrap), or pass --no-sandbox"
        ),
    )

    async def main():
        async with RefereeHost(tmp_path) as host:
            await host.launch("good", _good())

    with pytest.raises(sandbox.SandboxUnavailable, match="--no-sandbox"):
        asyncio.run(main())


def _good() -> BotCommand:
    return BotCommand((sys.executable, str(BOTS / "fault_bot.py"), "good"), None)


def _manifest_command(directory: Path) -> BotCommand:
    from arena.referee.launcher import resolve_command

    return resolve_command(str(directory))


async def _until_running(host: RefereeHost, name: str) -> list[int]:
    """The pids of a launched bot's sandbox once it has connected."""
    conn = await host.server.directory.wait_for(name, scaled(20))
    assert conn is not None, f"{name} did not connect"
    return host.bots[name].sandbox_pids()


def test_kill_9_of_the_platform_ends_every_process_in_its_sandboxes(tmp_path):
    """The platform gives no order when it is killed -9: the kernel tells each bot's guard
    (PR_SET_PDEATHSIG), which ends its sandbox, setsid and double-forked children included."""
    import signal
    import subprocess
    import time

    from tests.procs import processes_in

    run_dir = tmp_path / "run"
    targets = json.dumps({"read": [], "environ_pids": [], "tcp": [], "write": []})
    escaper = f"python {BOTS / 'hostile_bot.py'} escape '{targets}'"
    hanger = f"python {BOTS / 'fault_bot.py'} hang"
    platform = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "match",
            "balloon",
            escaper,
            hanger,
            "--seed",
            "1",
            "--move-ms",
            "600000",
            "--run-dir",
            str(run_dir),
        ],
        cwd=ROOT,
        # The platform is killed -9 below: its temporary files go with the test's folder.
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        report = run_dir / "bots" / "hostile_bot" / "report.json"
        deadline = time.monotonic() + scaled(60)
        while not report.exists() and platform.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # polling for the bot's report: there is no event to wait on
        assert report.exists(), "the escaping bot never reported"
        bots = processes_in(run_dir)
        # The bot, its setsid child and its grandchild at least (and the hanging bot).
        assert len(bots) >= 4, bots
    finally:
        os.kill(platform.pid, signal.SIGKILL)
        platform.wait()
    deadline = time.monotonic() + scaled(10)
    while [p for p in bots if alive(p)] and time.monotonic() < deadline:
        time.sleep(0.02)  # the kernel ends them asynchronously; bounded
    assert [p for p in bots if alive(p)] == []
