"""Scrimmages on request (docs/competitions.md, "Scrimmages"): a bot's owner asks, with its
owner key, for N unrated duplicate sets against opponents of their choice; the service plays
them through its own executor (the sandbox, launcher and referee the ladders use), one match at
a time beside the ladders, and the owner reads the results and, once each set is over, its
replays. They are no ladder's matches: never rated, never on a public page or feed.

The owners' API:

    POST /api/bots/{name}/scrimmages        {"opponents": [...], "sets": N}: asks for one
    GET  /api/bots/{name}/scrimmages        the bot's scrimmages, newest first
    GET  /api/bots/{name}/scrimmages/{id}   one, with every match's result, a summary, and the
                                            replays of its finished sets
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, Sequence

from fastapi import APIRouter, Header, HTTPException
from pydantic import BaseModel, Field

from arena import replay
from arena.deadlines import within
from arena.ladder.runner import InfrastructureError, MatchExecutor
from arena.referee.match import Limits
from arena.store import (
    AsyncStore,
    Bot,
    Ladder,
    RegistryError,
    ScrimmageLimitReached,
    Store,
    StoredMatch,
    UnknownBot,
    UnknownScrimmage,
    parse_bot_spec,
)

from .backends import ScrimmageBackend
from .owners import owned, running_store

log = logging.getLogger(__name__)

# A scrimmage match's deadline, whatever its limits: a bot's every move is bounded by the
# referee's, so this only ends a match the platform itself could not finish.
MATCH_DEADLINE_S = 900.0
MAX_SETS_PER_REQUEST = 100


class ScrimmageRequest(BaseModel):
    opponents: list[str] = Field(
        ..., min_length=1, max_length=16, description="bots (NAME or NAME@N) to play against"
    )
    sets: int = Field(..., ge=1, le=MAX_SETS_PER_REQUEST, description="duplicate sets to play")


class ScrimmageRefused(Exception):
    """A request that cannot be played; the message says why and what to do."""


async def plan(
    store: AsyncStore,
    family: str,
    opponents: Sequence[str],
    ladder_for: Callable[[Bot], Ladder | None],
    available: Callable[[Ladder, Bot], Awaitable[Sequence[Bot]]],
) -> tuple[Ladder, Bot, list[Bot]]:
    """The ladder whose game and table a scrimmage of `family` plays, the version of it that
    plays (its newest that passed), and the opponents' versions; ScrimmageRefused saying why
    when there are none such."""
    bots = await store.run(Store.list_bots)
    mine = [b for b in bots if b.family == family]
    if not mine:
        raise ScrimmageRefused(f"there is no bot {family!r}")
    ladder = ladder_for(mine[0])
    if ladder is None:
        raise ScrimmageRefused(
            f"this server runs no ladder bot {family!r} may play in, so it cannot scrimmage"
        )
    seatable = await available(ladder, mine[0])
    by_family = {b.family: b for b in seatable}
    by_name = {b.name: b for b in seatable}
    if family not in by_family:
        raise ScrimmageRefused(
            f"bot {family!r} has no version that may play now (none passed verification, or "
            "it is suspended): upload one and wait for its verdict"
        )
    chosen: list[Bot] = []
    for spec in opponents:
        try:
            name, number = parse_bot_spec(spec)
        except (UnknownBot, RegistryError, ValueError) as err:
            raise ScrimmageRefused(f"{spec!r} is not a bot name: {err}") from None
        found = by_name.get(spec) if number is not None else by_family.get(name)
        if found is None:
            raise ScrimmageRefused(
                f"{spec!r} may not play now in ladder {ladder.name!r}: no such bot, removed, "
                "suspended, a version not verified, or a remote bot not connected"
            )
        if found.family == family:
            raise ScrimmageRefused(f"{spec!r} is a version of {family!r} itself")
        chosen.append(found)
    if len({b.name for b in chosen}) != len(chosen):
        raise ScrimmageRefused(f"each opponent once: {list(opponents)}")
    need = ladder.table_size - 1
    if len(chosen) != need:
        raise ScrimmageRefused(
            f"ladder {ladder.name!r} seats {ladder.table_size} at a table: name {need} "
            f"opponent{'s' if need != 1 else ''}, not {len(chosen)}"
        )
    return ladder, by_family[family], chosen


class Scrimmager:
    """Plays the service's scrimmages, one match at a time, in the order they were asked for."""

    def __init__(
        self,
        store: AsyncStore,
        executor: MatchExecutor,
        limits: Limits,
        ladders: Callable[[str], Ladder | None],
        barred: Callable[[Sequence[str]], Awaitable[str | None]],
    ):
        self.store = store
        self.executor = executor
        self.limits = limits
        self.ladders = ladders  # a ladder by name (None: no longer run by this service)
        self.barred = barred  # why a seat may no longer play (suspended, removed), or None
        self.queue: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
        self.task: asyncio.Task | None = None

    async def start(self) -> None:
        """Begin playing, first the scrimmages a stop left unfinished."""
        for item in await self.store.run(Store.unfinished_scrimmages):
            self.queue.put_nowait(item)
        self.task = asyncio.ensure_future(self._run())

    def play_later(self, scrimmage_id: int, family: str) -> None:
        self.queue.put_nowait((scrimmage_id, family))

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            scrimmage_id, family = await self.queue.get()
            try:
                await self.play(scrimmage_id, family)
            except asyncio.CancelledError:
                raise  # the server is stopping: the scrimmage goes on at the next start
            except Exception:  # the store failed: the server carries on
                log.exception("scrimmage %d of %s stopped; it goes on at the next start",
                              scrimmage_id, family)  # fmt: skip

    async def play(self, scrimmage_id: int, family: str) -> None:
        """Play the scrimmage's pending matches in order, recording each."""
        scrimmage = await self.store.run(Store.get_scrimmage, family, scrimmage_id)
        ladder = self.ladders(scrimmage.ladder)
        if ladder is None:
            await self.store.run(
                Store.fail_scrimmage,
                scrimmage_id,
                f"this server no longer runs ladder {scrimmage.ladder!r}",
            )
            return
        for m in scrimmage.matches:
            if m.status != "pending":
                continue
            barred = await self.barred(m.seats)
            if barred is not None:
                await self.store.run(Store.fail_scrimmage, scrimmage_id, f"stopped: {barred}")
                return
            seats = [await self.store.run(Store.get_bot, name) for name in m.seats]
            match = StoredMatch.outside_ladder(ladder.name, m.seats, m.seed, m.rotation)
            try:
                await self.executor.start(seats)
                result, _ = await within(
                    self.executor.play(ladder, match, self.limits), MATCH_DEADLINE_S
                )
            except (InfrastructureError, TimeoutError) as err:
                why = f"not played: the server could not run it ({err or 'no result in time'})"
                await self.store.run(Store.fail_scrimmage_match, scrimmage_id, m.index, why)
                log.warning("scrimmage %d match %d %s", scrimmage_id, m.index, why)
                continue
            doc = replay.to_dict(result, with_views=False)
            await asyncio.shield(
                self.store.run(Store.record_scrimmage_match, scrimmage_id, m.index, result, doc)
            )
        log.info("scrimmage %d of %s played", scrimmage_id, family)


