"""`arena submit` against a server that is not Arena: a clear error naming what to check, never a
traceback (a real HTTP server on a free port of loopback)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main


class _NotArena(BaseHTTPRequestHandler):
    """Answers every POST as a plain web server might: a page, or an error page."""

    status = 200

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>"
        self.send_response(self.status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize("status", [200, 501])
def test_a_server_that_is_not_arena_gets_a_clear_error(tmp_path: Path, status: int):
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "arena-bot.toml").write_text('runtime = "python"\ncommand = ["bot.py"]\n')
    (bot / "bot.py").write_text("print('hello')\n")
    handler = type("Handler", (_NotArena,), {"status": status})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        result = CliRunner().invoke(
            main, ["submit", "--server", url, "--key", "k", "--bot", "b", str(bot)]
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert "is --server the address of arena serve" in result.output
    assert "<html>" not in result.output


@pytest.mark.parametrize("server", ["notaurl", "ftp://host:21", "http://", "host:8000"])
def test_a_server_that_is_no_web_address_is_refused(tmp_path, server):
    result = CliRunner().invoke(
        main, ["submit", "--server", server, "--key", "k", "--bot", "b", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert f"{server!r} is not a web address" in result.output
    assert "http://HOST:PORT" in result.output
