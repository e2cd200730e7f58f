"""The admin key is never on a command line: `arena serve` reads it from ARENA_ADMIN_KEY or
from a file (--admin-key-file), refuses `--admin-key VALUE`, and refuses a key file it cannot
use with a message saying what to do."""

from __future__ import annotations

import os
from pathlib import Path

import click
import httpx
import pytest

from arena.cli.serve import read_admin_key
from tests.cli import run_arena, serve_args
from tests.service.serving import ADMIN, Server, arena, wait_until


def key_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "admin.key"
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.mark.parametrize("source", ["env", "file"])
def test_the_admin_api_takes_the_key_from_the_environment_or_a_file(tmp_path, source):
    db = tmp_path / "arena.db"
    arena("bot", "add", "r1", "--command", "python example_bots/random_bot.py", "--db", str(db))
    if source == "env":
        server = Server(tmp_path, db, admin_env={"ARENA_ADMIN_KEY": ADMIN})
    else:
        path = key_file(tmp_path, ADMIN + "\n")  # a trailing newline, as editors write
        server = Server(
            tmp_path, db, ["--admin-key-file", str(path)], admin_env={"ARENA_ADMIN_KEY": None}
        )
    try:
        wait_until(server.up, "the web server", server=server)
        cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes()
        assert ADMIN.encode() not in cmdline  # what ps shows every user
        url = f"{server.web}/api/admin/bots"
        wrong = httpx.post(
            url, json={"name": "x", "remote": True}, headers={"X-Admin-Key": ADMIN + "x"}
        )
        assert wrong.status_code == 401
        right = httpx.post(
            url, json={"name": "api-bot", "remote": True}, headers={"X-Admin-Key": ADMIN}
        )
        assert right.status_code == 201, right.text
    finally:
        assert server.stop() == 0
    assert "can be read by other users" not in server.log.read_text()


def test_without_a_key_the_admin_api_is_off(tmp_path):
    db = tmp_path / "arena.db"
    arena("bot", "add", "r1", "--command", "python example_bots/random_bot.py", "--db", str(db))
    server = Server(tmp_path, db, admin_env={"ARENA_ADMIN_KEY": None})
    try:
        wait_until(server.up, "the web server", server=server)
        off = httpx.post(
            f"{server.web}/api/admin/bots",
            json={"name": "x", "remote": True},
            headers={"X-Admin-Key": ""},
        )
        assert off.status_code == 403
        assert "--admin-key-file" in off.json()["error"]["message"]
    finally:
        assert server.stop() == 0


def serve_refuses(*args: str, env: dict[str, str] | None = None) -> str:
    """Run `arena serve` with arguments it must refuse before starting; its stderr."""
    environ = {k: v for k, v in os.environ.items() if k != "ARENA_ADMIN_KEY"}
    environ.update(env or {})
    proc = run_arena(*serve_args("bal=balloon:3", *args), timeout=60, env=environ)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    return proc.stderr


def test_a_key_on_the_command_line_is_refused_with_what_to_use_instead():
    err = serve_refuses("--admin-key", ADMIN)
    assert "--admin-key-file" in err and "ARENA_ADMIN_KEY" in err and "ps" in err


def test_help_names_both_ways_to_give_the_key():
    out = arena("serve", "--help").stdout
    assert "--admin-key-file" in out and "ARENA_ADMIN_KEY" in out
    assert "--admin-key " not in out  # the refused option is not offered


@pytest.mark.parametrize(
    "case, expected",
    [
        ("missing", "there is no file"),
        ("empty", "is empty"),
        ("blank", "is empty"),
        ("not text", "cannot read the admin key"),
        ("a directory", "directory"),
    ],
)
def test_a_key_file_that_cannot_be_used_is_refused(tmp_path, case, expected):
    path = tmp_path / "admin.key"
    if case == "empty":
        key_file(tmp_path, "")
    elif case == "blank":
        key_file(tmp_path, " \n\n")
    elif case == "not text":
        path.write_bytes(b"\xff\xfe\x00key")
    elif case == "a directory":
        path.mkdir()
    err = serve_refuses("--admin-key-file", str(path))
    assert expected in err and str(path) in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_an_unreadable_key_file_is_refused(tmp_path):
    path = key_file(tmp_path, ADMIN, mode=0o000)
    err = serve_refuses("--admin-key-file", str(path))
    assert "cannot read the admin key" in err and "ermission" in err, err


def test_a_key_in_both_places_or_an_empty_variable_is_refused(tmp_path):
    path = key_file(tmp_path, ADMIN)
    err = serve_refuses("--admin-key-file", str(path), env={"ARENA_ADMIN_KEY": ADMIN})
    assert "give one of them" in err
    err = serve_refuses(env={"ARENA_ADMIN_KEY": ""})
    assert "ARENA_ADMIN_KEY is set but empty" in err


def test_a_key_file_other_users_can_read_is_used_with_a_warning(tmp_path, capsys):
    path = key_file(tmp_path, ADMIN, mode=0o644)
    assert read_admin_key(path, None, {}) == ADMIN
    assert f"chmod 600 {path}" in capsys.readouterr().err
    path.chmod(0o600)
    assert read_admin_key(path, None, {}) == ADMIN
    assert capsys.readouterr().err == ""
    with pytest.raises(click.UsageError):
        read_admin_key(None, ADMIN, {"ARENA_ADMIN_KEY": ADMIN})
    assert read_admin_key(None, None, {}) is None
