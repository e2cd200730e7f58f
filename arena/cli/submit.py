"""`arena submit`: an author uploads a version of their bot to a running Arena server (`arena
serve`) with its owner key, waits for its verification and prints the verdict (with the log
excerpt of a failed version); or rolls the bot back to an earlier version that passed. The
client side of arena/service/submissions.py: the standard library's HTTP, nothing else."""

from __future__ import annotations

import json
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote, urlsplit

import click

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
POLL_S = 0.5  # how often the verdict is asked for while the version is being verified
OWNER_HEADER = "X-Owner-Key"  # arena.service.owners.OWNER_HEADER (not imported: FastAPI)


class ServerError(click.ClickException):
    """The server refused, or could not be reached; the message says why."""


def _request(
    method: str,
    url: str,
    key: str,
    body: BinaryIO | bytes | None = None,
    size: int | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    headers = {OWNER_HEADER: key, "Accept": "application/json"}
    if isinstance(body, bytes):
        headers["Content-Type"] = "application/json"
    elif body is not None:
        headers["Content-Type"] = "application/octet-stream"
        headers["Content-Length"] = str(size)
    req = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            raw = answer.read()
    except urllib.error.HTTPError as err:
        raise ServerError(f"the server refused ({err.code}): {_message(err)}") from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise ServerError(
            f"cannot reach the server at {url} ({reason}); check --server and that it runs"
        ) from None
    try:
        doc = json.loads(raw or b"{}")
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise ServerError(f"{url} did not answer as Arena does; {NOT_ARENA}")
    return doc


NOT_ARENA = "is --server the address of arena serve (its web address, as it prints it)?"


def _server_address(value: str) -> str:
    """--server as given, once it is an http(s) address with a host (its trailing / dropped)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise click.BadParameter(
            f"{value!r} is not a web address: give the server's address as "
            "http://HOST:PORT (or https://...), as arena serve prints it",
            param_hint="'--server'",
        )
    return value.rstrip("/")


def _message(err: urllib.error.HTTPError) -> str:
    raw = err.read()
    try:
        doc = json.loads(raw)
    except ValueError:
        return f"{err.reason}, with no Arena error in its answer; {NOT_ARENA}"
    error = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(error, dict) and "message" in error:
        return str(error["message"])
    return str(doc.get("detail", doc)) if isinstance(doc, dict) else str(doc)


def _bot_name(path: Path, bot: str | None) -> str:
    if bot:
        return bot
    manifest = path / "arena-bot.toml"
    if path.is_dir() and manifest.is_file():
        try:
            name = tomllib.loads(manifest.read_text()).get("name")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            name = None  # the server says what is wrong with it
        if isinstance(name, str) and name:
            return name
    raise click.UsageError('name the bot with --bot NAME (or name = "..." in its arena-bot.toml)')


def _key(key: str | None, key_file: Path | None) -> str:
    if key_file is not None:
        text = key_file.read_text().strip()
        if not text:
            raise click.UsageError(f"the key file {key_file} is empty; put the owner key in it")
        return text
    if key:
        return key
    raise click.UsageError(
        "give the bot's owner key: --key-file FILE (or --key KEY, or ARENA_OWNER_KEY set)"
    )


def owner_options(command: Any) -> Any:
    """The options of a command that acts as a bot's owner on a server (submit, download):
    --server, and the owner key as --key (or ARENA_OWNER_KEY) or --key-file."""
    for option in reversed(
        (
            click.option(
                "--server",
                required=True,
                callback=lambda ctx, param, value: _server_address(value),
                help="The Arena server's web address, e.g. http://host:8000.",
            ),
            click.option(
                "--key", envvar="ARENA_OWNER_KEY", help="The bot's owner key (or ARENA_OWNER_KEY)."
            ),
            click.option(
                "--key-file",
                type=click.Path(exists=True, dir_okay=False, path_type=Path),
                help="A file holding the owner key (keeps it out of the shell's history).",
            ),
        )
    ):
        command = option(command)
    return command


@click.command("submit")
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@owner_options
@click.option("--bot", help="The bot's name (default: name in the directory's arena-bot.toml).")
@click.option("--note", help="What changed in this version (shown on the bot's page).")
@click.option("--no-wait", is_flag=True, help="Do not wait for the verification's verdict.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Seconds to wait for the verdict.",
)
@click.option(
    "--rollback",
    type=click.IntRange(min=1),
    help="Instead of uploading: make this earlier version (one that passed) the one that plays.",
)
def submit_cmd(path, server, key, key_file, bot, note, no_wait, timeout, rollback):
    """Upload PATH, a bot directory (packed here) or a .tar.gz/.tgz/.tar/.zip archive holding
    an arena-bot.toml, as the next version of the bot, and wait for its verification: exit 0
    when it passed (it then plays), 1 when it failed (its log excerpt is printed)."""
    owner_key = _key(key, key_file)
    if rollback is not None:
        if not bot:
            raise click.UsageError("name the bot to roll back with --bot NAME")
        answer = _request(
            "POST",
            f"{server}/api/bots/{quote(bot)}/rollback",
            owner_key,
            json.dumps({"version": rollback}).encode(),
        )
        click.echo(f"{bot} now plays version {answer['version']} (as {answer['bot']})")
        return
    if path is None:
        raise click.UsageError("give the bot's directory or archive to submit (or --rollback N)")
    name = _bot_name(path, bot)
    url = f"{server}/api/bots/{quote(name)}/versions" + (f"?note={quote(note)}" if note else "")
    with tempfile.TemporaryDirectory(prefix="arena-submit-") as tmp:
        archive = _archive(path, Path(tmp))
        with archive.open("rb") as body:
            answer = _request("POST", url, owner_key, body, archive.stat().st_size, timeout=300)
    click.echo(
        f"uploaded {path} as version {answer['version']} of {name} (plays as {answer['bot']}); "
        f"digest {answer['digest'][:12]}"
    )
    if no_wait:
        click.echo("verifying; see the bot's page for the verdict")
        return
    version = _wait(server, name, answer["version"], owner_key, timeout)
    for step in version.get("steps") or []:
        _print_step(step)
    click.echo(f"verdict: {version['verdict']}  (status: {version['status']})")
    if version["status"] == "failed":
        if version.get("log_excerpt") and not any(not s["ok"] for s in version.get("steps") or []):
            click.echo("the bot's log (its end):")
            click.echo(version["log_excerpt"].rstrip())
        sys.exit(1)


STEP_LINES = 20  # of a failed install or build step's output, printed


def _print_step(step: dict[str, Any]) -> None:
    """One install or build step of the version: its outcome, and a failed one's last lines."""
    how = "reused (cached)" if step.get("cached") else f"{step['seconds']:.1f} s"
    outcome = "ok" if step["ok"] else f"FAILED: {step['detail']}"
    command = f" `{step['command']}`" if step["command"] else ""
    click.echo(f"{step['name']}{command}: {outcome} ({how})")
    if not step["ok"] and step.get("output"):
        click.echo(f"its output (the last {STEP_LINES} lines):")
        for line in step["output"].rstrip().splitlines()[-STEP_LINES:]:
            click.echo(f"  {line}")


def _archive(path: Path, tmp: Path) -> Path:
    """What is sent: an archive as it is, a directory packed (the server's own checks)."""
    if path.is_dir():
        from arena.submissions.archive import Limits, SubmissionRefused, pack_directory

        out = tmp / "bot.tar.gz"
        try:
            pack_directory(path, out, Limits())
        except SubmissionRefused as err:
            raise click.ClickException(f"cannot submit {path}: {err}") from None
        return out
    if not path.name.lower().endswith(ARCHIVE_SUFFIXES):
        raise click.UsageError(
            f"{path} is neither a directory nor an archive ({', '.join(ARCHIVE_SUFFIXES)})"
        )
    return path


def _wait(server: str, name: str, version: int, key: str, timeout: float) -> dict[str, Any]:
    url = f"{server}/api/bots/{quote(name)}/versions/{version}"
    deadline = time.monotonic() + timeout
    while True:
        doc = _request("GET", url, key)
        if doc["status"] != "verifying":
            return doc
        if time.monotonic() > deadline:
            raise click.ClickException(
                f"no verdict within {timeout:.0f} s (still verifying); see the bot's page, "
                "or wait longer with --timeout"
            )
        time.sleep(POLL_S)  # polling the server: a period, not a synchronisation
