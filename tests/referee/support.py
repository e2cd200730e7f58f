"""Helpers shared by the referee's unit tests that drive asyncio code over fake streams."""

from __future__ import annotations

import asyncio


async def until(condition) -> None:
    """Let the loop run until `condition()` holds (a bounded number of turns, not a clock)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")
