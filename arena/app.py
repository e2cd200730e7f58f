"""The composition root: builds the referee, launcher, store and runners from settings.

CLI commands parse and validate, then call one function here; nothing else constructs these
objects, so there are no module-level singletons.
"""

from __future__ import annotations

import asyncio
import logging
import random
import shlex
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from arena.botcommand import SCRIPT_SUFFIXES
from arena.games.base import Game
from arena.ladder.executors import RunSettings
from arena.ratings import (
    DEFAULT_RATING_MODE,
    MARGINS_MODE,
    MATCH_MODE,
    SET_MODE,
    SETTLED_CONFIDENCE,
)
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, ResourceLimits
from arena.referee.match import Limits
from arena.results import MatchResult
from arena.stopsignals import on_stop_signals

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MatchSettings:
    game: Game
    bots: tuple[tuple[str, BotCommand], ...]  # (seat name, command) in seat order
    seed: int
    limits: Limits = Limits()
    resource_limits: ResourceLimits = ResourceLimits()
    run_dir: Path | None = None  # where bot logs and work directories go; a temp dir if None


# File names that say nothing of the bot: its directory names it instead
# (`node example_bots/node_random/index.js` plays as node_random).
_GENERIC_STEMS = frozenset({"index", "main", "bot", "__main__", "run", "start", "app"})


def seat_names_for(commands: Sequence[str]) -> list[str]:
    """Readable, distinct seat names from the bots' commands (random_bot, random_bot#2, ...):
    the script's name, or its directory's for a generic one (index.js, main.py, bot.py)."""
    names: list[str] = []
    for spec in commands:
        path = Path(_script_of(spec))
        base = path.stem or "bot"
        if base in _GENERIC_STEMS and path.parent.name:
            base = path.parent.name
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}#{n}"
        names.append(name)
    return names


def _script_of(spec: str) -> str:
    """The file that names a bot: its script (the first operand that is a path or has a
    script's suffix: `python dir/bot.py --level 3`), else its program or directory."""
    try:
        parts = shlex.split(spec)
    except ValueError:
        parts = spec.split()
    if not parts:
        return spec
    for arg in parts[1:]:
        if not arg.startswith("-") and ("/" in arg or arg.endswith(SCRIPT_SUFFIXES)):
            return arg
    return parts[0]


def run_match(settings: MatchSettings) -> MatchResult:
    """Start a referee on a free local port, launch the bots, play one match, end everything."""
    return asyncio.run(_run_match(settings))


async def _run_match(settings: MatchSettings) -> MatchResult:
    with tempfile.TemporaryDirectory(prefix="arena-match-") as tmp:
        run_dir = settings.run_dir or Path(tmp)
        async with RefereeHost(run_dir, resource_limits=settings.resource_limits) as host:
            for name, command in settings.bots:
                await host.launch(name, command)
            names = [name for name, _ in settings.bots]
            task = asyncio.ensure_future(
                host.run_match(settings.game, settings.seed, names, settings.limits)
            )
            # Ctrl-C or SIGTERM: stop the match, and let the host end every bot it started.
            with on_stop_signals(task.cancel):
                return await task


def random_seed() -> int:
    return random.SystemRandom().randrange(1 << 31)


# ---------------------------------------------------------------- ladders


# Whether a new ladder of `arena ladder run` opens with a round of single matches before its
# duplicate sets, by its rating mode: TrueSkill's set mode reaches the right ranking in fewer
# matches with one; the margin model (the default mode) does not (docs/benchmarks.md, issue 31).
DEFAULT_OPENING_ROUND = {SET_MODE: True, MATCH_MODE: True, MARGINS_MODE: False}


@dataclass(frozen=True)
class LadderSettings:
    db: Path
    name: str
    game: str
    table_size: int
    bots: tuple[str, ...]
    options: dict
    rounds: int = 1
    seed: int | None = None
    rating_mode: str | None = None  # None: the ladder's own, or the default for a new one
    # Whether the schedule begins with an opening round of single matches (arena.schedule).
    # None: the ladder's own, or DEFAULT_OPENING_ROUND for a new one.
    opening_round: bool | None = None
    # Keep adding rounds until every adjacent pair of the leaderboard is settled at this
    # confidence (None: play the rounds asked for), up to `max_rounds` in all.
    until_settled: float | None = None
    max_rounds: int | None = None
    run: RunSettings = RunSettings()  # how its matches are played
    progress: bool = True
    # Refuse remote bots (arena/ladder/remote.py): the run does not start if one is seated.
    no_remote: bool = False
    # Where the run's warnings go (the CLI: stderr), as one line each.
    warn: Callable[[str], None] = logging.getLogger(__name__).warning


def run_ladder(settings: LadderSettings):
    """Create (or resume) a ladder and run its remaining matches. Ctrl-C or SIGTERM stops it
    cleanly; running it again resumes. Returns (RunSummary, Rankings)."""
    return asyncio.run(_run_ladder(settings))


async def _run_ladder(settings: LadderSettings):
    from arena.ladder import lease
    from arena.store import AsyncStore, Store

    store = await AsyncStore.open(settings.db)
    try:
        # The ladder's lease first: a second run of it refuses here, before touching anything.
        async with lease.sole_run(store, settings.name) as run:
            summary, ladder = await _play_ladder(settings, store, run.tasks)
        return summary, await store.run(
            Store.rankings, ladder.name, settings.until_settled or SETTLED_CONFIDENCE
        )
    finally:
        await store.close()


