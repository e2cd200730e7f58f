"""The ladder runner over a real store with a scripted executor: retries and resumes."""

from __future__ import annotations

import asyncio

from arena.ladder.runner import InfrastructureError, LadderRunner
from arena.referee.match import Limits
from arena.store import AsyncStore, Store
from tests.store.helpers import add_remote_bots, make_result


class FailsOnce:
    """Plays every match with fixed scores, except that match `index` fails once for a reason
    that is not the bots' (as a referee crash would)."""

    def __init__(self, index: int):
        self.index, self.failed = index, False

    async def start(self, bots):
        pass

    async def play(self, ladder, match, limits):
        if match.index == self.index and not self.failed:
            self.failed = True
            raise InfrastructureError("the referee failed: test")
        return make_result(match, ladder.config, tuple(range(len(match.seats)))), "here"

    async def close(self):
        pass


def test_resumes_do_not_use_up_a_matchs_retries(tmp_path):
    path = tmp_path / "arena.db"
    with Store(path) as store:
        bots = add_remote_bots(store, 3)
        store.create_ladder("l", "balloon", 2, bots, seed=1)
        for _ in range(2):  # two runs killed (kill -9) while match 0 was running, then resumed
            store.start_match("l", 0)
            store.reset_running("l")

    async def run():
        async with await AsyncStore.open(path) as store:
            runner = LadderRunner(store, FailsOnce(0), Limits(), concurrency=2, max_attempts=3)
            return await runner.run("l", [])

    summary = asyncio.run(run())
    # One infrastructure failure of three allowed: retried and played, not abandoned.
    assert (summary.infra_failures, summary.abandoned, summary.played) == (1, 0, 6)
    with Store(path, readonly=True) as store:
        m0 = store.get_match("l", 0)
        assert (m0.status, m0.attempts, m0.rated) == ("completed", 2, True)
        assert store.rankings("l").rated == 6


class BreaksOnMatchZero:
    """Match 0 fails with an error that is nobody's outcome (as a store that refuses a write),
    once the two other matches are being played; those wait until they are cancelled."""

    def __init__(self):
        self.cancelled: list[int] = []
        self.playing: list[int] = []
        self.others_playing = asyncio.Event()

    async def start(self, bots):
        pass

    async def play(self, ladder, match, limits):
        if match.index == 0:
            await self.others_playing.wait()
            raise RuntimeError("the store refused a write")
        self.playing.append(match.index)
        if len(self.playing) == 2:
            self.others_playing.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(match.index)
            raise

    async def close(self):
        pass


def test_a_failing_worker_stops_the_others_and_their_matches_go_back_to_pending(tmp_path):
    path = tmp_path / "arena.db"
    with Store(path) as store:
        store.create_ladder("l", "balloon", 2, add_remote_bots(store, 3), seed=1)
    executor = BreaksOnMatchZero()

    async def run():
        async with await AsyncStore.open(path) as store:
            runner = LadderRunner(store, executor, Limits(), concurrency=3, max_attempts=3)
            try:
                await runner.run("l", [])
            except RuntimeError as err:
                return str(err)

    assert asyncio.run(run()) == "the store refused a write"
    assert sorted(executor.cancelled) == [1, 2]
    with Store(path, readonly=True) as store:
        assert [store.get_match("l", i).status for i in (1, 2)] == ["pending", "pending"]
