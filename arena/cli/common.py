"""Options and helpers shared by several commands."""

from __future__ import annotations

import click

from arena.games import ConfigError, Game, make_game


def game_options(f):
    """The variant options of both games (each game refuses those it does not have)."""
    f = click.option("--series", is_flag=True, help="Boom: longer play, games to 200 points.")(f)
    f = click.option("--ruse", is_flag=True, help="Boom: deal each player a ruse card.")(f)
    f = click.option("--advanced", is_flag=True, help="Boom: the advanced game.")(f)
    return f


def build_game(name: str, players: int, advanced: bool, ruse: bool, series: bool) -> Game:
    options = {k: True for k, v in (("advanced", advanced), ("ruse", ruse),
                                    ("series", series)) if v}
    try:
        return make_game(name, players, **options)
    except ConfigError as err:
        raise click.UsageError(str(err)) from None


def limit_options(f):
    f = click.option("--max-strikes", type=click.IntRange(1, 1000), default=3, show_default=True,
                     help="Faults before a seat is played by the default policy.")(f)
    f = click.option("--time-bank-ms", type=click.IntRange(0, 3_600_000), default=10_000,
                     show_default=True, help="Extra time per seat per match.")(f)
    f = click.option("--move-ms", type=click.IntRange(1, 600_000), default=1000,
                     show_default=True, help="Deadline of one move.")(f)
    return f


def sandbox_option(f):
    return click.option(
        "--no-sandbox", is_flag=True, envvar="ARENA_NO_SANDBOX",
        help="Launch bots without the bubblewrap sandbox: they run as your user, can read what "
             "you can read (the database, other bots' tokens) and reach the network. Only for "
             "bots you trust. Also set by ARENA_NO_SANDBOX=1.")(f)


def launch_limits(no_sandbox: bool, check_now: bool = False):
    """The ResourceLimits of launched bots. Without the sandbox, warn once; with it and
    check_now, refuse at once (saying why and what to install) when bubblewrap cannot run."""
    from arena.referee import sandbox
    from arena.referee.launcher import ResourceLimits

    if no_sandbox:
        click.echo("warning: --no-sandbox: launched bots run unconfined, as your user; they can "
                   "read your files (the database, other bots' tokens) and reach the network. "
                   "Use it only for bots you trust.", err=True)
        return ResourceLimits(sandbox=False)
    if check_now and (reason := sandbox.unavailable_reason()) is not None:
        raise click.ClickException(f"cannot launch bots: {reason}")
    return ResourceLimits()


def db_option(f):
    from pathlib import Path

    return click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
                        default=Path("arena.db"), show_default=True, callback=remember_db,
                        help="The SQLite database.")(f)


def remember_db(ctx: click.Context, param: click.Parameter, value):
    """Keep the --db path where the top-level command finds it (ctx.meta is shared by nested
    contexts), to name it if a SQLite error escapes a command."""
    ctx.meta["arena.db"] = value
    return value


class open_store:
    """Open the store read-only, turning its errors into clear CLI errors."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        from arena.store import Store, StoreError

        self._error = StoreError
        try:
            self.store = Store(self.db, readonly=True)
        except StoreError as err:
            raise click.ClickException(str(err)) from None
        return self.store

    def __exit__(self, exc_type, exc, tb) -> None:
        self.store.close()
        if isinstance(exc, self._error):
            raise click.ClickException(str(exc)) from None

