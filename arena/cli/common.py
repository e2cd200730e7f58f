"""Options and helpers shared by several commands: game variants, limits, the sandbox, the
executor, and the database (one --db option, one way to open the store)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import click

from arena.games import ConfigError, Game, make_game

if TYPE_CHECKING:
    from arena.store import Store


def game_options(f):
    """The variant options of both games (each game refuses those it does not have)."""
    f = click.option("--series", is_flag=True, help="Boom: longer play, games to 200 points.")(f)
    f = click.option("--ruse", is_flag=True, help="Boom: deal each player a ruse card.")(f)
    f = click.option("--advanced", is_flag=True, help="Boom: the advanced game.")(f)
    return f


def build_game(name: str, players: int, advanced: bool, ruse: bool, series: bool) -> Game:
    options = {
        k: True for k, v in (("advanced", advanced), ("ruse", ruse), ("series", series)) if v
    }
    try:
        return make_game(name, players, **options)
    except ConfigError as err:
        raise click.UsageError(str(err)) from None


def limit_options(f):
    f = click.option(
        "--max-strikes",
        type=click.IntRange(1, 1000),
        default=3,
        show_default=True,
        help="Faults before a seat is played by the default policy.",
    )(f)
    f = click.option(
        "--time-bank-ms",
        type=click.IntRange(0, 3_600_000),
        default=10_000,
        show_default=True,
        help="Extra time per seat per match.",
    )(f)
    f = click.option(
        "--move-ms",
        type=click.IntRange(1, 600_000),
        default=1000,
        show_default=True,
        help="Deadline of one move.",
    )(f)
    return f


def sandbox_option(f):
    return click.option(
        "--no-sandbox",
        is_flag=True,
        envvar="ARENA_NO_SANDBOX",
        help="Launch bots without the bubblewrap sandbox: they run as your user, can read what "
        "you can read (the database, other bots' tokens) and reach the network. Only for "
        "bots you trust. Also set by ARENA_NO_SANDBOX=1.",
    )(f)


def launch_limits(no_sandbox: bool, check_now: bool = False):
    """The ResourceLimits of launched bots. Without the sandbox, warn once; with it and
    check_now, refuse at once (saying why and what to install) when bubblewrap cannot run."""
    from arena.referee import sandbox
    from arena.referee.launcher import ResourceLimits

    if no_sandbox:
        click.echo(
            "warning: --no-sandbox: launched bots run unconfined, as your user; they can "
            "read your files (the database, other bots' tokens) and reach the network. "
            "Use it only for bots you trust.",
            err=True,
        )
        return ResourceLimits(sandbox=False)
    if check_now and (reason := sandbox.unavailable_reason()) is not None:
        raise click.ClickException(f"cannot launch bots: {reason}")
    return ResourceLimits()


def executor_options(f):
    """Where a ladder's matches run: --executor and --ray-address (see check_executor)."""
    from arena.ladder.executors import EXECUTORS

    f = click.option("--ray-address", help="The Ray cluster's address (with --executor ray).")(f)
    f = click.option(
        "--executor",
        type=click.Choice(EXECUTORS),
        default=EXECUTORS[0],
        show_default=True,
        help="Where matches run (Ray: launched bots only).",
    )(f)
    return f


def check_executor(executor: str, ray_address: str | None) -> None:
    if executor == "ray" and not ray_address:
        raise click.UsageError("--executor ray needs --ray-address (for example 127.0.0.1:6379)")


def db_option(f):
    """--db, the same option for every command that uses the database. A path whose directory
    does not exist is refused here, before the command does anything."""
    from arena.store import DEFAULT_PATH

    return click.option(
        "--db",
        type=click.Path(dir_okay=False, path_type=Path),
        default=Path(DEFAULT_PATH),
        show_default=True,
        callback=_db_path,
        help="The Arena database (a SQLite file).",
    )(f)


def _db_path(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    # Kept where the top-level command finds it (ctx.meta is shared by nested contexts), to
    # name it if a SQLite error escapes a command.
    ctx.meta["arena.db"] = value
    if not value.parent.is_dir():
        raise click.BadParameter(
            f"cannot use database {value}: directory {value.parent} does not exist; create it "
            f"(mkdir -p {value.parent}), or choose another path with --db",
            ctx,
            param,
        )
    return value


@contextlib.contextmanager
def store_errors(*more: type[Exception]) -> Iterator[None]:
    """The store's refusals (no database, not writable, locked, damaged, not Arena's, ...), and
    errors of the `more` types, become CLI errors: their message, no traceback. Their messages
    already say what to do."""
    from arena.store import StoreError

    refused: tuple[type[Exception], ...] = (StoreError, *more)
    try:
        yield
    except refused as err:
        raise click.ClickException(str(err)) from None


@contextlib.contextmanager
def open_store(db: Path, write: bool = False) -> Iterator["Store"]:
    """The store at `db`, closed after: read-only unless `write` (a reader works on a database
    this user cannot write, beside a running writer, and never creates one)."""
    from arena.store import Store

    with store_errors():
        store = Store(db, readonly=not write)
        try:
            yield store
        finally:
            store.close()
