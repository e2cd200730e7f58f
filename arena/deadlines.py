"""A deadline on an await that never loses its task's cancellation: use `within`, not
asyncio.wait_for.

On Python 3.11 (the oldest Arena supports), `asyncio.wait_for` returns the awaited result when
its task is cancelled just as that result arrives: the cancellation is lost (3.12 rebuilt
wait_for on asyncio.timeout, which keeps it). A loop that its owner stops by cancelling it then
runs on, and the owner waits for it forever. That is how `arena ladder run` hung in CI: the
local executor's access watch (arena/ladder/local.py) had its store query answered at the
moment close() cancelled it, and close() waited on it with every bot idle, until the idle bots
were ended too and the process sat there with no child and no output. `asyncio.timeout` counts
cancellations (Task.cancelling/uncancel), so `within` turns only its own expiry into
TimeoutError and lets any other cancellation through.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, TypeVar

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float) -> T:
    """Await `awaitable` for at most `seconds`: its result, or TimeoutError (it is cancelled
    then). A cancellation of the caller's task always propagates."""
    async with asyncio.timeout(seconds):
        return await awaitable
