"""A submitted version's verification: before it plays in any ladder, it plays one match
against bots chosen at random among those the ladder seats now, through the service's own
executor (the sandbox, launcher and referee the ladders use), under a deadline. A fault of its
seat (it does not start or connect, crashes, plays illegally, times out), or no verdict by the
deadline, fails it: its owner reads why, with its log's tail; a clean match makes it the version
the ladders play (Store.record_verification). The match is not rated and joins no ladder; its
replay is kept with the verdict.

A version whose runtime installs or builds it (a Python bot's wheels, a C++ bot's build:
arena.runtimes) is prepared first (arena.referee.build: in the sandbox, under the build's limits,
cached by content); a step that fails fails the version, its verdict naming the step and its
log excerpt the step's last lines. Each step's output is recorded beside the version and shown
to its owner (author_view's `steps`)."""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable, Sequence

from arena import replay
from arena.deadlines import within
from arena.ladder.runner import InfrastructureError, MatchExecutor
from arena.referee.build import DEFAULT_CACHE_MB, BuildLimits, Preparer
from arena.referee.cgroups import CgroupError
from arena.referee.match import Limits
from arena.referee.sandbox import SandboxUnavailable
from arena.results import MatchResult
from arena.runtimes import Preparation, Runtimes
from arena.store import AsyncStore, Bot, Ladder, Store, StoredMatch
from arena.store.snapshots import snapshot_root

log = logging.getLogger(__name__)

LOG_EXCERPT_CHARS = 4000  # of the version's log, kept with a failed verdict
OPPONENTS_POLL_S = 0.5  # how often to look again for opponents, while there are too few


@dataclass(frozen=True)
class VerificationSettings:
    deadline_s: float = 120.0  # for the whole verification: opponents, launch and match
    limits: Limits = Limits(move_ms=2000, time_bank_ms=10_000, max_strikes=1, connect_ms=20_000)
    runtimes: Runtimes = field(default_factory=Runtimes)  # what uploads may name (--runtimes)
    build_limits: BuildLimits = BuildLimits()  # of a version's install or build
    # Where installed environments and builds are cached (None: the bot store's .runtimes,
    # swept of what no version uses). A shared folder (several servers, a test session) is
    # never swept.
    build_cache: Path | None = None
    build_cache_mb: float = DEFAULT_CACHE_MB  # what the cache's entries may hold together
    confined: bool = True  # False: installs and builds run unconfined (--no-sandbox)


@dataclass(frozen=True)
class Verdict:
    passed: bool
    verdict: str
    log_excerpt: str | None = None
    opponents: tuple[str, ...] = ()
    replay: dict | None = None


def judge(result: MatchResult, name: str, log_tail: str | None) -> Verdict:
    """The verdict on `name` from its verification match: passed if its seat never faulted."""
    seat = result.seat_names.index(name)
    faults = [f for f in result.faults if f.seat == seat]
    opponents = tuple(n for n in result.seat_names if n != name)
    doc = replay.to_dict(result, with_views=False)
    if not faults:
        return Verdict(True, "passed", None, opponents, doc)
    what = "; ".join(
        f"{f.kind}"
        + (f" at move {f.move}" if f.move >= 0 else "")
        + (f": {f.detail}" if f.detail else "")
        for f in faults
    )
    return Verdict(False, f"failed: {what}", log_tail, opponents, doc)


def preparation_failed(prepared: Preparation) -> Verdict:
    """The verdict on a version whose install or build failed: the step, why, its last lines."""
    step = prepared.failed_step()
    if step is None:
        return Verdict(False, "failed: its preparation failed")
    command = f" ({step.command})" if step.command else ""
    return Verdict(False, f"failed: {step.name}{command}: {step.detail}", step.output or None)


