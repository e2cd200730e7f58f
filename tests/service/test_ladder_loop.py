"""The service's ladder loop never dies silently (a unit test of arena/service/service.py with a
stand-in executor): an executor that cannot start the bots for a reason of the platform is
tried again after a pause, and any other error stops the service with that error, instead of
leaving `arena serve` up, serving pages, with no ladder running (seen on a Ray cluster: the
ladder's task had ended with an exception nobody awaited, and the server idled for ever)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path

import pytest

from arena.deadlines import within
from arena.ladder.executors import RunSettings
from arena.ladder.runner import InfrastructureError
from arena.service import service as service_module
from arena.service.service import ArenaService, LadderSpec, ServiceSettings
from arena.store import Store

ROOT = Path(__file__).resolve().parents[2]
RUN_S = 30.0  # a bound on each run below; both end in well under a second


class StartFails:
    """An executor whose start() with bots raises `error` the first `times` calls."""

    def __init__(self, error: Exception, times: int):
        self.error = error
        self.times = times
        self.calls = 0
        self.called_again = asyncio.Event()

    async def start(self, bots) -> None:
        if not bots:
            return
        self.calls += 1
        if self.calls > 1:
            self.called_again.set()
        if self.calls <= self.times:
            raise self.error

    async def play(self, ladder, match, limits):
        raise AssertionError("no match is played in these tests")

    async def retire(self, names) -> None:
        pass

    async def close(self) -> None:
        pass


@dataclasses.dataclass(frozen=True)
class StandIn(RunSettings):
    executor_obj: StartFails | None = None

    def make_executor(self, store, name="", **kwargs):
        return self.executor_obj


def make_service(tmp_path: Path, executor: StartFails) -> ArenaService:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        for name in ("a", "b", "c"):
            store.add_bot(name, "python example_bots/random_bot.py", cwd=ROOT)
    return ArenaService(
        ServiceSettings(
            db=db,
            ladders=(LadderSpec("lad", "balloon", 3),),
            web_port=0,
            referee_port=0,
            run=StandIn(run_dir=tmp_path / "runs", executor_obj=executor),
        )
    )


def test_an_error_in_a_ladders_loop_stops_the_service_with_it(tmp_path, caplog):
    executor = StartFails(RuntimeError("a bug in the executor"), times=1)
    service = make_service(tmp_path, executor)
    with caplog.at_level(logging.ERROR, "arena.service.service"):
        with pytest.raises(RuntimeError, match="a bug in the executor"):
            asyncio.run(within(service.run(), RUN_S))
    assert executor.calls == 1
    assert "the ladder lad stopped: a bug in the executor" in caplog.text


def test_a_platform_failure_to_start_the_bots_is_tried_again(tmp_path, monkeypatch):
    monkeypatch.setattr(service_module, "INFRA_BACKOFF_S", 0.01)
    executor = StartFails(InfrastructureError("out of descriptors"), times=100)
    service = make_service(tmp_path, executor)

    async def run() -> None:
        serving = asyncio.ensure_future(service.run())
        await within(executor.called_again.wait(), RUN_S)
        assert not serving.done()  # still serving: the loop waits and tries again
        service.stop()
        await within(serving, RUN_S)  # a normal stop, no error

    asyncio.run(run())
    assert executor.calls >= 2
