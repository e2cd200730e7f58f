"""The competitions `arena serve` runs (docs/competitions.md): each one's open ladder is one of
the service's ladders while it is open; a loop per competition takes the clock's steps
(arena.competitions.lifecycle.tick), and in the finals plays the finals' ladder a round at a
time with the ladder runner, on the service's executor, then lets lifecycle decide whether to
play another round or to publish. Everything it acts on is read back from the store, so a
restart (after a stop or a kill -9) carries on where the stored steps left it, and a step taken
by `arena competition advance` in another process is seen within a poll."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Callable, Sequence

from arena.competitions import lifecycle
from arena.competitions.phases import FINALS, PUBLISHED, uploads_open
from arena.deadlines import within
from arena.ladder.executors import RunSettings
from arena.ladder.runner import LadderRunner, MatchExecutor
from arena.store import (
    AsyncStore,
    Competition,
    CompetitionError,
    Store,
    UploadsClosed,
    parse_bot_spec,
)
from arena.store.registry import VERIFYING

log = logging.getLogger(__name__)
POLL_S = 0.25  # how often a competition's loop looks at the clock and the store


def open_ladders(store: Store, names: Sequence[str]) -> list[tuple[Competition, str]]:
    """Each named competition (UnknownCompetition for a name that is none) and its open ladder."""
    return [(c, c.open_ladder) for c in (store.get_competition(n) for n in names)]


def _verifying(store: Store, comp: Competition) -> bool:
    """Whether a version of one of the competition's bots is still being verified."""
    families = comp.bots
    return any(
        b.status == VERIFYING and (families is None or b.family in families)
        for b in store.list_bots()
    )


def _round_over(store: Store, name: str) -> str | None:
    return lifecycle.finals_round_over(store, store.get_competition(name))


class CompetitionDriver:
    """The competitions of one service: their loops, and what the rest of the service asks."""

    def __init__(
        self,
        competitions: Sequence[Competition],
        store: AsyncStore,
        executor: MatchExecutor,
        run: RunSettings,
        stopping: asyncio.Event,
        clock: Callable[[], float] = time.time,
    ):
        self._known = {c.name: c for c in competitions}
        self._store = store
        self._executor = executor
        self._run = run
        self._stopping = stopping
        self._clock = clock
        self._said: dict[str, str] = {}  # the last problem logged per competition

    # ------------------------------------------------------------ what the service asks

    def ladder_open(self, ladder: str) -> bool:
        """Whether `ladder` may start sets now: False for a competition's open ladder once the
        competition takes no more uploads."""
        for comp in self._known.values():
            if comp.open_ladder == ladder:
                return uploads_open(comp.phase, comp.freeze_at, self._clock())
        return True

    def seatable(self) -> set[str]:
        """The versions the finals play (the executor must not retire them)."""
        return {b for c in self._known.values() if c.phase == FINALS for b in c.entrants}

    async def upload_terms(self, family: str, per_day: int) -> int:
        """The uploads per day the bot `family` may have now (the fewest any of its competitions
        allows), or UploadsClosed once one of them is frozen."""
        family = parse_bot_spec(family)[0]
        for name in self._known:
            comp = await self._store.run(Store.get_competition, name)
            if comp.bots is not None and family not in comp.bots:
                continue
            if not uploads_open(comp.phase, comp.freeze_at, self._clock()):
                raise UploadsClosed(
                    f"competition {name!r} is {comp.phase}: uploads closed at its freeze "
                    f"({_utc(comp.freeze_at)}); its entrants are the versions that passed "
                    "before it. See its page for the finals and the standings"
                )
            per_day = min(per_day, int(comp.config["uploads_per_day"]))
        return per_day

    # ------------------------------------------------------------ the loops

    async def run(self) -> None:
        """A loop per competition until the service stops (or every one is published)."""
        await asyncio.gather(*(self._drive(name) for name in self._known))

    async def _drive(self, name: str) -> None:
        while not self._stopping.is_set():
            comp = await self._store.run(Store.get_competition, name)
            self._known[name] = comp
            if comp.phase == PUBLISHED:
                return
            try:
                if comp.phase == FINALS:
                    # A pause after each round: matches that failed for the platform's own
                    # reasons are not started again at once.
                    moved = await self._play_round(comp)
                else:
                    verifying = await self._store.run(_verifying, comp)
                    moved = await self._store.run(lifecycle.tick, name, self._clock(), verifying)
            except CompetitionError as err:
                if self._said.get(name) != str(err):
                    log.error("competition %s: %s", name, err)
                    self._said[name] = str(err)
                moved = comp
            if moved.phase != comp.phase:
                self._known[name] = moved
                log.info("competition %s: %s", name, _describe(moved))
                continue
            with contextlib.suppress(TimeoutError):
                await within(self._stopping.wait(), POLL_S)

    async def _play_round(self, comp: Competition) -> Competition:
        """Play what the finals' ladder has scheduled, then see whether the round decides (the
        competition is then published); returns the competition as it is now."""
        bots = [await self._store.run(Store.get_bot, b) for b in comp.entrants]
        runner = LadderRunner(self._store, self._executor, self._run.limits, self._run.concurrency)
        task = asyncio.ensure_future(runner.run(comp.finals_ladder, bots))
        stop = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not task.done():
                task.cancel()  # the matches in flight go back to pending: a restart plays them
            await asyncio.gather(task, stop, return_exceptions=True)
        if self._stopping.is_set():
            return comp
        if task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
        await self._store.run(_round_over, comp.name)
        return await self._store.run(Store.get_competition, comp.name)


def _describe(comp: Competition) -> str:
    if comp.phase == PUBLISHED:
        top = ", ".join(s["bot"] for s in (comp.standings or [])[:3])
        return f"published ({comp.finals_end}); the first: {top}"
    if comp.phase == FINALS:
        return f"finals among {len(comp.entrants)} entrants ({', '.join(comp.entrants)})"
    return f"{comp.phase}; entrants: {', '.join(comp.entrants) or 'none'}"


def _utc(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))
