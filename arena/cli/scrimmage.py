"""`arena scrimmage`: a bot's owner asks a running Arena server for unrated duplicate sets
against opponents of their choice, waits for them and prints the results (or lists the bot's
scrimmages). The client side of arena/service/scrimmages.py, through arena submit's requests."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

import click

from .submit import POLL_S, ServerError, _key, _request, owner_options


@click.command("scrimmage")
@click.argument("bot")
@owner_options
@click.option(
    "--against",
    help="The opponents, comma-separated (NAME or NAME@N): as many as a table seats, less one.",
)
@click.option(
    "--sets",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Duplicate sets to play (each a deal played in every seat rotation).",
)
@click.option("--no-wait", is_flag=True, help="Ask, print its id, and return.")
@click.option("--show", type=click.IntRange(min=1), metavar="ID", help="Show scrimmage ID.")
@click.option("--list", "listing", is_flag=True, help="List the bot's scrimmages.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=900.0,
    show_default=True,
    help="Seconds to wait for the scrimmage to be played.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scrimmage as JSON.")
def scrimmage_cmd(
    bot, server, key, key_file, against, sets, no_wait, show, listing, timeout, as_json
):
    """Ask for SETS unrated duplicate sets of BOT (its newest version that passed) against the
    bots --against names, wait for them, and print each bot's mean score, wins and faults, and
    BOT's mean margin over each opponent. Never rated; the results and replays are the
    owner's alone (GET /api/bots/BOT/scrimmages/ID)."""
    owner_key = _key(key, key_file)
    base = f"{server}/api/bots/{quote(bot)}/scrimmages"
    if listing:
        doc = _request("GET", base, owner_key)
        click.echo(f"{bot}: {doc['sets_per_day']} scrimmage sets a day")
        for s in doc["scrimmages"]:
            click.echo(
                f"  {s['id']:>5}  {s['status']:<8} {s['sets']} set(s) against "
                f"{', '.join(s['opponents'])}"
            )
        return
    if show is not None:
        _print(_request("GET", f"{base}/{show}", owner_key), as_json)
        return
    if not against:
        raise click.UsageError("name the opponents: --against A,B (or --list, or --show ID)")
    opponents = [name.strip() for name in against.split(",") if name.strip()]
    made = _request(
        "POST", base, owner_key, json.dumps({"opponents": opponents, "sets": sets}).encode()
    )
    click.echo(
        f"scrimmage {made['id']}: {made['sets']} set(s) of {made['bot']} against "
        f"{', '.join(made['opponents'])} (unrated)"
    )
    if no_wait:
        return
    deadline = time.monotonic() + timeout
    while True:
        doc = _request("GET", f"{base}/{made['id']}", owner_key)
        if doc["status"] in ("done", "failed"):
            break
        if time.monotonic() > deadline:
            raise ServerError(
                f"scrimmage {made['id']} is not over after {timeout:.0f} s (status "
                f"{doc['status']}); see it later with --show {made['id']}"
            )
        time.sleep(POLL_S)  # a poll's period, under the deadline above
    _print(doc, as_json)


def _print(doc: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    played = [m for m in doc.get("matches", []) if m["status"] == "completed"]
    click.echo(
        f"scrimmage {doc['id']} ({doc['status']}): {len(played)} of "
        f"{len(doc.get('matches', []))} matches played"
        + (f"; {doc['note']}" if doc["note"] else "")
    )
    summary = doc.get("summary") or {"bots": {}, "margin_over": {}}
    for name, row in sorted(summary["bots"].items(), key=lambda kv: -kv[1]["mean_score"]):
        click.echo(
            f"  {name:<24} mean score {row['mean_score']:7.2f}  wins {row['wins']:>3}  "
            f"faults {row['faults']:>3}  ({row['matches']} matches)"
        )
    for name, margin in summary["margin_over"].items():
        if margin is not None:
            click.echo(f"  {doc['bot']} over {name}: {margin:+.2f} points a match")
