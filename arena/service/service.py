"""The arena service: one process holding the referee, a continuous scheduler and the web server.

For each configured open ladder the scheduler keeps up to `concurrency` matches in flight among
the ladder's available bots (registered, not suspended, and for remote bots connected), choosing
tables with `tables.choose_table` and playing each table as a duplicate set (one seed, seats
rotated). Results are stored and rated as in ladders (by default each set as one result: see
arena/ladder/ratings.py). A bot that keeps faulting is suspended with
a reason its owner can read (and an organiser can reinstate it). SIGTERM stops it gracefully:
no new matches, matches in flight get `grace_s` to finish, the rest are recorded as abandoned
(never rated), then bots, referee and web server are stopped. A restart carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.ladder import lease
from arena.ladder.local import LocalExecutor
from arena.ladder.ratings import DEFAULT_RATING_MODE, Rater
from arena.ladder.rules import STANDARD_RULES
from arena.ladder.runner import InfrastructureError
from arena.ladder.schedule import SEED_BOUND
from arena.referee.launcher import ResourceLimits
from arena.referee.match import Limits
from arena.store import AsyncStore, Bot, Ladder, Store, StoredMatch

from .tables import Candidate, FaultPolicy, choose_table

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LadderSpec:
    name: str
    game: str
    table_size: int
    options: dict[str, Any] = field(default_factory=dict)
    # The bots that may play in it (None: every registered bot), for bots of one game only.
    members: frozenset[str] | None = None


@dataclass(frozen=True)
class ServiceSettings:
    db: Path
    ladders: tuple[LadderSpec, ...]
    referee_host: str = "127.0.0.1"
    referee_port: int = 50051
    web_host: str = "127.0.0.1"
    web_port: int = 8000
    admin_key: str | None = None
    concurrency: int = 4  # matches in flight per ladder
    limits: Limits = Limits()
    resource_limits: ResourceLimits = ResourceLimits()
    run_dir: Path = Path("runs/serve")
    grace_s: float = 30.0
    fault_policy: FaultPolicy = FaultPolicy()
    share_cap: float = 1.5
    max_matches: int | None = None  # stop after this many (tests, demos); None = until stopped
    seed: int | None = None
    executor: str = "local"  # or "ray": matches run on a Ray cluster (launched bots only)
    ray_address: str | None = None
    rating_mode: str = DEFAULT_RATING_MODE  # of a new ladder; an existing one keeps its own


class ArenaService:
    def __init__(self, settings: ServiceSettings):
        self.settings = settings
        self.rng = random.Random(settings.seed)
        self.store: AsyncStore | None = None
        self.executor: LocalExecutor | None = None
        self.web = None
        self._stopping = asyncio.Event()
        self._in_flight: dict[str, set[asyncio.Task]] = {}
        self._busy: dict[str, set[str]] = {}  # ladder -> bots at a table now
        self._played: dict[tuple[str, str], int] = {}
        self._last: dict[tuple[str, str], float] = {}
        self._recent_faults: dict[str, list[bool]] = {}
        self._running: dict[tuple[str, int], str] = {}  # (ladder, index) -> referee match id
        self._joined: set[tuple[str, str]] = set()  # (ladder, bot) known to be in the ladder
        self._specs = {spec.name: spec for spec in settings.ladders}
        self._started_matches = 0
        self.ready = asyncio.Event()  # set once the referee and web server listen
        self._lost: Exception | None = None  # a ladder's lease, taken over by another run

    # ------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        s = self.settings
        self.store = await AsyncStore.open(s.db)
        leases = contextlib.AsyncExitStack()  # one run per ladder: see arena/ladder/lease.py
        try:
            await leases.enter_async_context(
                lease.held(self.store, [l.name for l in s.ladders], self._lease_lost))
            self.executor = self._make_executor()
            ladders = [await self.store.run(Store.ensure_open_ladder, l.name, l.game,
                                            l.table_size, options=l.options,
                                            rating_mode=s.rating_mode)
                       for l in s.ladders]
            await self.executor.start([])
            self.web = await self._start_web()
            self.ready.set()
            log.info("arena serving: %s, web on http://%s:%d/", self._where(), s.web_host,
                     s.web_port)
            loops = [asyncio.ensure_future(self._ladder_loop(l)) for l in ladders]
            await self._stopping.wait()
            for task in loops:
                task.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            await self._drain()
            if self._lost is not None:
                raise self._lost
        finally:
            if self.web is not None:
                await self.web.stop()
            if self.executor is not None:
                await self.executor.close()
            await leases.aclose()
            await self.store.close()

    def _lease_lost(self, err: Exception) -> None:
        self._lost = err
        self._stopping.set()

    def _make_executor(self):
        s = self.settings
        if s.executor == "ray":
            from arena.ladder.ray_executor import RayExecutor

            return RayExecutor(s.ray_address, s.run_dir, resource_limits=s.resource_limits)
        return LocalExecutor(self.store, s.run_dir, host=s.referee_host, port=s.referee_port,
                             resource_limits=s.resource_limits)

    def _directory(self):
        """The local referee's connected bots (None on Ray: its referees are on the nodes)."""
        referee = getattr(self.executor, "referee", None)
        return referee.server.directory if referee is not None else None

    def _where(self) -> str:
        directory = self._directory()
        if directory is None:
            return f"matches on the Ray cluster at {self.settings.ray_address}"
        return f"referee on {self.executor.referee.server.address}"

    def stop(self) -> None:
        """Begin a graceful stop (what SIGTERM and Ctrl-C do)."""
        self._stopping.set()

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stop)

    async def _drain(self) -> None:
        tasks = [t for group in self._in_flight.values() for t in group]
        if not tasks:
            return
        log.info("waiting up to %.0f s for %d matches in flight", self.settings.grace_s,
                 len(tasks))
        done, pending = await asyncio.wait(tasks, timeout=self.settings.grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _start_web(self):
        from .web import WebServer

        web = WebServer(self)
        await web.start()
        return web

    # ------------------------------------------------------------ scheduling

    async def _ladder_loop(self, ladder: Ladder) -> None:
        s = self.settings
        name = ladder.name
        self._in_flight[name] = set()
        self._busy[name] = set()
        await self._resume(ladder)
        rater = STANDARD_RULES.rater(ladder.settings)
        while not self._stopping.is_set():
            if s.max_matches is not None and self._started_matches >= s.max_matches:
                if not self._in_flight[name]:
                    self.stop()
                    return
            elif len(self._in_flight[name]) < s.concurrency:
                table = await self._next_table(ladder, rater)
                if table is not None:
                    await self._start_set(ladder, table)
                    continue
            await self._wait_for_change(name)

    async def _wait_for_change(self, ladder: str) -> None:
        # Woken by a match ending, or after a short while to see newly connected bots.
        tasks = self._in_flight[ladder] | {asyncio.ensure_future(self._stopping.wait())}
        done, _ = await asyncio.wait(tasks, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            if t not in self._in_flight[ladder] and not t.done():
                t.cancel()

    async def _resume(self, ladder: Ladder) -> None:
        """Matches left pending or running by a previous run are abandoned: the service chooses
        tables afresh from the bots available now."""
        await self.store.run(Store.reset_running, ladder.name)
        for match in await self.store.run(Store.matches, ladder.name, ("pending", "infra_failed")):
            await self.store.run(Store.record_infra_failure, ladder.name, match.index,
                                 "abandoned: the server stopped before it ran", give_up=True)

    async def _available(self, ladder: Ladder) -> list[Bot]:
        members = self._specs[ladder.name].members
        bots = [b for b in await self.store.run(Store.list_bots)
                if not b.suspended and (members is None or b.name in members)]
        directory = self._directory()
        available = []
        for bot in bots:
            # A remote bot plays while it is connected (never on Ray: no single referee).
            if bot.remote and (directory is None or directory.get(bot.name) is None):
                continue
            available.append(bot)
        return available

    async def _next_table(self, ladder: Ladder, rater: Rater) -> tuple[str, ...] | None:
        name = ladder.name
        bots = await self._available(ladder)
        if len(bots) < ladder.table_size:
            return None
        await self.executor.start(bots)  # launches command bots not running yet
        for bot in bots:
            if (name, bot.name) not in self._joined:
                await self.store.run(Store.join_ladder, name, bot.name)
                self._joined.add((name, bot.name))
                self._last.setdefault((name, bot.name), time.monotonic())
        standings = {s.bot: s for s in (await self.store.run(Store.rankings, name)).standings}
        candidates = []
        for bot in bots:
            st = standings.get(bot.name)
            key = (name, bot.name)
            candidates.append(Candidate(
                name=bot.name, mu=st.mu if st else rater.params.mu,
                sigma=st.sigma if st else rater.params.sigma,
                matches=(st.matches if st else 0) + self._played.get(key, 0),
                busy=bot.name in self._busy[name],
                last_played=self._last.get(key, 0.0)))
        return choose_table(candidates, ladder.table_size, rater.env, self.rng,
                            share_cap=self.settings.share_cap)

    async def _start_set(self, ladder: Ladder, table: tuple[str, ...]) -> None:
        """Play the table as a duplicate set: one seed, the seats rotated through every
        position, one match after another."""
        seed = self.rng.randrange(SEED_BOUND)  # below 2**53: it survives JSON in any language
        k = len(table)
        matches = await self.store.run(Store.add_set, ladder.name, table, seed)
        self._started_matches += k
        now = time.monotonic()
        for bot in table:
            self._busy[ladder.name].add(bot)
            self._played[(ladder.name, bot)] = self._played.get((ladder.name, bot), 0) + k
            self._last[(ladder.name, bot)] = now
        task = asyncio.ensure_future(self._play_set(ladder, table, matches))
        self._in_flight[ladder.name].add(task)
        task.add_done_callback(self._in_flight[ladder.name].discard)

    async def _play_set(self, ladder: Ladder, table: tuple[str, ...],
                        matches: list[StoredMatch]) -> None:
        try:
            for i, match in enumerate(matches):
                if self._stopping.is_set() and i > 0:
                    raise asyncio.CancelledError
                await self._play_one(ladder, match)
        except asyncio.CancelledError:
            for match in matches:
                await asyncio.shield(self.store.run(
                    Store.record_infra_failure, ladder.name, match.index,
                    "abandoned: the server was stopping", give_up=True))
        finally:
            for bot in table:
                self._busy[ladder.name].discard(bot)
                played = self._played.get((ladder.name, bot), 0)
                self._played[(ladder.name, bot)] = max(0, played - len(matches))

    async def _play_one(self, ladder: Ladder, match: StoredMatch) -> None:
        barred = await self._barred(match.seats)
        if barred is not None:  # suspended or removed since its table was chosen
            await self.store.run(Store.record_infra_failure, ladder.name, match.index,
                                 f"abandoned: {barred}", give_up=True)
            return
        running = await self.store.run(Store.start_match, ladder.name, match.index)
        match_id = f"{ladder.name}.{match.index}.{running.attempts}"
        self._running[(ladder.name, match.index)] = match_id
        try:
            result, node = await self.executor.play(ladder, running, self.settings.limits,
                                                    match_id)
        except InfrastructureError as err:
            self._running.pop((ladder.name, match.index), None)
            await self.store.run(Store.record_infra_failure, ladder.name, match.index,
                                 str(err), give_up=True)
            return
        await asyncio.shield(self.store.run(Store.record_result, ladder.name, match.index,
                                            result, node=node))
        self._running.pop((ladder.name, match.index), None)
        for seat, bot in enumerate(result.seat_names):
            history = self._recent_faults.setdefault(bot, [])
            history.append(seat in result.faulted_seats)
            del history[:-self.settings.fault_policy.window]
            reason = self.settings.fault_policy.verdict(history)
            if reason is not None:
                await self.store.run(Store.suspend_bot, bot, reason)
                self._recent_faults[bot] = []
                log.warning("suspended %s: %s", bot, reason)

    async def _barred(self, seats) -> str | None:
        """Why one of these bots may not play now (suspended or removed), or None."""
        access = await self.store.run(Store.bot_access, seats)
        for bot in seats:
            if bot not in access:
                return f"bot {bot} was removed"
            if access[bot].suspended:
                return f"bot {bot} is suspended ({access[bot].suspended_reason})"
        return None

    # ------------------------------------------------------------ for the web server

    async def check_access(self) -> None:
        """End the streams of bots revoked just now (the admin API calls it after a change,
        rather than wait for the referee's periodic check). On Ray, bots are launched on the
        nodes and are not checked."""
        check = getattr(self.executor, "check_access", None)
        if check is not None:
            await check()

    def live_replay(self, ladder: str, index: int) -> dict[str, Any] | None:
        """The replay so far of a match this service is playing (the web's LiveSource). Called
        from the web server's worker threads: it returns a fresh snapshot."""
        match_id = self._running.get((ladder, index))
        referee = getattr(self.executor, "referee", None)
        if match_id is None or referee is None:
            return None  # on Ray the match is played on a node: shown when it is stored
        live = referee.server.live.get(match_id)
        return live.replay_so_far() if live is not None else None