async def _play_ladder(settings: LadderSettings, store, runner_task: list):
    """Run the ladder's remaining matches (and, with --until-settled, rounds added until every
    rank is settled, within --max-rounds). Returns (RunSummary of this run, the ladder)."""
    from arena.ladder import remote
    from arena.ladder.runner import ExecutorSetupError, LadderRunner, RunSummary
    from arena.store import Store, UnknownLadder

    rounds = settings.rounds
    if settings.until_settled is not None:
        # The rounds asked for are a minimum: a ladder that already added rounds to settle
        # resumes with them (the same command again carries on where it was).
        try:
            rounds = max(rounds, (await store.run(Store.get_ladder, settings.name)).rounds)
        except UnknownLadder:
            pass
    settings = replace(settings, bots=await store.run(_resolve_members, settings))
    remote_bots = remote.remote_names([await store.run(Store.get_bot, n) for n in settings.bots])
    where = f"ladder {settings.name}"
    if remote_bots and settings.no_remote:
        raise ExecutorSetupError(remote.refusal(where, remote_bots, "--no-remote"))
    if remote_bots:
        settings.warn(remote.warning(where, remote_bots, "--no-remote"))
    ladder = await _ensure_ladder(store, settings, rounds)
    bots = [await store.run(Store.get_bot, name) for name in ladder.bots]
    executor = settings.run.make_executor(
        store,
        settings.name,
        refuse_remote=remote.refused_at_hello("") if settings.no_remote else None,
    )
    bar = _progress_bar(ladder, settings.progress)
    runner = LadderRunner(
        store,
        executor,
        settings.run.limits,
        settings.run.concurrency,
        on_progress=lambda m, r: bar.update(1) if r is not None else None,
    )
    total = RunSummary(ladder.name)
    try:
        while True:
            task = asyncio.ensure_future(runner.run(ladder.name, bots))
            runner_task[:] = [task]
            try:
                with on_stop_signals(task.cancel):
                    summary = await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
                # Stopped by Ctrl-C or SIGTERM (or a lost lease): the runner put the matches in
                # flight back.
                summary = RunSummary(ladder.name, interrupted=True)
            total = _add_summaries(total, summary)
            # The rankings are read only when they decide (an --until-settled run).
            if settings.until_settled is None or not _another_round(
                settings,
                ladder,
                summary,
                await store.run(Store.rankings, ladder.name, settings.until_settled),
            ):
                break
            ladder = await _ensure_ladder(store, settings, ladder.rounds + 1)
            bar.total = ladder.num_matches
    finally:
        bar.close()
        await executor.close()
    return total, ladder


def _resolve_members(store, settings: LadderSettings) -> tuple[str, ...]:
    """The versions the ladder's bots name (Store.resolve_bot: NAME@N that one, NAME the
    latest), as their bot rows' names, which the ladder keeps. A ladder that exists keeps the
    versions it was created with: there, NAME is the version of NAME it already has, so the
    same command again resumes it after an update (a new version plays in a new ladder)."""
    from arena.store import UnknownLadder, parse_bot_spec

    try:
        have = {parse_bot_spec(name)[0]: name for name in store.get_ladder(settings.name).bots}
    except UnknownLadder:
        have = {}
    rows = []
    for spec in settings.bots:
        family, number = parse_bot_spec(spec)
        rows.append(
            have[family] if number is None and family in have else store.resolve_bot(spec).name
        )
    return tuple(rows)


async def _ensure_ladder(store, settings: LadderSettings, rounds: int):
    from arena.store import Store, UnknownLadder

    opening_round = settings.opening_round
    if opening_round is None:
        try:
            await store.run(Store.get_ladder, settings.name)
        except UnknownLadder:
            opening_round = DEFAULT_OPENING_ROUND[settings.rating_mode or DEFAULT_RATING_MODE]
    return await store.run(
        Store.ensure_ladder,
        settings.name,
        settings.game,
        settings.table_size,
        list(settings.bots),
        options=settings.options,
        rounds=rounds,
        seed=settings.seed,
        rating_mode=settings.rating_mode,
        opening_round=opening_round,
        settings={"limits": settings.run.limits.to_dict()},
    )


def _another_round(settings: LadderSettings, ladder, summary, rankings) -> bool:
    """Whether an --until-settled run adds a round: it finished its rounds (not stopped, nothing
    left unplayed), some adjacent pair is not yet settled, and the cap allows one more."""
    if settings.until_settled is None or summary.interrupted or summary.remaining:
        return False
    if settings.max_rounds is not None and ladder.rounds >= settings.max_rounds:
        return False
    return not rankings.all_settled


def _add_summaries(a, b):
    return type(a)(
        a.ladder,
        played=a.played + b.played,
        infra_failures=a.infra_failures + b.infra_failures,
        abandoned=a.abandoned + b.abandoned,
        interrupted=b.interrupted,
        remaining=b.remaining,
        errors=a.errors + b.errors,
    )


class _NoBar:
    def update(self, n: int) -> None: ...
    def close(self) -> None: ...


def _progress_bar(ladder, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(
        total=ladder.num_matches,
        initial=ladder.completed,
        unit="match",
        desc=ladder.name,
        dynamic_ncols=True,
    )
