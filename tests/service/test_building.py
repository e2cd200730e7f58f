"""The one way to build an executor (arena/ladder/executors.py) and to stop on a signal
(arena/stopsignals.py), shared by `arena ladder run`, `arena match` and `arena serve`."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from arena.ladder.executors import EXECUTORS, make_executor
from arena.referee.launcher import ResourceLimits
from arena.stopsignals import STOP_SIGNALS, on_stop_signals


def test_the_local_executor_gets_its_referee_address_and_run_dir(tmp_path):
    from arena.ladder.local import LocalExecutor

    limits = ResourceLimits(sandbox=False)

    async def build():  # the referee's server is made in the loop that will run it
        return make_executor(
            "local", None, tmp_path / "runs", resource_limits=limits, host="127.0.0.1", port=0
        )

    executor = asyncio.run(build())
    assert isinstance(executor, LocalExecutor)
    assert executor.run_dir == tmp_path / "runs"
    assert executor.referee.resource_limits is limits


def test_the_ray_executor_gets_its_cluster_address(tmp_path):
    pytest.importorskip("ray")
    from arena.ladder.ray_executor import RayExecutor

    executor = make_executor(
        "ray",
        None,
        tmp_path / "runs",
        resource_limits=ResourceLimits(),
        ray_address="10.0.0.1:6379",
    )
    assert isinstance(executor, RayExecutor)
    assert executor.address == "10.0.0.1:6379"
    assert executor.run_dir == (tmp_path / "runs").resolve()


def test_an_unknown_executor_is_refused_with_the_choices(tmp_path):
    with pytest.raises(ValueError, match="unknown executor 'slurm'; choose one of local, ray"):
        make_executor("slurm", None, tmp_path, resource_limits=ResourceLimits())
    assert EXECUTORS == ("local", "ray")


@pytest.mark.parametrize("sig", STOP_SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_calls_stop_inside_and_is_left_to_its_default_after(sig):
    async def main() -> list[str]:
        calls: list[str] = []
        stopped = asyncio.Event()

        def stop() -> None:
            calls.append("stop")
            stopped.set()

        with on_stop_signals(stop):
            os.kill(os.getpid(), sig)
            await asyncio.wait_for(stopped.wait(), 5)
        return calls

    assert asyncio.run(main()) == ["stop"]
    assert signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler)


def test_two_callers_starting_one_bot_at_once_launch_it_once(tmp_path):
    """The service's ladders and a verification may start the same opponent at the same moment:
    one process, not a second launch that stops the first while its seat waits for it; and one
    referee server and access watch (a second watch outlived close() and never ended)."""
    from pathlib import Path

    from arena.ladder.local import LocalExecutor
    from arena.store import AsyncStore, Store

    root = Path(__file__).resolve().parents[2]
    with Store(tmp_path / "a.db") as store:
        store.add_bot("r", f"python {root / 'example_bots' / 'random_bot.py'}")

    async def main() -> tuple[int, bool]:
        astore = await AsyncStore.open(tmp_path / "a.db")
        executor = LocalExecutor(
            astore, tmp_path / "runs", resource_limits=ResourceLimits(sandbox=False)
        )
        launches = 0
        launch = executor.referee.launch
        servers = 0
        serve = executor.referee.server.start

        async def counted_server():
            nonlocal servers
            servers += 1
            await serve()

        executor.referee.server.start = counted_server  # type: ignore[method-assign]

        async def counted(*args, **kwargs):
            nonlocal launches
            launches += 1
            return await launch(*args, **kwargs)

        executor.referee.launch = counted  # type: ignore[method-assign]
        try:
            bot = await astore.run(Store.get_bot, "r")
            await asyncio.gather(executor.start([bot]), executor.start([bot]))
            running = executor.referee.bots["r"].exit_info() is None
        finally:
            await executor.close()
            await astore.close()
        watching = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return launches, servers, running, watching

    launches, servers, running, left = asyncio.run(main())
    assert (launches, servers, running, left) == (1, 1, True, [])


def test_the_access_watch_ends_once_its_store_is_closed(tmp_path):
    """An executor whose store its owner closed first stops checking access (every check would
    fail: it went on failing, and logging so, every 0.25 s until the executor was closed)."""
    from arena.ladder.local import LocalExecutor
    from arena.store import AsyncStore

    async def main() -> None:
        astore = await AsyncStore.open(tmp_path / "a.db")
        executor = LocalExecutor(
            astore, tmp_path / "runs", resource_limits=ResourceLimits(sandbox=False)
        )
        try:
            await executor.start([])
            watch = executor._access_watch
            assert watch is not None and not watch.done()
            await astore.close()
            # A bound, not a synchronisation: the watch ends at its next check.
            await asyncio.wait_for(asyncio.shield(watch), 30)
            assert watch.exception() is None
        finally:
            await executor.close()

    asyncio.run(main())
