"""`arena serve` for tests: a server process on free ports with its log in a file, the `arena`
command run to its end, waiting for a condition with a deadline, and the ladder matches a bot
played."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import httpx

from tests import timing
from tests.cli import free_ports, run_arena, serve_args, start_arena

RANDOM = "python example_bots/random_bot.py"
ADMIN = "s3cret-admin-key"


def free_port() -> int:
    return free_ports(1)[0]


def arena(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = run_arena(*args)
    if check and proc.returncode != 0:
        raise AssertionError(f"arena {args} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def wait_until(condition, what: str, timeout: float = 90.0, server: "Server | None" = None):
    """Poll `condition()` until it holds, for `timeout` seconds on a quiet machine (scaled by
    its load: tests/timing.py); fail at once if the server exits, with its log."""

    def exited() -> str | None:
        if server is None or server.proc.poll() is None:
            return None
        return f"the server exited ({server.proc.returncode}); its log:\n{server.log_tail()}"

    try:
        return timing.wait_until(condition, what, timeout, gave_up=exited, poll_s=0.05)
    except AssertionError as e:
        if server is None or server.proc.poll() is not None:
            raise
        raise AssertionError(f"{e}; the server's log:\n{server.log_tail()}") from None


class Server:
    """`arena serve` in its own session; the admin key comes from the environment unless
    `admin_env` says otherwise (variables to set, None to unset); it runs `ladder` (None: only
    what `extra` names, a competition say); `tmpdir`: its TMPDIR, when a test looks there (for
    what the server's builds leave behind, say)."""

    def __init__(
        self,
        tmp: Path,
        db: Path,
        extra: list[str] = (),
        admin_env: dict[str, str | None] | None = None,
        ladder: str | None = "bal=balloon:3",
        tmpdir: Path | None = None,
    ):
        env = dict(os.environ)
        for key, value in (admin_env or {"ARENA_ADMIN_KEY": ADMIN}).items():
            env.pop(key, None)
            if value is not None:
                env[key] = value
        self.port, self.web_port = free_ports(2)
        # The server's log goes to a file, not a pipe: nobody reads a pipe while the server
        # runs, and a full one would stop it mid-write. A failure shows the file's tail.
        self.log = tmp / f"serve-{len(list(tmp.glob('serve-*.log')))}.log"
        options = [
            "--run-dir",
            str(tmp / "runs"),
            "--seed",
            "1",
            "--move-ms",
            "3000",
            "--grace",
            "20",
        ]
        command = serve_args(
            ladder, *options, *extra, db=db, port=self.port, web_port=self.web_port
        )
        with open(self.log, "w") as log:  # the child keeps its own descriptor
            self.proc = start_arena(
                *command,
                stdout=subprocess.DEVNULL,
                stderr=log,
                text=True,
                start_new_session=True,
                env=env,
                tmp=tmpdir,
            )
        self.web = f"http://127.0.0.1:{self.web_port}"

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def up(self) -> bool:
        try:
            return httpx.get(f"{self.web}/api/ladders", timeout=timing.scaled(2)).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timing.scaled(60))  # a graceful stop: matches, bots, store
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def played(db: Path, bot: str) -> int:
    """Completed ladder matches the bot row `bot` had a seat in."""
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute(
            "SELECT count(*) FROM matches m, json_each(m.seats) s JOIN bots b ON b.id = s.value "
            "WHERE m.status = 'completed' AND b.name = ?",  # seats: bot ids
            (bot,),
        ).fetchone()[0]
    finally:
        con.close()
