"""Reply: what arena/referee/reply.py's FAST_REPLY buys. (a) CPU per request/reply round trip in
one event loop, FastReply against PlainReply: a match task writes a request (one pass of the
loop, as a write's completion) and awaits its reply; a reader task reads it (one pass, as a
read's completion) and delivers it with deliver_now. (b) the referee's sequential decision
round trip (the referee suite's (b): one Balloon 2-player match at a time, its bot sandboxed),
one referee and one bot process, windows alternating between the two classes (connection.py
builds its reply with the Reply it finds at each request). No goal: context for the switch."""

from __future__ import annotations

import asyncio
import statistics
import time

from arena.referee import connection
from arena.referee.reply import FastReply, PlainReply

from .referee import RefereeSequential

CLASSES = {"fast": FastReply, "plain": PlainReply}


async def _loop_window(cls: type, n: int) -> float:
    """CPU seconds per round trip over `n` round trips."""
    loop = asyncio.get_running_loop()
    inbox: list = []
    wake = [loop.create_future()]

    async def match() -> None:
        for i in range(n):
            reply = cls(loop)
            await asyncio.sleep(0)  # the write completes through the loop
            inbox.append(reply)
            if not wake[0].done():
                wake[0].set_result(None)
            if await reply != i:
                raise AssertionError("a reply reached the wrong request")

    async def reader() -> None:
        for i in range(n):
            if not inbox:
                await wake[0]
                wake[0] = loop.create_future()
            await asyncio.sleep(0)  # the read completes through the loop
            inbox.pop().deliver_now(i)

    start = time.process_time()
    await asyncio.gather(match(), reader())
    return (time.process_time() - start) / n


async def _in_loop(seconds: float) -> dict[str, list[float]]:
    windows: dict[str, list[float]] = {name: [] for name in CLASSES}
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(windows["fast"]) < 5:
        for name, cls in CLASSES.items():
            windows[name].append(await _loop_window(cls, 5000))
    return windows


async def _referee(seconds: float, window_s: float = 0.25) -> dict[str, list[float]]:
    windows: dict[str, list[float]] = {name: [] for name in CLASSES}
    built = connection.Reply
    try:
        async with RefereeSequential() as b:
            for _ in range(max(3, round(seconds / window_s / 2))):
                for name, cls in CLASSES.items():
                    connection.Reply = cls
                    windows[name].append((await b.window(window_s))[0])
    finally:
        connection.Reply = built
    return windows


def _summary(windows: dict[str, list[float]]) -> dict[str, float]:
    fast, plain = windows["fast"], windows["plain"]
    gains = sorted(p - f for f, p in zip(fast, plain))
    return {
        "fast_us": round(statistics.median(fast) * 1e6, 2),
        "plain_us": round(statistics.median(plain) * 1e6, 2),
        "plain_minus_fast_us_median": round(gains[len(gains) // 2] * 1e6, 2),
        "plain_minus_fast_us_lowest": round(gains[0] * 1e6, 2),
        "plain_minus_fast_us_highest": round(gains[-1] * 1e6, 2),
        "windows": len(fast),
    }


def run(seconds: float, log) -> dict:
    loop = _summary(asyncio.run(_in_loop(seconds)))
    log(
        f"(a) one loop, CPU per round trip: fast {loop['fast_us']} us, plain {loop['plain_us']} "
        f"us; plain - fast, window by window: median {loop['plain_minus_fast_us_median']} us "
        f"({loop['windows']} windows each)"
    )
    referee = _summary(asyncio.run(_referee(seconds)))
    log(
        f"(b) referee decision round trip: fast {referee['fast_us']} us, plain "
        f"{referee['plain_us']} us; plain - fast, window by window: median "
        f"{referee['plain_minus_fast_us_median']} us, from {referee['plain_minus_fast_us_lowest']}"
        f" to {referee['plain_minus_fast_us_highest']} ({referee['windows']} windows each)"
    )
    return {"results": {"in_loop": loop, "referee": referee}, "goals": {}}