def scrimmages_router(service: ScrimmageBackend) -> APIRouter:
    router = APIRouter(prefix="/api/bots", tags=["owners"])

    def store() -> AsyncStore:
        return running_store(service)

    async def owner(name: str, key: str | None) -> str:
        return await owned(service, name, key)

    @router.post("/{name}/scrimmages", status_code=202)
    async def ask(
        name: str, body: ScrimmageRequest, x_owner_key: str | None = Header(None)
    ) -> dict[str, Any]:
        """Ask for `sets` unrated duplicate sets of the bot (its newest version that passed)
        against `opponents`, within the server's sets per bot per 24 hours. Owner key only.
        Poll GET /api/bots/{name}/scrimmages/{id} for the results."""
        family = await owner(name, x_owner_key)
        try:
            ladder, bot, opponents = await service.plan_scrimmage(family, body.opponents)
        except ScrimmageRefused as err:
            raise HTTPException(422, str(err)) from None
        try:
            made = await store().run(
                Store.request_scrimmage,
                family,
                bot.name,
                [b.name for b in opponents],
                body.sets,
                ladder.name,
                service.scrimmage_sets_per_day,
            )
        except ScrimmageLimitReached as err:
            raise HTTPException(
                429, str(err), headers={"Retry-After": str(err.retry_after_s())}
            ) from None
        service.scrimmage_later(made.id, family)
        return made.to_dict()

    @router.get("/{name}/scrimmages")
    async def listing(name: str, x_owner_key: str | None = Header(None)) -> dict[str, Any]:
        """The bot's scrimmages, newest first, and its quota. Owner key only."""
        family = await owner(name, x_owner_key)
        found = await store().run(Store.scrimmages_of, family)
        return {
            "sets_per_day": service.scrimmage_sets_per_day,
            "scrimmages": [s.to_dict() for s in found],
        }

    @router.get("/{name}/scrimmages/{scrimmage_id}")
    async def one(
        name: str, scrimmage_id: int, x_owner_key: str | None = Header(None)
    ) -> dict[str, Any]:
        """One scrimmage: each match's seats, scores, ranks and faults, a summary (each bot's
        mean score, wins and faults, the bot's mean margin over each opponent), and the
        replays of its finished sets. Owner key only."""
        family = await owner(name, x_owner_key)

        def read(s: Store) -> dict[str, Any]:
            return s.get_scrimmage(family, scrimmage_id).to_dict(
                s.scrimmage_replays(family, scrimmage_id)
            )

        try:
            return await store().run(read)
        except UnknownScrimmage as err:
            raise HTTPException(404, str(err)) from None

    return router
