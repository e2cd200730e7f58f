"""Running a ladder's scheduled matches: concurrently, resumably, through an executor.

The runner takes the ladder's runnable matches (pending, or failed for infrastructure reasons)
in schedule order and keeps `concurrency` of them in flight. Each finished match is recorded
with its rating update and replay in one transaction by the store, which also applies ratings
strictly in schedule order; so a run that is stopped (Ctrl-C, or kill -9) and run again resumes
where it was, loses nothing, counts nothing twice, and ends with the ratings of a run that was
never stopped.

A bot's fault is part of a match's result (a rated loss for that bot). An infrastructure fault
(the referee or a worker fails) is an `InfrastructureError` from the executor: the attempt is
recorded, never rated, and the match is tried again, up to `max_attempts`. A match taken back
from a stopped or killed run is not a failed attempt (the store takes its attempt back), so
resumes never use up its retries.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from arena.referee.match import Limits
from arena.results import MatchResult
from arena.store import RUNNABLE, AsyncStore, Bot, Ladder, Store, StoredMatch

log = logging.getLogger(__name__)


class ExecutorSetupError(Exception):
    """An executor cannot start for a reason the user can fix (a cluster that cannot be
    reached, a bot that cannot run there): reported, not retried."""


class InfrastructureError(Exception):
    """A match attempt failed for a reason that is not any bot's: retried, never rated."""


class BotUnlaunchable(InfrastructureError):
    """One bot's own command cannot be launched (its stored folder or manifest gone or broken
    since it was registered): not the platform's fault, and no retry mends it. A continuous
    ladder (arena serve) suspends the bot, saying why, and plays on without it; a fixed run
    stops with the message, as for any InfrastructureError it cannot get past."""

    def __init__(self, bot: str, detail: str):
        super().__init__(f"bot {bot} cannot be launched: {detail}")
        self.bot = bot
        self.detail = detail


class MatchExecutor(Protocol):
    """Where matches run: this machine (LocalExecutor) or a cluster (arena.ladder.ray_executor)."""

    async def start(self, bots: Sequence[Bot]) -> None:
        """Get ready to run matches among these bots (launch their processes, ...)."""

    async def play(
        self, ladder: Ladder, match: StoredMatch, limits: Limits
    ) -> tuple[MatchResult, str]:
        """Play one match as Store.start_match returned it: its bots are told its opaque
        `match_key` and given its `bot_seeds`. Returns its result and the node that ran it.
        Raises InfrastructureError for a failure that is not a bot's."""

    async def retire(self, names: Sequence[str]) -> None:
        """These bots may no longer be seated: end their processes and tokens once they play
        no match (seated again, they are launched again)."""

    async def close(self) -> None:
        """End everything started (bot processes, referees, workers)."""


@dataclass
class RunSummary:
    ladder: str
    played: int = 0  # matches completed in this run
    infra_failures: int = 0
    abandoned: int = 0
    interrupted: bool = False
    remaining: int = 0
    errors: list[str] = field(default_factory=list)


Progress = Callable[[StoredMatch, MatchResult | None], None]


class LadderRunner:
    def __init__(
        self,
        store: AsyncStore,
        executor: MatchExecutor,
        limits: Limits,
        concurrency: int = 4,
        max_attempts: int = 3,
        on_progress: Progress | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.store = store
        self.executor = executor
        self.limits = limits
        self.concurrency = concurrency
        self.max_attempts = max_attempts
        self.on_progress = on_progress or (lambda match, result: None)

    async def run(self, ladder_name: str, bots: Sequence[Bot]) -> RunSummary:
        """Run every runnable match of the ladder. Cancelling this (Ctrl-C) stops cleanly: the
        matches in flight go back to pending, nothing half-done is stored."""
        summary = RunSummary(ladder_name)
        # Left running by a run that was killed.
        await self.store.run(Store.reset_running, ladder_name)
        ladder = await self.store.run(Store.get_ladder, ladder_name)
        queue: asyncio.Queue[StoredMatch] = asyncio.Queue()
        for match in await self.store.run(Store.matches, ladder_name, RUNNABLE):
            queue.put_nowait(match)
        summary.remaining = queue.qsize()
        if queue.empty():
            return summary
        await self.executor.start(bots)
        workers = [
            asyncio.ensure_future(self._worker(ladder, queue, summary))
            for _ in range(min(self.concurrency, queue.qsize()))
        ]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            # Stopped by the user, or one worker failed (the store refused a write): every
            # other worker stops too, and the matches they had in flight go back to pending.
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            remaining = await self.store.run(Store.matches, ladder_name, RUNNABLE)
            summary.remaining = len(remaining)
        return summary

    async def _worker(self, ladder: Ladder, queue: asyncio.Queue, summary: RunSummary) -> None:
        while not queue.empty():
            match = queue.get_nowait()
            try:
                # Shielded: the writer thread marks the match running whatever happens here, so a
                # Ctrl-C during this await must put it back (the store runs calls in order).
                running = await asyncio.shield(
                    self.store.run(Store.start_match, ladder.name, match.index)
                )
            except asyncio.CancelledError:
                await asyncio.shield(self.store.run(Store.release_match, ladder.name, match.index))
                raise
            try:
                result, node = await self.executor.play(ladder, running, self.limits)
            except asyncio.CancelledError:
                # Stopped by the user: the match was not played; it goes back to pending.
                await asyncio.shield(self.store.run(Store.release_match, ladder.name, match.index))
                raise
            except InfrastructureError as err:
                give_up = running.attempts >= self.max_attempts
                log.warning(
                    "match %d of %s failed (attempt %d): %s",
                    match.index,
                    ladder.name,
                    running.attempts,
                    err,
                )
                await self.store.run(
                    Store.record_infra_failure,
                    ladder.name,
                    match.index,
                    str(err),
                    node=getattr(err, "node", None),
                    give_up=give_up,
                )
                summary.infra_failures += 1
                if give_up:
                    summary.abandoned += 1
                    summary.errors.append(f"match {match.index}: {err}")
                else:
                    queue.put_nowait(running)
                self.on_progress(running, None)
                continue
            # Shielded: once a result exists, a Ctrl-C must not lose it half-written.
            await asyncio.shield(
                self.store.run(Store.record_result, ladder.name, match.index, result, node=node)
            )
            summary.played += 1
            self.on_progress(running, result)
