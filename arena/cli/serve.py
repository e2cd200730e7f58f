"""`arena serve`: run Arena as a service (referee, continuous ladders, web)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from pathlib import Path
from typing import Mapping

import click

from arena.games import ConfigError, make_game
from arena.ladder.runner import ExecutorSetupError
from arena.ratings import DEFAULT_RATING_MODE
from arena.referee.build import BuildLimits
from arena.service.service import ArenaService, LadderSpec, ServiceSettings
from arena.service.verification import DEFAULT_CACHE_MB, VerificationSettings
from arena.startup import configure_logging
from arena.store import DEFAULT_UPLOADS_PER_DAY
from arena.store.scrimmages import DEFAULT_SCRIMMAGE_SETS_PER_DAY

from .common import (
    db_option,
    listen_options,
    rating_mode_option,
    run_options,
    store_errors,
)
from .runtimes import load_runtimes

ADMIN_KEY_ENV = "ARENA_ADMIN_KEY"


def read_admin_key(
    path: Path | None, on_command_line: str | None, environ: Mapping[str, str]
) -> str | None:
    """The admin API's key, from --admin-key-file or ARENA_ADMIN_KEY (None: the admin API is
    off). A key given on the command line, an unreadable or empty file, or both sources at
    once are refused with what to do instead."""
    if on_command_line is not None:
        raise click.UsageError(
            "--admin-key is not accepted: a key on the command line is visible to every user "
            "of the machine (ps, /proc). Put it in a file only you can read and pass "
            f"--admin-key-file FILE, or set the {ADMIN_KEY_ENV} environment variable"
        )
    from_env = environ.get(ADMIN_KEY_ENV)
    if path is None:
        if from_env is not None and not from_env.strip():
            raise click.UsageError(
                f"{ADMIN_KEY_ENV} is set but empty; set it to the admin "
                "key, or unset it to run without the admin API"
            )
        return from_env.strip() if from_env is not None else None
    if from_env is not None:
        raise click.UsageError(
            f"both --admin-key-file and {ADMIN_KEY_ENV} give an admin key; give one of them"
        )
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise click.BadParameter(
            f"there is no file {path}; write the key into it (readable by you only: chmod 600)",
            param_hint="--admin-key-file",
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise click.BadParameter(
            f"cannot read the admin key from {path}: {err}", param_hint="--admin-key-file"
        ) from None
    if not key:
        raise click.BadParameter(
            f"{path} is empty; write the admin key into it", param_hint="--admin-key-file"
        )
    if path.stat().st_mode & 0o077:
        click.echo(
            f"warning: {path} can be read by other users; the admin key is as powerful "
            f"as a shell login here: chmod 600 {path}",
            err=True,
        )
    return key


def parse_ladder(text: str) -> LadderSpec:
    """NAME=GAME:K[:OPTION,...], e.g. balloon-3=balloon:3 or boom-adv=boom:4:advanced,ruse."""
    try:
        name, spec = text.split("=", 1)
        parts = spec.split(":")
        game, k = parts[0], int(parts[1])
        options = {o: True for o in parts[2].split(",") if o} if len(parts) > 2 else {}
        if len(parts) > 3:
            raise ValueError
    except (ValueError, IndexError):
        raise click.BadParameter(
            f"{text!r} is not NAME=GAME:K[:OPTION,...] (for example "
            "balloon-3=balloon:3 or boom-adv=boom:4:advanced,ruse)"
        ) from None
    try:
        make_game(game, k, **options)
    except ConfigError as err:
        raise click.BadParameter(f"{text!r}: {err}") from None
    return LadderSpec(name, game, k, options)


def apply_members(specs: tuple[LadderSpec, ...], members: tuple[str, ...]):
    """LADDER=BOT,BOT... restricts a ladder to those bots."""
    by_name = {s.name: s for s in specs}
    chosen: dict[str, frozenset[str]] = {}
    for text in members:
        name, _, bots = text.partition("=")
        names = frozenset(b.strip() for b in bots.split(",") if b.strip())
        if name not in by_name or not names:
            raise click.BadParameter(
                f"{text!r} is not LADDER=BOT[,BOT...] for one of the --ladder names "
                f"({', '.join(by_name)})",
                param_hint="--members",
            )
        chosen[name] = names
    return tuple(dataclasses.replace(s, members=chosen.get(s.name)) for s in specs)


@click.command("serve")
@db_option
@click.option(
    "--ladder",
    "ladders",
    multiple=True,
    metavar="NAME=GAME:K[:OPTS]",
    help="An open ladder to run (repeatable), e.g. balloon-3=balloon:3.",
)
@click.option(
    "--competition",
    "competitions",
    multiple=True,
    metavar="NAME",
    help="A competition to run (repeatable; arena competition create makes one).",
)
@click.option(
    "--members",
    "members",
    multiple=True,
    metavar="LADDER=BOT[,BOT...]",
    help="Only these bots play in that ladder (repeatable; default: every bot).",
)
@listen_options(
    50051,
    "Address the referee listens on (0.0.0.0 for remote bots).",
    "The referee's port (bots connect here).",
)
@listen_options(
    8000,
    "Address the web pages listen on (0.0.0.0 for every interface).",
    "The web pages' port.",
    prefix="web-",
)
@click.option(
    "--admin-key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"A file holding the admin API's key (make it readable by you only: "
    f"chmod 600). Or set {ADMIN_KEY_ENV}. Without either, the admin API is off. "
    "The key is as powerful as a shell login on this machine.",
)
@click.option(
    "--admin-key",
    "admin_key_value",
    hidden=True,
    help="Refused: a key on the command line is visible to every user (ps).",
)
@run_options("Matches in flight per ladder.", Path("runs/serve"), check_sandbox=True)
@click.option(
    "--grace",
    type=click.FloatRange(0, 3600),
    default=30.0,
    show_default=True,
    help="Seconds matches in flight get to finish on SIGTERM.",
)
@click.option(
    "--uploads-per-day",
    type=click.IntRange(1),
    help="Uploads (arena submit) each bot may have in 24 hours; kept in the database, so a "
    f"later start without this flag keeps it [default: {DEFAULT_UPLOADS_PER_DAY}].",
)
@click.option(
    "--scrimmage-sets-per-day",
    type=click.IntRange(0),
    help="Unrated duplicate sets (arena scrimmage) each bot's owner may ask for in 24 hours; "
    "0 turns scrimmages off; kept in the database, so a later start without this flag keeps "
    f"it [default: {DEFAULT_SCRIMMAGE_SETS_PER_DAY}].",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Seat remote bots (registered with --remote, connecting by themselves). Off by "
    "default: a remote bot runs on its owner's machine and can see every hand of a set over "
    "its rotations, so results are fair only among trusted remote bots (docs/protocol.md). "
    "Without it a remote bot's connection is refused, saying why.",
)
@click.option(
    "--match-logs-days",
    type=click.FloatRange(0, min_open=True),
    default=30.0,
    show_default=True,
    help="Keep what launched bots wrote in each match (shown to their owners) this many days.",
)
@click.option(
    "--match-logs-mb",
    type=click.FloatRange(0, min_open=True),
    default=1024.0,
    show_default=True,
    help="Keep at most this many MB of the bots' match logs, the oldest removed first.",
)
@click.option("--max-matches", type=click.IntRange(1), help="Stop after this many matches.")
@click.option("--seed", type=int, help="Seed of the table choices (random if omitted).")
@click.option(
    "--runtimes",
    "runtimes_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A TOML file of the organiser's own runtimes (Python with packages from a "
    "wheelhouse), beside the built-in python, node and cpp (docs/submit.md#runtimes).",
)
@click.option(
    "--build-cache",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where installed environments and builds are kept, by content (default: the bot "
    "store's .runtimes, swept of what no version uses; a folder given here is never swept).",
)
@click.option(
    "--build-cache-mb",
    type=click.FloatRange(0, min_open=True),
    default=DEFAULT_CACHE_MB,
    show_default=True,
    help="The installed environments and builds together hold at most this many MB; past it, "
    "those no version uses are removed, and a version whose own does not fit fails, saying so.",
)
@click.option(
    "--build-time-s",
    type=click.FloatRange(0, min_open=True),
    default=BuildLimits.time_s,
    show_default=True,
    help="A version's install or build, all its steps together, is stopped past this many "
    "seconds (counted at half while matches are played: docs/submit.md#runtimes).",
)
@click.option(
    "--build-memory-mb",
    type=click.IntRange(16),
    default=BuildLimits.memory_mb,
    show_default=True,
    help="An install or build step's processes together may use this many MB of memory.",
)
@click.option(
    "--build-processes",
    type=click.IntRange(4),
    default=BuildLimits.processes,
    show_default=True,
    help="An install or build step may run this many processes and threads at once.",
)
@click.option(
    "--build-disk-mb",
    type=click.IntRange(1),
    default=BuildLimits.disk_mb,
    show_default=True,
    help="An install or build's folder (and any one file in it) holds at most this many MB.",
)
@rating_mode_option(
    "How a new ladder is rated: each table's duplicate set as one result by "
    "summed scores (set; docs/benchmarks.md#rating), or each match (match). An "
    "existing ladder keeps its own.",
    DEFAULT_RATING_MODE,
)
def serve_cmd(
    db,
    ladders,
    competitions,
    members,
    host,
    port,
    web_host,
    web_port,
    admin_key_file,
    admin_key_value,
    grace,
    uploads_per_day,
    scrimmage_sets_per_day,
    allow_remote,
    match_logs_days,
    match_logs_mb,
    max_matches,
    seed,
    runtimes_file,
    build_cache,
    build_cache_mb,
    build_time_s,
    build_memory_mb,
    build_processes,
    build_disk_mb,
    rating_mode,
    run,
):
    """Run Arena as a service: registered bots play continuous ladders; the web shows them.

    The admin API (register, suspend, reinstate, remove bots, rotate their tokens) is on when a
    key is given, in the ARENA_ADMIN_KEY environment variable or in a file (--admin-key-file);
    never on the command line, where any user of the machine can read it.
    """
    admin_key = read_admin_key(admin_key_file, admin_key_value, os.environ)
    if not ladders and not competitions:
        raise click.UsageError("give a ladder to run (--ladder) or a competition (--competition)")
    specs = tuple(parse_ladder(text) for text in ladders)
    if len({s.name for s in specs}) != len(specs):
        raise click.UsageError("two --ladder options have the same name")
    specs = apply_members(specs, members)
    settings = ServiceSettings(
        db=db,
        ladders=specs,
        referee_host=host,
        referee_port=port,
        web_host=web_host,
        web_port=web_port,
        admin_key=admin_key,
        run=run,
        grace_s=grace,
        uploads_per_day=uploads_per_day,
        scrimmage_sets_per_day=scrimmage_sets_per_day,
        allow_remote=allow_remote,
        match_logs_days=match_logs_days,
        match_logs_mb=match_logs_mb,
        max_matches=max_matches,
        seed=seed,
        rating_mode=rating_mode,
        competitions=tuple(dict.fromkeys(competitions)),
        verification=VerificationSettings(
            runtimes=load_runtimes(runtimes_file),
            build_cache=build_cache,
            build_cache_mb=build_cache_mb,
            build_limits=BuildLimits(
                time_s=build_time_s,
                memory_mb=build_memory_mb,
                processes=build_processes,
                disk_mb=build_disk_mb,
            ),
        ),
    )
    configure_logging(logging.INFO)

    try:
        with store_errors(ExecutorSetupError):
            asyncio.run(ArenaService(settings).run())
    except OSError as err:
        raise click.ClickException(f"cannot start: {err}") from None
