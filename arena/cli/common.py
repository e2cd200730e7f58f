"""Options and helpers shared by several commands: the game and its variant, limits, the
sandbox, the executor, concurrency, the run directory, listening addresses, the database (one
--db option, one way to open the store), and how a resumable run stops.

An option group is a decorator. Where a group's values make one thing, the command receives
that thing instead of the separate values: @game_options gives `variant` (the options that
are on, for build_game), @limit_options gives `limits` (a referee Limits), @run_options
gives `run` (the RunSettings of a ladder, a comparison or the service)."""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import click

if TYPE_CHECKING:
    from arena.games import Game
    from arena.store import Store


def game_options(f):
    """A flag (--NAME) for each variant option of every registered game (GameOption: declared
    once by the game; each game refuses those it does not have), given to the command as
    `variant`: the names of those that are on, mapped to True."""
    from arena.games import game_kits

    titles: dict[str, list[str]] = {}
    helps: dict[str, str] = {}
    for kit in game_kits():
        for option in kit.options:
            titles.setdefault(option.name, []).append(kit.title)
            helps.setdefault(option.name, option.help)
    names = list(titles)

    @functools.wraps(f)
    def command(*args, **kwargs):
        flags = {name: kwargs.pop(name) for name in names}
        return f(*args, variant={k: True for k, on in flags.items() if on}, **kwargs)

    for name in reversed(names):
        help = f"{', '.join(titles[name])}: {helps[name]}."
        command = click.option(f"--{name.replace('_', '-')}", name, is_flag=True, help=help)(
            command
        )
    return command


def build_game(name: str, players: int, variant: Mapping[str, bool]) -> Game:
    """The game, or a usage error saying why these options do not make one."""
    from arena.games import ConfigError, make_game

    try:
        return make_game(name, players, **variant)
    except ConfigError as err:
        raise click.UsageError(str(err)) from None


def table_options(table_size_help: str):
    """--game and --table-size (-k), both required."""
    from arena.games import game_names

    def decorate(f):
        f = click.option(
            "--table-size", "-k", type=click.IntRange(2, 5), required=True, help=table_size_help
        )(f)
        return click.option("--game", type=click.Choice(game_names()), required=True)(f)

    return decorate


def limit_options(f):
    """--move-ms, --time-bank-ms and --max-strikes, given to the command as `limits` (the
    referee's Limits)."""

    @functools.wraps(f)
    def command(*args, move_ms: int, time_bank_ms: int, max_strikes: int, **kwargs):
        from arena.referee.match import Limits

        limits = Limits(move_ms=move_ms, time_bank_ms=time_bank_ms, max_strikes=max_strikes)
        return f(*args, limits=limits, **kwargs)

    for name, low, high, default, text in reversed(LIMIT_OPTIONS):
        command = click.option(
            name,
            type=click.IntRange(low, high),
            default=default,
            show_default=True,
            help=text,
        )(command)
    return command


# Each limit's option: its name, range, default and help, in the order --help lists them.
LIMIT_OPTIONS = (
    ("--move-ms", 1, 600_000, 1000, "Deadline of one move."),
    ("--time-bank-ms", 0, 3_600_000, 10_000, "Extra time per seat per match."),
    ("--max-strikes", 1, 1000, 3, "Faults before a seat is played by the default policy."),
)


# The launched bots' resources (ResourceLimits): option, field, type, help. Defaults are
# ResourceLimits's; see docs/reliability.md, "Resources".
BOT_RESOURCE_OPTIONS = (
    (
        "--bot-memory-mb",
        "memory_mb",
        click.IntRange(0),
        "Memory of each launched bot, all its processes, shared memory and files together "
        "(its control group; 0 = no limit). Without control groups: none (see "
        "docs/reliability.md).",
    ),
    (
        "--bot-cpus",
        "cpus",
        click.FloatRange(0),
        "CPU time of each launched bot per second, all its processes together (1.0 = one "
        "core; 0 = no quota; its control group).",
    ),
    (
        "--bot-processes",
        "max_processes",
        click.IntRange(0),
        "Processes and threads of each launched bot (its control group; RLIMIT_NPROC).",
    ),
    (
        "--bot-disk-mb",
        "disk_mb",
        click.IntRange(1),
        "Size of each launched bot's work directory (a tmpfs of its own, counted in its "
        "memory, when Arena runs as root).",
    ),
)


def sandbox_option(f):
    """--no-sandbox, and the launched bots' resources (BOT_RESOURCE_OPTIONS), given to the
    command as `no_sandbox` and `bot_limits` (a ResourceLimits)."""

    @functools.wraps(f)
    def command(*args, **kwargs):
        from arena.referee.launcher import ResourceLimits

        chosen = {field: kwargs.pop(field) for _, field, _, _ in BOT_RESOURCE_OPTIONS}
        return f(*args, bot_limits=ResourceLimits(**chosen), **kwargs)

    from arena.referee.launcher import ResourceLimits

    for name, field, kind, text in reversed(BOT_RESOURCE_OPTIONS):
        command = click.option(
            name,
            field,
            type=kind,
            default=getattr(ResourceLimits(), field),
            show_default=True,
            help=text,
        )(command)
    return _no_sandbox_option(command)


def _no_sandbox_option(f):
    return click.option(
        "--no-sandbox",
        is_flag=True,
        envvar="ARENA_NO_SANDBOX",
        help="Launch bots without the bubblewrap sandbox: they run as your user, can read what "
        "you can read (the database, other bots' tokens) and reach the network. Only for "
        "bots you trust. Also set by ARENA_NO_SANDBOX=1.",
    )(f)


