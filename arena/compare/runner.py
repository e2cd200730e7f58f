"""Running a comparison: deals appended a batch at a time to the comparison's ladder, played by
the ladder runner (any executor), and the test (sprt.py) read from the stored results after
each batch, until it decides or the cap is reached.

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
from typing import Any, Callable, Sequence

from arena.ladder.executors import RunSettings
from arena.results import COMPLETED, FINISHED

from . import plan, sprt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompareSettings:
    db: Path
    name: str
    new: str
    base: str
    opponents: tuple[str, ...]
    game: str
    table_size: int
    options: dict
    min_gain: float  # D: "NEW is better by at least D points per match"
    alpha: float = 0.05
    beta: float = 0.05
    max_matches: int = 2000
    seed: int = 0
    run: RunSettings = RunSettings()  # how its matches are played

    @property
    def hypotheses(self) -> sprt.Hypotheses:
        return sprt.Hypotheses(delta1=self.min_gain, alpha=self.alpha, beta=self.beta)

    @property
    def matches_per_deal(self) -> int:
        return 2 * self.table_size

    @property
    def max_deals(self) -> int:
        return max(1, self.max_matches // self.matches_per_deal)

    def definition(self) -> dict[str, Any]:
        """What makes the comparison the same one when it is run again (stored with it)."""
        return {
            "new": self.new,
            "base": self.base,
            "opponents": list(self.opponents),
            "min_gain": self.min_gain,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_matches": self.max_matches,
        }


@dataclass
class Outcome:
    """Where a comparison stands: the test over its complete deals, in deal order."""

    status: sprt.Status
    gain: sprt.Running  # NEW's mean gain in points per match, per deal
    rank_gain: sprt.Running  # NEW's mean gain in places per match (positive: NEW placed better)
    deals: int  # deals the test used
    matches: int  # matches played (completed or given up) in all
    void_deals: int = 0  # deals with a match given up (no observation)
    interrupted: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str | None:
        return self.status.verdict


def observations(
    k: int, new: str, base: str, rows: Sequence[Any]
) -> tuple[list[tuple[float, float]], int, int]:
    """(gain, rank gain) per complete deal, in deal order up to the first deal not finished;
    with the number of deals with a match given up (skipped: no pair to compare), and the number
    of matches finished. `rows` are Store.match_scores rows."""
    by_deal: dict[int, list[Any]] = {}
    finished = 0
    for row in rows:
        by_deal.setdefault(row.set_index, []).append(row)
        finished += row.status in FINISHED
    out: list[tuple[float, float]] = []
    void = 0
    for deal in sorted(by_deal):
        matches = by_deal[deal]
        if len(matches) < 2 * k or any(m.status not in FINISHED for m in matches):
            break
        if any(m.status != COMPLETED for m in matches):
            void += 1
            continue
        scores: dict[str, list[float]] = {new: [], base: []}
        ranks: dict[str, list[float]] = {new: [], base: []}
        for m in matches:
            for side in (new, base):
                if side in m.bots:
                    seat = m.bots.index(side)
                    scores[side].append(m.scores[seat])
                    ranks[side].append(m.ranks[seat])
        out.append(
            (
                plan.observation(k, scores[new], scores[base]),
                plan.observation(k, ranks[base], ranks[new]),
            )
        )
    return out, void, finished


def outcome(settings: CompareSettings, rows: Sequence[Any]) -> Outcome:
    """The test over the stored results (pure: the same results give the same outcome)."""
    pairs, void, finished = observations(settings.table_size, settings.new, settings.base, rows)
    spec = settings.hypotheses
    gain, rank_gain = sprt.Running(), sprt.Running()
    status = sprt.status(spec, gain, settings.max_deals)
    used = 0
    for x, r in pairs:
        gain, rank_gain = gain.add(x), rank_gain.add(r)
        used += 1
        status = sprt.status(spec, gain, settings.max_deals)
        if status.verdict is not None:
            break
    return Outcome(
        status=status, gain=gain, rank_gain=rank_gain, deals=used, matches=finished, void_deals=void
    )


def stored_settings(ladder: Any) -> CompareSettings:
    """The settings of a stored comparison (a Ladder whose settings hold its definition), enough
    to compute its outcome (not to run it: no database path, executor or limits)."""
    d = ladder.settings.get("comparison")
    if not d:
        raise ValueError(f"{ladder.name!r} is a ladder, not a comparison")
    return CompareSettings(
        db=Path(),
        name=ladder.name,
        new=d["new"],
        base=d["base"],
        opponents=tuple(d["opponents"]),
        game=ladder.game,
        table_size=ladder.table_size,
        options=dict(ladder.options),
        min_gain=d["min_gain"],
        alpha=d["alpha"],
        beta=d["beta"],
        max_matches=d["max_matches"],
        seed=ladder.seed,
    )


def llr_path(settings: CompareSettings, rows: Sequence[Any]) -> list[float]:
    """The test's LLR after each deal it used (for the comparison's chart)."""
    pairs, _, _ = observations(settings.table_size, settings.new, settings.base, rows)
    spec, running, out = settings.hypotheses, sprt.Running(), []
    for x, _ in pairs[: outcome(settings, rows).deals]:
        running = running.add(x)
        out.append(sprt.llr(spec, running))
    return out


def _finite(x: float) -> float | None:
    """JSON has no infinity and no NaN."""
    return None if x != x or x in (math.inf, -math.inf) else round(x, 6)


def outcome_json(settings: CompareSettings, o: Outcome) -> dict[str, Any]:
    s = o.status
    return {
        "comparison": settings.name,
        "new": settings.new,
        "base": settings.base,
        "opponents": list(settings.opponents),
        "game": settings.game,
        "table_size": settings.table_size,
        "options": settings.options,
        "min_gain": settings.min_gain,
        "alpha": settings.alpha,
        "beta": settings.beta,
        "max_matches": settings.max_matches,
        "seed": settings.seed,
        "verdict": o.verdict,
        "interrupted": o.interrupted,
        "deals": s.n,
        "matches": o.matches,
        "void_deals": o.void_deals,
        "mean_gain": _finite(s.mean),
        "interval": [_finite(s.low), _finite(s.high)],
        "mean_rank_gain": _finite(o.rank_gain.mean) if o.rank_gain.n else None,
        "llr": _finite(s.llr),
        "bounds": [_finite(s.lower), _finite(s.upper)],
    }


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
