"""Closing the local executor ends its background watches whenever the close comes.

`arena ladder run` hung in CI with no child and no output: close() cancelled the executor's
access watch just as its store query was answered, and Python 3.11's asyncio.wait_for, which
the watch awaited the query with, returned the answer and dropped the cancellation; the watch
went on, close() waited for it for ever, and the idle bots were ended 120 s later
(arena/deadlines.py). These tests make the close land at exactly that moment, with a real
store, referee and launched bot.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Callable

from arena.deadlines import within
from arena.ladder.local import LocalExecutor
from arena.store import AsyncStore, Store
from tests.procs import processes_in
from tests.timing import scaled

ROOT = Path(__file__).resolve().parent.parent.parent
RANDOM = f"{sys.executable} {ROOT / 'example_bots' / 'random_bot.py'}"
# How long a close may take on a quiet machine: it ends one bot and the referee.
CLOSE_S = 10.0


class ClosingOnAnswer:
    """The executor's AsyncStore, but the first answer to `query` starts `on_answer()` in a
    task of its own, as a Ctrl-C or the ladder's end may, at the moment the answer arrives."""

    def __init__(self, store: AsyncStore, query: Callable[..., Any]):
        self.store = store
        self.query = query
        self.on_answer: Callable[[], Any] | None = None
        self.started: asyncio.Task | None = None

    @property
    def closed(self) -> bool:
        return self.store.closed

    async def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        answer = await self.store.run(fn, *args, **kwargs)
        if fn is self.query and self.on_answer is not None and self.started is None:
            self.started = asyncio.ensure_future(self.on_answer())
        return answer


def test_close_during_an_access_check_ends_the_access_watch(tmp_path):
    db, runs = tmp_path / "arena.db", tmp_path / "runs"
    with Store(db) as store:
        store.add_bot("a", RANDOM)

    async def main() -> None:
        store = await AsyncStore.open(db)
        closing = ClosingOnAnswer(store, Store.bot_access)
        executor = LocalExecutor(closing, runs)  # type: ignore[arg-type]
        try:
            await executor.start([await store.run(Store.get_bot, "a")])
            closing.on_answer = executor.close  # the next access check's answer closes it
            try:
                await within(_started(closing), scaled(CLOSE_S))
                await within(asyncio.shield(closing.started), scaled(CLOSE_S))
            except TimeoutError:
                raise AssertionError(
                    f"close() did not end within {scaled(CLOSE_S):.0f} s: the access watch "
                    f"({executor._access_watch}) outlived its cancellation"
                ) from None
        finally:
            executor._closing = True  # a failed test's watch must end too
            await executor.close()
            await store.close()

    asyncio.run(main())
    assert processes_in(runs) == []


async def _started(closing: ClosingOnAnswer) -> None:
    while closing.started is None:
        await asyncio.sleep(0.01)  # polling for the watch's next query (every 0.25 s)