class Verifier:
    """Runs verifications for the service, each in a task of its own."""

    def __init__(
        self,
        store: AsyncStore,
        executor: MatchExecutor,
        settings: VerificationSettings,
        ladder_for: Callable[[Bot], Ladder | None],
        opponents_for: Callable[[Ladder, Bot], Awaitable[Sequence[Bot]]],
        rng: random.Random,
        playing: Callable[[], bool] | None = None,
    ):
        """`playing` says whether matches are being played now: a build then runs at its busy
        quota (arena.referee.build)."""
        self.store = store
        self.executor = executor
        self.settings = settings
        self.ladder_for = ladder_for
        self.opponents_for = opponents_for
        self.rng = rng
        self.tasks: dict[str, asyncio.Task] = {}  # by the version verified
        self.records = snapshot_root(store.store.path)  # the bot store: versions and their records
        own_cache = settings.build_cache is None
        self.preparer = Preparer(
            settings.build_cache or self.records / ".runtimes",
            settings.runtimes,
            settings.build_limits,
            settings.confined,
            settings.build_cache_mb,
            self.records if own_cache else None,
            playing,
        )
        self.sweeps = own_cache  # only the store's own cache: no other server uses it

    async def sweep(self) -> None:
        """As the server starts: remove the cache entries no version uses (those of versions
        removed or failed while it was stopped, or made by a server stopped before it recorded
        them) and the ones a stopped server left half made. Only the server's own cache."""
        if not self.sweeps:
            return
        removed = await asyncio.to_thread(self.preparer.sweep, self.records, True)
        if removed:
            log.info("removed %d unused installed environments and builds", removed)

    def start(self, name: str) -> None:
        """Verify `name` in a task of its own, unless it is being verified already (the scan
        of versions left verifying at start and an upload can both ask for one version: one
        verification, not two launching its process at once)."""
        if name in self.tasks:
            return
        task = asyncio.ensure_future(self._verify_logged(name))
        self.tasks[name] = task
        task.add_done_callback(lambda _: self.tasks.pop(name, None))

    async def close(self) -> None:
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _verify_logged(self, name: str) -> None:
        try:
            await self.verify(name)
        except asyncio.CancelledError:
            raise  # the server is stopping: the version stays "verifying", verified at restart
        except Exception:  # removed meanwhile, or the store failed: the server carries on
            log.exception("verifying %s failed; it stays verifying until the next start", name)

    async def verify(self, name: str) -> str:
        """Verify the version `name` and store its verdict; returns its new status. (Cancelled
        by a stopping server, it stays "verifying": the next start verifies it again.)"""
        try:
            bot = await self.store.run(Store.get_bot, name)
            prepared = await self._prepare(bot)
            if prepared is not None and not prepared.ok:
                verdict = preparation_failed(prepared)
            else:
                verdict = await within(self._play(bot), self.settings.deadline_s)
        except TimeoutError:
            verdict = Verdict(
                False,
                f"failed: the verification did not finish within {self.settings.deadline_s:.0f} "
                "s (the bot did not start, connect or finish its match in time)",
                self._log_tail(name),
            )
        except InfrastructureError as err:
            verdict = Verdict(
                False,
                f"failed: the server could not run the verification ({err}); submit again, "
                "or tell the organiser if it persists",
                self._log_tail(name),
            )
        if not verdict.passed:
            await self._stop(name)
        status = await self.store.run(
            Store.record_verification,
            name,
            verdict.passed,
            verdict.verdict,
            verdict.log_excerpt,
            verdict.opponents,
            verdict.replay,
        )
        log.info("verified %s: %s (%s)", name, verdict.verdict, status)
        return status

    async def _prepare(self, bot: Bot) -> Preparation | None:
        """Install or build the version (None: a bot registered without a folder); then the
        cache entries no version uses any more are removed."""
        if not bot.directory:
            return None
        try:
            prepared = await self.preparer.prepare(Path(bot.directory))
        except (CgroupError, SandboxUnavailable, OSError) as err:  # the server's, not the bot's
            raise InfrastructureError(f"its install or build could not run: {err}") from err
        if self.sweeps:
            await asyncio.to_thread(self.preparer.sweep, self.records)
        return prepared

    async def _play(self, bot: Bot) -> Verdict:
        name = bot.name
        ladder = self.ladder_for(bot)
        if ladder is None:
            return Verdict(
                False,
                f"failed: this server runs no ladder bot {bot.family} may play in, so it "
                "cannot be verified; ask the organiser",
            )
        need = ladder.table_size - 1
        while True:
            pool = [b for b in await self.opponents_for(ladder, bot) if b.family != bot.family]
            if len(pool) >= need:
                break
            await asyncio.sleep(OPPONENTS_POLL_S)  # a period: bots connect or are added
        opponents = self.rng.sample(pool, need)
        seats = [bot, *opponents]
        self.rng.shuffle(seats)
        names = tuple(b.name for b in seats)
        await self.executor.start(seats)
        match = StoredMatch.outside_ladder(ladder.name, names, self.rng.randrange(2**31))
        result, _ = await self.executor.play(ladder, match, self.settings.limits)
        return judge(result, name, self._log_tail(name))

    def _log_tail(self, name: str) -> str | None:
        referee = getattr(self.executor, "referee", None)  # on Ray the bot ran on a node
        proc = referee.bots.get(name) if referee is not None else None
        return proc.log_tail(LOG_EXCERPT_CHARS) if proc is not None else None

    async def _stop(self, name: str) -> None:
        """A failed version's process ends with its verification (a passed one plays on)."""
        lanes = getattr(self.executor, "lanes", None)  # on Ray the bot ran on a node
        if lanes is not None:
            await lanes.stop_bot(name)