def launch_limits(no_sandbox: bool, check_now: bool = False, bot_limits=None):
    """The ResourceLimits of launched bots (bot_limits, from the command's options, or the
    defaults). Without the sandbox, warn once; with it and check_now, refuse at once (saying
    why and what to install) when bubblewrap cannot run."""
    import dataclasses

    from arena.referee import sandbox
    from arena.referee.launcher import ResourceLimits

    bot_limits = bot_limits or ResourceLimits()

    if no_sandbox:
        click.echo(
            "warning: --no-sandbox: launched bots run unconfined, as your user; they can "
            "read your files (the database, other bots' tokens) and reach the network. "
            "Use it only for bots you trust.",
            err=True,
        )
        return dataclasses.replace(bot_limits, sandbox=False)
    if check_now and (reason := sandbox.unavailable_reason()) is not None:
        raise click.ClickException(f"cannot launch bots: {reason}")
    return bot_limits


def executor_options(f):
    """Where a ladder's matches run: --executor and --ray-address, checked together before the
    command runs (check_executor)."""
    from arena.ladder.executors import EXECUTORS

    @functools.wraps(f)
    def command(*args, executor: str, ray_address: str | None, **kwargs):
        check_executor(executor, ray_address)
        return f(*args, executor=executor, ray_address=ray_address, **kwargs)

    command = click.option(
        "--ray-address", help="The Ray cluster's address (with --executor ray)."
    )(command)
    return click.option(
        "--executor",
        type=click.Choice(EXECUTORS),
        default=EXECUTORS[0],
        show_default=True,
        help="Where matches run (Ray: launched bots only).",
    )(command)


def check_executor(executor: str, ray_address: str | None) -> None:
    if executor == "ray" and not ray_address:
        raise click.UsageError("--executor ray needs --ray-address (for example 127.0.0.1:6379)")


def run_options(
    concurrency_help: str = "Matches played at once.",
    run_dir_default: Path = Path("runs"),
    check_sandbox: bool = False,
) -> Callable[[Any], Any]:
    """The options of how a command's matches are played: the limits (@limit_options),
    --concurrency, --executor and --ray-address, --run-dir, --idle-stop and --no-sandbox, given
    to the command as `run`, one RunSettings. With check_sandbox, a local run refuses at once
    when the sandbox cannot run here (launch_limits)."""

    def decorate(f):
        @functools.wraps(f)
        def command(
            *args,
            concurrency,
            limits,
            executor,
            ray_address,
            run_dir,
            idle_stop,
            no_sandbox,
            bot_limits,
            **kw,
        ):
            from arena.ladder.executors import RunSettings

            run = RunSettings(
                concurrency=concurrency,
                limits=limits,
                resource_limits=launch_limits(
                    no_sandbox,
                    check_now=check_sandbox and executor == "local",
                    bot_limits=bot_limits,
                ),
                executor=executor,
                ray_address=ray_address,
                run_dir=run_dir,
                idle_stop_s=idle_stop,
            )
            return f(*args, run=run, **kw)

        options = (
            limit_options,
            concurrency_option(concurrency_help),
            executor_options,
            run_dir_option(run_dir_default),
            idle_stop_option,
            sandbox_option,
        )
        for option in reversed(options):  # --help lists them in this order
            command = option(command)
        return command

    return decorate


def idle_stop_option(f):
    from arena.referee.lanes import IDLE_STOP_S

    return click.option(
        "--idle-stop",
        type=click.FloatRange(0),
        default=IDLE_STOP_S,
        show_default=True,
        metavar="SECONDS",
        help="End a launched bot's process (each of its lanes) once it has played nothing for "
        "this long; it is launched again when a match seats it. 0: never.",
    )(f)


def concurrency_option(help: str = "Matches played at once.") -> Callable[[Any], Any]:
    return click.option(
        "--concurrency",
        "-j",
        type=click.IntRange(1, 1024),
        default=4,
        show_default=True,
        help=help,
    )


def rating_mode_option(help: str, default: str | None = None) -> Callable[[Any], Any]:
    """--rating-mode: how a new ladder is rated (an existing one keeps its own)."""
    from arena.ratings import RATING_MODES

    return click.option(
        "--rating-mode",
        type=click.Choice(list(RATING_MODES)),
        default=default,
        show_default=default is not None,
        help=help,
    )


def run_dir_option(
    default: Path | None = Path("runs"), help: str = "Bot logs and work directories."
) -> Callable[[Any], Any]:
    return click.option(
        "--run-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=default,
        show_default=default is not None,
        help=help,
    )


def listen_options(
    default_port: int, host_help: str, port_help: str, prefix: str = ""
) -> Callable[[Any], Any]:
    """--{prefix}host and --{prefix}port: where a server listens."""

    def decorate(f):
        f = click.option(
            f"--{prefix}port",
            type=click.IntRange(0, 65535),
            default=default_port,
            show_default=True,
            help=port_help,
        )(f)
        return click.option(
            f"--{prefix}host", default="127.0.0.1", show_default=True, help=host_help
        )(f)

    return decorate


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


STOPPED = "stopped; run the same command again to resume"


@contextlib.contextmanager
def resumable_run(*more: type[Exception]) -> Iterator[None]:
    """Around a run that the same command resumes (a ladder, a comparison): Ctrl-C says how to
    resume, and the store's refusals and errors of the `more` types become CLI errors."""
    try:
        with store_errors(*more):
            yield
    except KeyboardInterrupt:
        raise click.ClickException(STOPPED) from None


def report_run(errors: Sequence[str]) -> None:
    """The matches a run gave up on, one line each."""
    for line in errors:
        click.echo(f"given up: {line}", err=True)


def exit_if_interrupted(interrupted: bool) -> None:
    """A run that stopped early (Ctrl-C, a signal) says how to resume and exits with 130."""
    if interrupted:
        click.echo(STOPPED, err=True)
        raise SystemExit(130)


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
