"""Ladder leases as stored: one row per ladder naming the run that holds it. What a holder is
and how a dead one is told from a live one is arena.ladder.lease's (the holder passed in)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .errors import LadderBusy, LeaseLost, sqlite_errors
from .schema import StoreFile
from .schema import now as clock

_LEASE_COLUMNS = "run, host, pid, machine, pid_start, since, heartbeat"


class Holder(Protocol):
    """A run that holds or wants a lease (arena.ladder.lease.Holder), as the store sees it: its
    class is built from the first five lease columns, in order."""

    run: str
    host: str
    pid: int
    machine: str
    pid_start: int | None

    def describe(self, since: float, heartbeat: float, now: float) -> str: ...

    def sees_alive(self, holder: "Holder", heartbeat: float, now: float) -> bool: ...


@dataclass(frozen=True, slots=True)
class Lease:
    ladder: str
    holder: Holder
    since: float
    taken_over: str | None = None  # the dead run it replaced, described, if any


class Leases(StoreFile):
    """The ladder leases' part of the Store."""

    @sqlite_errors
    def acquire_lease(self, ladder: str, me: Holder, now: float | None = None) -> Lease:
        """Take the lease of the ladder called `ladder` (which need not exist yet) for the run
        `me`: at once if it is free or its holder is dead (`me.sees_alive`: arena.ladder.lease
        says how that is known), else LadderBusy naming the holder."""
        now = clock() if now is None else now
        with self._write() as conn:
            row = conn.execute(
                f"SELECT {_LEASE_COLUMNS} FROM ladder_leases WHERE ladder = ?", (ladder,)
            ).fetchone()
            taken_over = None
            if row is not None:
                holder, since, heartbeat = type(me)(*row[:5]), row[5], row[6]
                if holder.run != me.run:
                    described = holder.describe(since, heartbeat, now)
                    if me.sees_alive(holder, heartbeat, now):
                        raise LadderBusy(
                            f"ladder {ladder!r} is being run by another arena process: "
                            f"{described}. Wait for it to finish, or stop it (Ctrl-C, or kill "
                            f"{holder.pid} on {holder.host}) and run this again to resume"
                        )
                    taken_over = described
            conn.execute(
                f"INSERT OR REPLACE INTO ladder_leases (ladder, {_LEASE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (ladder, me.run, me.host, me.pid, me.machine, me.pid_start, now, now),
            )
        return Lease(ladder, me, now, taken_over)

    @sqlite_errors
    def renew_lease(self, ladder: str, me: Holder) -> None:
        """Record that the run `me` is alive; LeaseLost if another run has taken its lease."""
        with self._write() as conn:
            if (
                conn.execute(
                    "UPDATE ladder_leases SET heartbeat = ? WHERE ladder = ? AND run = ?",
                    (clock(), ladder, me.run),
                ).rowcount
                == 0
            ):
                raise LeaseLost(
                    f"another run took over ladder {ladder!r} (this one had not renewed its "
                    "lease for too long and looked dead); this run stops"
                )

    @sqlite_errors
    def release_lease(self, ladder: str, me: Holder) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM ladder_leases WHERE ladder = ? AND run = ?", (ladder, me.run))

    # ------------------------------------------------------------------------- bot registry
