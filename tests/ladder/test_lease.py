"""Ladder leases: one run per ladder; a dead run's lease is taken over, a live one's never.

The store and the lease logic with real SQLite files and real processes (a pid that is gone, a
pid that is alive), and two `arena ladder run`s of one ladder at once through the CLI."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import sqlite3
import subprocess
import sys

import pytest

from arena.ladder import lease
from arena.ladder.lease import STALE_AFTER_S, Holder
from arena.store import AsyncStore, LadderBusy, LeaseLost, Store
from tests.cli import start_arena
from tests.support.ladders import arena, ladder_args, register, wait_for_completed
from tests.timing import scaled


def other_run(**changes) -> Holder:
    """Another run of this machine's process `pid` (default: this one, so alive)."""
    return dataclasses.replace(Holder.this_process(), **changes)


def gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_live_holder_keeps_the_lease_and_is_named(tmp_path):
    with Store(tmp_path / "a.db") as store:
        first = other_run()
        store.acquire_lease("l", first, now=1_700_000_000.0)
        with pytest.raises(LadderBusy) as err:
            store.acquire_lease("l", other_run())
        message = str(err.value)
        assert f"pid {os.getpid()} on {socket.gethostname()}" in message
        assert "since 2023-11-14 22:13:20 UTC" in message
        assert "ladder 'l' is being run by another arena process" in message
        # Its own run may take it again (idempotent); other ladders are free.
        store.acquire_lease("l", first)
        store.acquire_lease("m", other_run())


def test_the_lease_of_a_dead_process_on_this_machine_is_taken_over_at_once(tmp_path):
    with Store(tmp_path / "a.db") as store:
        dead = gone_pid()
        store.acquire_lease("l", other_run(pid=dead, pid_start=12345))
        me = other_run()
        taken = store.acquire_lease("l", me)
        assert taken.holder == me and taken.taken_over.startswith(f"pid {dead} on ")
        with pytest.raises(LadderBusy):
            store.acquire_lease("l", other_run())


def test_a_reused_pid_does_not_keep_a_dead_runs_lease(tmp_path):
    # The holder's pid is alive (ours), but it is another process than the one that took the
    # lease: it started at another moment.
    with Store(tmp_path / "a.db") as store:
        me = Holder.this_process()
        store.acquire_lease("l", other_run(pid_start=me.pid_start - 1))
        assert store.acquire_lease("l", me).taken_over is not None


def test_a_holder_elsewhere_is_judged_by_its_heartbeat(tmp_path):
    now = 1_700_000_000.0
    with Store(tmp_path / "a.db") as store:
        # Another container (its own PID namespace): its pid means nothing here.
        elsewhere = other_run(host="worker-7", machine="other-boot/pid:[1]", pid=1)
        store.acquire_lease("l", elsewhere, now=now)
        with pytest.raises(LadderBusy, match="pid 1 on worker-7"):
            store.acquire_lease("l", other_run(), now=now + STALE_AFTER_S - 1)
        taken = store.acquire_lease("l", other_run(), now=now + STALE_AFTER_S + 1)
        assert "worker-7" in taken.taken_over
        with pytest.raises(LeaseLost, match="took over ladder 'l'"):
            store.renew_lease("l", elsewhere)


def test_held_renews_gives_back_and_reports_a_lost_lease(tmp_path, monkeypatch):
    monkeypatch.setattr(lease, "RENEW_S", 0.01)
    path = tmp_path / "a.db"
    lost: list[Exception] = []

    async def main():
        async with await AsyncStore.open(path) as store:
            stolen = asyncio.Event()

            def on_lost(err):
                lost.append(err)
                stolen.set()

            async with lease.held(store, ["l"], on_lost) as (mine,):

                async def heartbeat() -> float:
                    return await store.run(
                        lambda s: s.db.execute("SELECT heartbeat FROM ladder_leases").fetchone()[0]
                    )

                async def renewed() -> None:
                    while await heartbeat() <= mine.since:
                        await asyncio.sleep(0.01)  # polling the database, with a deadline

                await asyncio.wait_for(renewed(), 30)
                # Another run takes the lease over (as if this one had looked dead).
                await store.run(
                    Store.acquire_lease,
                    "l",
                    other_run(host="elsewhere", machine="x"),
                    mine.since + STALE_AFTER_S + 1,
                )
                await asyncio.wait_for(stolen.wait(), 30)

    asyncio.run(main())
    assert len(lost) == 1 and isinstance(lost[0], LeaseLost)
    # Giving back only removes one's own lease: the taker's stays.
    con = sqlite3.connect(path)
    assert con.execute("SELECT host FROM ladder_leases").fetchall() == [("elsewhere",)]
    con.close()


def test_a_second_run_of_a_running_ladder_refuses_at_once_and_takes_nothing(tmp_path):
    db = tmp_path / "a.db"
    register(db, ["a", "b", "c", "d"])
    args = ladder_args(db, tmp_path)
    first = start_arena(
        *args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for_completed(db, 1, first) >= 1
        assert first.poll() is None, "the ladder finished before the second run"
        second = arena(*args, check=False, timeout=60)
        out, err = first.communicate(timeout=scaled(240))
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert second.returncode == 1, second.stderr
    assert (
        f"ladder 'l1' is being run by another arena process: pid {first.pid} on "
        f"{socket.gethostname()}, since "
    ) in second.stderr
    assert "Traceback" not in second.stderr
    # The first run was left alone: it finished, each match played once, the lease given back.
    assert first.returncode == 0, err
    con = sqlite3.connect(db)
    assert con.execute(
        "SELECT status, attempts, count(*) FROM matches GROUP BY 1, 2"
    ).fetchall() == [("completed", 1, 24)]  # 2 rounds of 4 sets of 3 (no opening round)
    assert con.execute("SELECT count(*) FROM ladder_leases").fetchone()[0] == 0
    con.close()
