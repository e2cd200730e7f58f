"""`arena bot add|list|remove|rotate-token`: the bot registry."""

from __future__ import annotations

from pathlib import Path

import click

from .common import db_option, open_store


@click.group("bot")
def bot_group():
    """Register bots: launched from a command, or run remotely by their owners."""


@bot_group.command("add")
@click.argument("name")
@click.option("--command", help='How to start it, e.g. "python example_bots/random_bot.py".')
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              help="A bot directory with an arena-bot.toml manifest naming its command.")
@click.option("--remote", is_flag=True, help="Its owner runs it and connects with the token.")
@db_option
def add_cmd(name, command, directory, remote, db):
    """Register the bot NAME and print its token (shown once, stored only as a hash)."""
    if sum(x is not None and x is not False for x in (command, directory, remote)) != 1:
        raise click.UsageError("give exactly one of --command, --dir or --remote")
    with open_store(db, write=True) as store:
        token = store.add_bot(name, command, directory=str(directory) if directory else None,
                              remote=remote)
    click.echo(f"registered {name}")
    click.echo(f"token (shown once; keep it secret): {token}")


@bot_group.command("list")
@click.option("--all", "include_removed", is_flag=True, help="Include removed bots.")
@db_option
def list_cmd(include_removed, db):
    """List registered bots."""
    with open_store(db) as store:  # read-only: works on a database this user cannot write
        bots = store.list_bots(include_removed=include_removed)
    if not bots:
        click.echo("no bots yet; register one with arena bot add")
    for bot in bots:
        how = "remote" if bot.remote else bot.command
        flags = []
        if bot.suspended:
            flags.append(f"suspended: {bot.suspended_reason}")
        if bot.removed:
            flags.append("removed")
        click.echo(f"{bot.name:<24} {how}{'  (' + '; '.join(flags) + ')' if flags else ''}")


@bot_group.command("remove")
@click.argument("name")
@db_option
def remove_cmd(name, db):
    """Remove a bot (its past results are kept). A referee using this database (arena serve,
    arena ladder run) ends its stream within a second."""
    with open_store(db, write=True) as store:
        store.remove_bot(name)
    click.echo(f"removed {name}")


@bot_group.command("rotate-token")
@click.argument("name")
@db_option
def rotate_cmd(name, db):
    """Give a bot a new token; the old one stops working. A referee using this database
    (arena serve, arena ladder run) ends a stream that presented it within a second."""
    with open_store(db, write=True) as store:
        token = store.rotate_token(name)
    click.echo(f"new token for {name} (shown once): {token}")


@bot_group.command("suspend")
@click.argument("name")
@click.option("--reason", required=True, help="Shown to the bot's owner.")
@db_option
def suspend_cmd(name, reason, db):
    """Suspend a bot: it plays no more matches until reinstated. A referee using this
    database (arena serve, arena ladder run) ends its stream within a second."""
    _set_suspension(db, name, reason)
    click.echo(f"suspended {name}: {reason}")


@bot_group.command("reinstate")
@click.argument("name")
@db_option
def reinstate_cmd(name, db):
    """Lift a bot's suspension."""
    _set_suspension(db, name, None)
    click.echo(f"reinstated {name}")


def _set_suspension(db: Path, name: str, reason: str | None) -> None:
    with open_store(db, write=True) as store:
        store.suspend_bot(name, reason)
