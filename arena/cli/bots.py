"""`arena bot add|update|list|show|suspend|reinstate|remove|rotate-token|rotate-owner-key|
add-owner|rollback`: the bot registry, its versions and their owners (docs/submit.md).
Commands that act on one version take NAME (the latest version) or NAME@N."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from .common import db_option, open_store


def start_options(command_help: str, dir_help: str):
    """--command and --dir (as `directory`): how a bot, or a new version of one, starts."""

    def decorate(f):
        f = click.option(
            "--dir",
            "directory",
            type=click.Path(file_okay=False, path_type=Path),
            help=dir_help,
        )(f)
        return click.option("--command", help=command_help)(f)

    return decorate


@click.group("bot")
def bot_group():
    """Register bots: launched from a command, or run remotely by their owners."""


@bot_group.command("add")
@click.argument("name")
@start_options(
    'How to start it, e.g. "python example_bots/random_bot.py".',
    "A bot directory with an arena-bot.toml manifest naming its command.",
)
@click.option("--remote", is_flag=True, help="Its owner runs it and connects with the token.")
@click.option(
    "--owner",
    is_flag=True,
    help="Give it an owner key, with which its author submits versions (arena submit). "
    "Alone, the bot has no version until its author submits one.",
)
@db_option
def add_cmd(name, command, directory, remote, owner, db):
    """Register the bot NAME and print its token (shown once, stored only as a hash); with
    --owner, its owner key too (shown once)."""
    given = sum(x is not None and x is not False for x in (command, directory, remote))
    if given > 1 or (given == 0 and not owner):
        raise click.UsageError("give exactly one of --command, --dir or --remote (or --owner)")
    with open_store(db, write=True) as store:
        if given:
            token = store.add_bot(
                name, command, directory=str(directory) if directory else None, remote=remote
            )
        key = store.new_owner_key(name) if owner else None
    click.echo(f"registered {name}" + ("" if given else ": it awaits its first upload"))
    if given:
        click.echo(f"token (shown once; keep it secret): {token}")
    if key is not None:
        _echo_owner_key(name, key)


def _echo_owner_key(name: str, key: str) -> None:
    click.echo(f"owner key (shown once; give it to the bot's author only): {key}")
    click.echo(
        f"  the author submits with: arena submit --server URL --key-file FILE --bot {name} DIR"
    )


@bot_group.command("add-owner")
@click.argument("name")
@db_option
def add_owner_cmd(name, db):
    """Give the bot NAME an owner key (it has none yet) and print it (shown once)."""
    with open_store(db, write=True) as store:
        key = store.new_owner_key(name)
    _echo_owner_key(name, key)


@bot_group.command("rotate-owner-key")
@click.argument("name")
@db_option
def rotate_owner_key_cmd(name, db):
    """Give the bot NAME a new owner key (shown once); the old one stops working at once."""
    with open_store(db, write=True) as store:
        key = store.new_owner_key(name, rotate=True)
    _echo_owner_key(name, key)


@bot_group.command("rollback")
@click.argument("name")
@click.argument("version", type=click.IntRange(min=1))
@db_option
def rollback_cmd(name, version, db):
    """Make VERSION of the bot NAME, one that passed its verification, the version ladders
    naming NAME play again (the newer ones are retired; their results stay)."""
    with open_store(db, write=True) as store:
        row = store.rollback(name, version)
    click.echo(f"{name} now plays as {row} (version {version})")


@bot_group.command("update")
@click.argument("name")
@start_options(
    "How to start the new version (run from here).",
    "A bot directory with an arena-bot.toml manifest: copied beside the database "
    "as this version's own, so later edits of it change nothing.",
)
@click.option("--note", help="What changed (shown by arena bot show and on the bot's page).")
@db_option
def update_cmd(name, command, directory, note, db):
    """Register a new version of the bot NAME and print its token (shown once). The versions
    are numbered: version N plays as NAME@N and is rated on its own; a ladder naming NAME
    takes the latest version when it is created."""
    if (command is None) == (directory is None):
        raise click.UsageError("give exactly one of --command or --dir")
    with open_store(db, write=True) as store:
        bot, token = store.update_bot(name, command, directory=directory, note=note)
    where = f"; its files are a copy in {bot.directory}" if directory is not None else ""
    click.echo(f"registered {name} version {bot.version}, which plays as {bot.name}{where}")
    click.echo(f"token (shown once; keep it secret): {token}")


@bot_group.command("list")
@click.option("--all", "include_removed", is_flag=True, help="Include removed bots.")
@click.option("--versions", is_flag=True, help="List every version, not each bot once.")
@db_option
def list_cmd(include_removed, versions, db):
    """List registered bots: each once, with its latest version and how many it has."""
    with open_store(db) as store:  # read-only: works on a database this user cannot write
        bots = store.list_bots(include_removed=include_removed)
    if not bots:
        click.echo("no bots yet; register one with arena bot add")
    families: dict[str, list] = {}
    for bot in bots:
        families.setdefault(bot.family, []).append(bot)
    for family in sorted(families):
        rows = sorted(families[family], key=lambda b: b.version)
        if versions:
            for bot in rows:
                click.echo(f"{bot.name:<24} {_how(bot)}{_flags(bot)}")
            continue
        live = [b for b in rows if not b.removed]
        latest = (live or rows)[-1]
        count = f"{len(rows)} versions" if len(rows) > 1 else "1 version"
        click.echo(f"{family:<24} v{latest.version} ({count})  {_how(latest)}{_flags(latest)}")


def _how(bot) -> str:
    return "remote" if bot.remote else bot.command


def _flags(bot) -> str:
    flags = []
    if bot.suspended:
        flags.append(f"suspended: {bot.suspended_reason}")
    if bot.removed:
        flags.append("removed")
    return "  (" + "; ".join(flags) + ")" if flags else ""


@bot_group.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
@db_option
def show_cmd(name, as_json, db):
    """Show the bot NAME's versions (or one, NAME@N) and each one's rating in every ladder."""
    from arena.store import parse_bot_spec
    from arena.store.browse import BrowseQueries
    from arena.store.snapshots import is_snapshot

    with open_store(db) as store:  # the store's refusals (no such bot) become CLI errors
        family, number = parse_bot_spec(name)
        rows = store.versions(family)
        if number is not None:
            rows = [store.resolve_bot(name)]
        elif not rows:
            store.resolve_bot(name)  # raises, saying there is no such bot
        queries = BrowseQueries(store)
        doc: dict[str, Any] = {
            "bot": family,
            "versions": [
                {
                    "version": b.version,
                    "name": b.name,
                    "created": b.created,
                    "command": b.command,
                    "directory": b.directory,
                    "snapshot": b.directory is not None and is_snapshot(store.path, b.directory),
                    "remote": b.remote,
                    "note": b.note,
                    "status": b.status,
                    "suspended": b.suspended,
                    "suspended_reason": b.suspended_reason,
                    "removed": b.removed,
                    "ratings": [
                        {
                            "ladder": s.ladder,
                            "game": s.game,
                            "rank": s.rank,
                            "of": s.of,
                            "mu": s.mu,
                            "sigma": s.sigma,
                            "conservative": s.conservative,
                            "matches": s.matches,
                        }
                        for s in queries.bot_ladders(b.name)
                    ],
                }
                for b in rows
            ],
        }
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(f"bot {family}: {len(doc['versions'])} version(s)")
    for v in doc["versions"]:
        state = (
            "removed"
            if v["removed"]
            else f"suspended: {v['suspended_reason']}"
            if v["suspended"]
            else v["status"]
        )
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(v["created"]))
        click.echo(f"version {v['version']}  {v['name']}  created {created}  {state}")
        if v["remote"]:
            click.echo("  remote (run by its owner)")
        else:
            where = "snapshot" if v["snapshot"] else "runs in"
            click.echo(f"  command: {v['command']}  ({where} {v['directory']})")
        if v["note"]:
            click.echo(f"  note: {v['note']}")
        for r in v["ratings"]:
            click.echo(
                f"  {r['ladder']} ({r['game']}): rank {r['rank']} of {r['of']}, "
                f"mu {r['mu']:.2f} sigma {r['sigma']:.2f} conservative "
                f"{r['conservative']:.2f}, {r['matches']} matches"
            )
        if not v["ratings"]:
            click.echo("  in no ladder yet")


@bot_group.command("remove")
@click.argument("name")
@db_option
def remove_cmd(name, db):
    """Remove a bot, every version of it (NAME), or one version (NAME@N: NAME then names the
    latest version left). Past results are kept. A referee using this database (arena serve,
    arena ladder run) ends the removed versions' streams within a second."""
    with open_store(db, write=True) as store:
        store.remove_bot(name)
    click.echo(f"removed {name}")


