"""Running a comparison: deals appended a batch at a time to the comparison's ladder, played by
the ladder runner (any executor), and the test (sprt.py) read from the stored results after
each batch (verdict.py), until it decides or the cap is reached.

Everything a verdict depends on is in the database: the deals follow from the comparison's seed
(plan.py), every match's result is stored as it finishes, and the test is recomputed from the
stored results in deal order, stopping at the first deal where it decides. A comparison that is
stopped (Ctrl-C, kill -9) and run again with the same command plays what is missing and reaches
the same verdict at the same deal, whatever it had played beyond that deal.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from arena.ladder.executors import RunSettings

from . import plan, sprt
from .verdict import Comparison, Outcome, outcome

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompareSettings(Comparison):
    """A comparison (verdict.Comparison) and how to run it: its database and how its matches
    are played."""

    db: Path = field(kw_only=True)
    run: RunSettings = field(default=RunSettings(), kw_only=True)


def run_comparison(
    settings: CompareSettings, on_progress: Callable[[Outcome], None] | None = None
) -> Outcome:
    """Create (or resume) the comparison and play it until the test decides or the cap. Ctrl-C
    or SIGTERM stops it cleanly (Outcome.interrupted); the same call again resumes."""
    return asyncio.run(_run(settings, on_progress or (lambda o: None)))


async def _run(settings: CompareSettings, on_progress: Callable[[Outcome], None]) -> Outcome:
    from arena.ladder import lease
    from arena.store import AsyncStore

    store = await AsyncStore.open(settings.db)
    try:
        async with lease.sole_run(store, settings.name) as run:
            return await _play(settings, store, run.tasks, on_progress)
    finally:
        await store.close()


async def _play(
    settings: CompareSettings, store, tasks: list, on_progress: Callable[[Outcome], None]
) -> Outcome:
    from arena.ladder.runner import LadderRunner
    from arena.stopsignals import on_stop_signals
    from arena.store import Store

    k = settings.table_size
    bots = (settings.new, settings.base, *settings.opponents)
    ladder = await store.run(
        Store.ensure_comparison,
        settings.name,
        settings.game,
        k,
        bots,
        options=settings.options,
        seed=settings.seed,
        comparison=settings.definition(),
    )
    bot_rows = [await store.run(Store.get_bot, name) for name in ladder.bots]
    executor = settings.run.make_executor(store, settings.name)
    runner = LadderRunner(store, executor, settings.run.limits, settings.run.concurrency)
    # Enough deals at once to keep every slot busy, and at least two: the test can stop only
    # between batches, so a batch is small against the deals a verdict needs (8 or more).
    batch = max(2, math.ceil(settings.run.concurrency / (2 * k)))
    errors: list[str] = []
    try:
        while True:
            current = outcome(settings, await store.run(Store.match_scores, settings.name))
            current.errors = errors
            on_progress(current)
            planned = (await store.run(Store.get_ladder, settings.name)).num_matches // (2 * k)
            if current.verdict is not None:
                return current
            if planned - current.deals - current.void_deals <= 0:
                if planned >= settings.max_deals:
                    # Every planned deal is played and the cap allows no more: the deals given
                    # up leave the test short of its cap, so it ends undecided here.
                    current.status = sprt.status(settings.hypotheses, current.gain, 0)
                    return current
                await _append_deals(
                    store, settings, planned, min(batch, settings.max_deals - planned)
                )
            task = asyncio.ensure_future(runner.run(settings.name, bot_rows))
            tasks[:] = [task]
            with on_stop_signals(task.cancel):
                try:
                    summary = await task
                except asyncio.CancelledError:
                    if not task.cancelled():
                        raise
                    current.interrupted = True
                    return current
            errors.extend(summary.errors)
    finally:
        await executor.close()


async def _append_deals(store, settings: CompareSettings, first: int, count: int) -> None:
    from arena.store import Store

    matches = [
        m
        for deal in range(first, first + count)
        for m in plan.deal_matches(
            settings.new,
            settings.base,
            settings.opponents,
            settings.table_size,
            settings.seed,
            deal,
        )
    ]
    rows = [_Scheduled(m.index, m.deal, m.deal, m.rotation, m.seed) for m in matches]
    await store.run(Store.append_matches, settings.name, rows, [m.seats for m in matches])


@dataclass(frozen=True, slots=True)
class _Scheduled:
    """A comparison's match as the store schedules it: its deal is its set (and round)."""

    index: int
    set_index: int
    round: int
    rotation: int
    seed: int
