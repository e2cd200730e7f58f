"""`arena download BOT`: a bot's replays and its own match logs from an Arena server, for its
owner (docs/web.md#downloads). Resumable: a file already there is not fetched again, each file
is written whole or not at all, and a match whose set is still being played is fetched at a
later run, once its replay is public."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import click

from .submit import NOT_ARENA, OWNER_HEADER, ServerError, _key, owner_options

PAGE = 200  # matches asked for at a time


def _get(url: str, key: str | None = None, timeout: float = 60.0) -> tuple[int, Any]:
    """(HTTP status, the answer's JSON) of a GET; ServerError when the server cannot be reached
    or does not answer as Arena does."""
    headers = {"Accept": "application/json"}
    if key is not None:
        headers[OWNER_HEADER] = key
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise ServerError(
            f"cannot reach the server at {url} ({reason}); check --server and that it runs"
        ) from None
    try:
        return status, json.loads(raw)
    except ValueError:
        raise ServerError(f"{url} did not answer as Arena does; {NOT_ARENA}") from None


def _error(doc: Any) -> str:
    error = doc.get("error") if isinstance(doc, dict) else None
    return str(error.get("message")) if isinstance(error, dict) else str(doc)


def _write(path: Path, doc: Any) -> None:
    """The file whole or not at all: a download stopped half-way leaves no half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.part")
    part.write_text(json.dumps(doc, separators=(",", ":")))
    os.replace(part, path)


def completed_matches(server: str, bot: str) -> list[tuple[str, int, list[int]]]:
    """(ladder, index, the bot's seats) of every completed match of `bot`, newest first (the
    public match list, a page at a time)."""
    found: list[tuple[str, int, list[int]]] = []
    before: int | None = None
    while True:
        query = {"bot": bot, "status": "completed", "limit": PAGE}
        if before is not None:
            query["before"] = before
        status, doc = _get(f"{server}/api/matches?{urlencode(query)}")
        if status != 200:
            raise ServerError(f"the server refused the match list ({status}): {_error(doc)}")
        found += [
            (m["ladder"], m["index"], [s["seat"] for s in m["seats"] if s["bot"] == bot])
            for m in doc["matches"]
        ]
        before = doc.get("next")
        if before is None:
            return found


@click.command("download")
@click.argument("bot")
@owner_options
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("downloads"),
    show_default=True,
    help="The folder to write into: OUT/BOT/LADDER/INDEX.json (the replay) and "
    "INDEX.logs.json (what the bot wrote, by move).",
)
def download_cmd(bot, server, key, key_file, out):
    """Fetch BOT's completed matches from a server: each replay (once its set is finished and
    it is public) and what the bot wrote during it (its match log, with its owner key).
    Run it again to fetch only what is new."""
    owner_key = _key(key, key_file)
    folder = out / bot
    new_replays = new_logs = have = waiting = no_log = 0
    for ladder, index, own in completed_matches(server, bot):
        base = f"{server}/api/ladders/{quote(ladder)}/matches/{index}"
        replay = folder / ladder / f"{index}.json"
        logs = folder / ladder / f"{index}.logs.json"
        if replay.exists() and logs.exists():
            have += 1
            continue
        if not logs.exists():
            status, doc = _get(f"{base}/logs", owner_key)
            if status in (401, 403):
                raise ServerError(f"the server refused the key ({status}): {_error(doc)}")
            if status != 200:
                raise ServerError(f"{ladder} match {index}'s log ({status}): {_error(doc)}")
            if set(own) & set(doc["closed"]):  # a key of another bot of the same match
                raise ServerError(
                    f"the server refused the key: it does not open {bot}'s output in {ladder} "
                    f"match {index}; give {bot}'s owner key"
                )
            seats = [s for s in doc["seats"] if s["seat"] in own]
            _write(logs, {"ladder": ladder, "index": index, "bot": bot, "seats": seats})
            new_logs += 1
            no_log += not seats
        if not replay.exists():
            status, doc = _get(f"{base}/replay")
            if status == 409:  # its set is still being played: a later run gets it
                waiting += 1
                continue
            if status != 200:
                raise ServerError(f"{ladder} match {index}'s replay ({status}): {_error(doc)}")
            _write(replay, doc)
            new_replays += 1
    click.echo(
        f"{bot}: {new_replays} new replays and {new_logs} new match logs in {folder}; "
        f"{have} matches were there already; {waiting} not public yet (their sets are still "
        f"being played: run again later)"
        + (f"; {no_log} with no log kept (remote, or rotated away)" if no_log else "")
    )