@bot_group.command("rotate-token")
@click.argument("name")
@db_option
def rotate_cmd(name, db):
    """Give a bot's latest version (NAME) or one version (NAME@N) a new token; the old one
    stops working. A referee using this database (arena serve, arena ladder run) ends a stream
    that presented it within a second."""
    with open_store(db, write=True) as store:
        row = store.resolve_bot(name).name
        token = store.rotate_token(row)
    click.echo(f"new token for {row} (shown once): {token}")


@bot_group.command("suspend")
@click.argument("name")
@click.option("--reason", required=True, help="Shown to the bot's owner.")
@db_option
def suspend_cmd(name, reason, db):
    """Suspend a bot's latest version (NAME) or one version (NAME@N): it plays no more matches
    until reinstated. A referee using this database (arena serve, arena ladder run) ends its
    stream within a second."""
    click.echo(f"suspended {_set_suspension(db, name, reason)}: {reason}")


@bot_group.command("reinstate")
@click.argument("name")
@db_option
def reinstate_cmd(name, db):
    """Lift the suspension of a bot's latest version (NAME) or of one version (NAME@N)."""
    click.echo(f"reinstated {_set_suspension(db, name, None)}")


def _set_suspension(db: Path, name: str, reason: str | None) -> str:
    """Suspend (or reinstate) the version `name` names; returns that version's name."""
    with open_store(db, write=True) as store:
        row = store.resolve_bot(name).name
        store.suspend_bot(row, reason)
    return row
