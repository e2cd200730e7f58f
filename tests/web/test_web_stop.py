"""Ctrl-C stops `arena web` and `arena serve` at once while event streams are open: the live
feeds are closed as the server stops, so uvicorn's graceful stop does not wait out the streams'
30 s (real processes, a real server-sent event client, SIGINT)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.service.serving import free_port, wait_until
from tests.timing import scaled

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 10.0  # without closing the feeds, the streams held the server up to 30 s


def _serve(command: list[str], log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "arena", *command],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stops_at_once_with_a_stream_open(
    proc: subprocess.Popen, url: str, ladder: str, log: Path
) -> None:
    def up() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited ({proc.returncode}):\n{log.read_text()}")
        try:
            return httpx.get(f"{url}/api/ladders", timeout=scaled(2)).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, "the web server to answer")
        # The stream's first line needs the server's CPU: its wait scales with the machine's
        # load; the stop's deadline is the behaviour under test and does not.
        with httpx.Client(timeout=httpx.Timeout(scaled(DEADLINE_S))) as client:
            with client.stream("GET", f"{url}/api/ladders/{ladder}/events") as stream:
                assert stream.status_code == 200
                lines = stream.iter_lines()
                assert next(lines).startswith("retry:")  # the stream is open
                started = time.monotonic()
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(DEADLINE_S)
                except subprocess.TimeoutExpired:
                    pytest.fail(f"still running {DEADLINE_S} s after Ctrl-C:\n{log.read_text()}")
                stopped = time.monotonic() - started
        assert stopped < DEADLINE_S
        with socket.socket() as sock:  # the port is free again
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", int(url.rsplit(":", 1)[1])))
        assert "Traceback" not in log.read_text(), log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_arena_web_stops_at_once_on_ctrl_c_with_a_stream_open(tmp_path, web_db):
    port, log = free_port(), tmp_path / "web.log"
    proc = _serve(["web", "--db", str(web_db), "--port", str(port)], log)
    _stops_at_once_with_a_stream_open(proc, f"http://127.0.0.1:{port}", "balloon3", log)


def test_arena_serve_stops_at_once_on_ctrl_c_with_a_stream_open(tmp_path):
    port, log = free_port(), tmp_path / "serve.log"
    command = ["serve", "--db", str(tmp_path / "arena.db"), "--ladder", "bal=balloon:3"]
    command += ["--port", "0", "--web-port", str(port), "--run-dir", str(tmp_path / "runs")]
    proc = _serve(command, log)
    _stops_at_once_with_a_stream_open(proc, f"http://127.0.0.1:{port}", "bal", log)
