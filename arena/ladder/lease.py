"""Ladder leases: at most one run plays a ladder at a time.

A run (`arena ladder run`, `arena serve`) takes its ladder's lease in the store before it touches
the ladder's matches, renews it while it runs and gives it back at the end. A second run finds
the lease held and refuses at once, naming the holder (host, pid, since when), instead of taking
over the first run's matches in flight.

A run killed with -9 cannot give its lease back, so the next run must tell a live holder from a
dead one. How, and why:

- **On the same machine** (same host name, boot and PID namespace: what `MachineId` records),
  the holder is alive exactly when a process with its pid exists *and* started at the same
  moment (the start time in /proc/PID/stat): a pid reused by an unrelated process after the
  kill does not keep the lease. So a killed run's lease is taken over at once, with certainty.
  SQLite in WAL mode needs every process that uses the file on one machine (they share its
  -shm memory), so this is the case that matters.
- **Anywhere else** (another container with its own PID namespace, a file moved to another
  machine), the pid means nothing here, and the heartbeat decides: a run renews its lease
  every `RENEW_S` seconds; a lease not renewed for `STALE_AFTER_S` is taken over. A run that
  finds at renewal that its lease was taken (it was frozen for that long) stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AsyncIterator, Callable, Sequence

from arena.processes import pid_exists, process_start
from arena.store import Lease, LeaseLost, Store, StoreError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from arena.store import AsyncStore

RENEW_S = 10.0
STALE_AFTER_S = 60.0


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds (or wants) a lease: one run of one process."""

    run: str  # random per run: tells two runs of one process apart
    host: str
    pid: int
    machine: str  # boot id and PID namespace: pids compare only within one
    pid_start: int | None  # the process's start time (clock ticks after boot), if known

    @classmethod
    def this_process(cls) -> "Holder":
        pid = os.getpid()
        return cls(
            run=secrets.token_hex(8),
            host=socket.gethostname(),
            pid=pid,
            machine=machine_id(),
            pid_start=process_start(pid),
        )

    def describe(self, since: float, heartbeat: float, now: float) -> str:
        return (
            f"pid {self.pid} on {self.host}, since {_when(since)} (last renewed "
            f"{max(0, round(now - heartbeat))} s ago)"
        )

    def sees_alive(self, holder: "Holder", heartbeat: float, now: float) -> bool:
        """Whether, seen from this run, the run that holds a lease may still be running."""
        return holder_alive(holder, heartbeat, now, self)


def machine_id() -> str:
    """The boot and PID namespace this process lives in; '' where /proc cannot say."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        return f"{boot}/{os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return ""


def holder_alive(holder: Holder, heartbeat: float, now: float, me: Holder) -> bool:
    """Whether the run that holds a lease may still be running (see the module's docstring)."""
    if holder.host == me.host and holder.machine and holder.machine == me.machine:
        if holder.pid_start is None:  # recorded without /proc: the pid alone
            return pid_exists(holder.pid)
        return process_start(holder.pid) == holder.pid_start
    return now - heartbeat < STALE_AFTER_S


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


@contextlib.asynccontextmanager
async def held(
    store: AsyncStore, ladders: Sequence[str], on_lost: Callable[[LeaseLost], None]
) -> AsyncIterator[list[Lease]]:
    """Hold the leases of these ladders for the block: taken at once (LadderBusy if a live run
    holds one), renewed every RENEW_S, given back at the end. If a renewal finds a lease taken
    over, `on_lost` is called (the caller stops its run) and renewing ends."""
    me = Holder.this_process()
    leases: list[Lease] = []

    async def renew() -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            try:
                for ladder in ladders:
                    await store.run(Store.renew_lease, ladder, me)
            except LeaseLost as err:
                on_lost(err)
                return
            except StoreError as err:  # locked a while, say: the next renewal may get through
                log.warning("could not renew the lease of %s: %s", ", ".join(ladders), err)

    try:
        for ladder in ladders:
            leases.append(await store.run(Store.acquire_lease, ladder, me))
        renewer = asyncio.ensure_future(renew())
        try:
            yield leases
        finally:
            renewer.cancel()
            await asyncio.gather(renewer, return_exceptions=True)
    finally:
        for lease in leases:
            await asyncio.shield(store.run(Store.release_lease, lease.ladder, me))


@dataclass
class SoleRun:
    """A run that holds its ladder's lease (sole_run): the tasks it puts in `tasks` are
    cancelled if the lease is lost, and sole_run raises LeaseLost after its block."""

    lease: Lease
    tasks: list[asyncio.Future] = field(default_factory=list)
    lost: list[LeaseLost] = field(default_factory=list)


@contextlib.asynccontextmanager
async def sole_run(store: AsyncStore, ladder: str) -> AsyncIterator[SoleRun]:
    """Hold `ladder`'s lease for the block (as `held`); if a renewal finds it taken over, cancel
    the run's tasks, and raise LeaseLost when the block ends."""
    run: SoleRun | None = None
    early: list[LeaseLost] = []

    def on_lost(err: LeaseLost) -> None:
        if run is None:
            early.append(err)
            return
        run.lost.append(err)
        for task in run.tasks:
            task.cancel()

    async with held(store, [ladder], on_lost) as (lease,):
        if lease.taken_over:
            log.warning("took over ladder %s from a run that is gone: %s", ladder, lease.taken_over)
        run = SoleRun(lease, lost=early)
        yield run
    if run.lost:
        raise run.lost[0]
