"""arena.deadlines.within: a deadline on an await that never loses its task's cancellation."""

from __future__ import annotations

import asyncio
import sys

import pytest

from arena.deadlines import within


def cancelled_as_answered(answer_with) -> str:
    """Cancel a task at the moment the await it is in gets its answer (the way the local
    executor's close() met its access watch); what became of the task."""

    async def main() -> str:
        watch: asyncio.Task | None = None

        async def query() -> int:
            assert watch is not None
            # Another task cancels the watch on the loop's next pass, when this answer is in.
            asyncio.get_running_loop().call_soon(watch.cancel)
            await asyncio.sleep(0)
            return 7

        async def watched() -> str:
            await answer_with(query(), 5.0)
            await asyncio.sleep(0.5)  # what comes after the await; a period, not a sync
            return "ran on"

        watch = asyncio.ensure_future(watched())
        try:
            return await watch
        except asyncio.CancelledError:
            return "cancelled"

    return asyncio.run(main())


def test_a_cancellation_that_arrives_with_the_answer_is_kept():
    assert cancelled_as_answered(within) == "cancelled"


def test_asyncio_wait_for_of_python_3_11_is_what_within_replaces():
    # Python 3.11's wait_for drops such a cancellation; 3.12, which builds it on
    # asyncio.timeout, keeps it. Should this fail on 3.11, `within` is no longer needed there.
    expected = "ran on" if sys.version_info < (3, 12) else "cancelled"
    assert cancelled_as_answered(asyncio.wait_for) == expected


def test_within_times_out_and_cancels_what_it_waited_for():
    async def main() -> bool:
        never = asyncio.get_running_loop().create_future()
        with pytest.raises(TimeoutError):
            await within(never, 0.01)
        return never.cancelled()

    assert asyncio.run(main())


def test_within_returns_the_answer():
    async def answer() -> str:
        await asyncio.sleep(0)
        return "yes"

    assert asyncio.run(within(answer(), 1.0)) == "yes"
