"""Load: 200 bot connections at once, and 1,000 concurrent matches with the referee's memory
bounded. The bots are real processes (tests/bots/swarm_bot.py: one stream per token) over real
gRPC; the referee runs in this process, so its memory is this process's."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time

import pytest

from arena.games import make_game
from arena.referee import server
from arena.referee.admission import AdmissionCaps
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, ResourceLimits
from arena.referee.match import Limits
from tests.timing import scaled

from .conftest import BOTS

pytestmark = pytest.mark.load

PATIENT = Limits(move_ms=30_000, time_bank_ms=0, max_strikes=3, connect_ms=30_000)
BALLOON2 = make_game("balloon", 2)


@pytest.fixture(autouse=True)
def swarm_sized_bot_socket(monkeypatch):
    """The swarm is one launched process that plays as up to 200 bots, a connection each: its
    socket gets the caps of that many bots (a launched bot's own are a handful, which a swarm
    would meet at once: docs/reliability.md, "Connections and descriptors")."""
    many = 400
    monkeypatch.setattr(
        server,
        "BOT_SOCKET_OPTIONS",
        server.SERVER_OPTIONS + (("grpc.max_allowed_incoming_connections", many),),
    )
    monkeypatch.setattr(
        server,
        "BOT_SOCKET_CAPS",
        AdmissionCaps(
            streams_per_peer=many,
            connections_per_peer=many,
            awaiting_hello_per_peer=many,
            awaiting_hello=many,
        ),
    )


def swarm(max_concurrent: int, policy: str = "last") -> BotCommand:
    return BotCommand(
        (sys.executable, str(BOTS / "swarm_bot.py"), str(max_concurrent), policy), None
    )


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def open_state(host: RefereeHost) -> dict[str, int]:
    """What the referee holds for matches in progress: all of it must drain to zero once the
    match ends (sent in the background) have gone out."""
    conns = list(host.server.directory._connections.values())
    await asyncio.gather(*(c.flush() for c in conns))
    return {
        "pending": sum(len(c._pending) for c in conns),
        "seats": sum(len(c._seats) for c in conns),
        "answered": sum(len(c._answered) for c in conns),
        "queued": sum(len(c._outbox) for c in conns),
        "writing": sum(c._writer is not None for c in conns),
    }


def test_200_bot_connections_at_once_all_play(tmp_path):
    names = [f"bot{i:03d}" for i in range(200)]

    async def main():
        # 200 channels need more descriptors than a bot gets by default.
        async with RefereeHost(tmp_path, resource_limits=ResourceLimits(open_files=4096)) as host:
            tokens = [host.tokens.issue(n) for n in names]
            start = time.perf_counter()
            await host.launch("swarm", swarm(4), token=",".join(tokens))
            for n in names:
                assert await host.server.directory.wait_for(n, scaled(60)) is not None
            connected_s = time.perf_counter() - start
            connected = len(host.server.directory.connected())
            # Every bot in a match at once: 100 matches of two.
            results = await asyncio.gather(
                *(
                    host.run_match(BALLOON2, i, [names[2 * i], names[2 * i + 1]], PATIENT)
                    for i in range(100)
                )
            )
            return connected, connected_s, results, await open_state(host)

    connected, connected_s, results, state = asyncio.run(main())
    assert connected == 200
    assert len(results) == 100 and all(r.faults == () for r in results)
    assert state == {"pending": 0, "seats": 0, "answered": 0, "queued": 0, "writing": 0}
    print(
        f"FIGURE 200 connections: all connected {connected_s:.2f} s after launch; "
        f"100 matches, {sum(len(r.moves) for r in results)} moves, no fault"
    )


def test_1000_concurrent_matches_complete_and_memory_stays_bounded(tmp_path):
    names = [f"bot{i:02d}" for i in range(20)]

    def pair(i: int) -> list[str]:
        # Every pair of distinct bots, in turn (the offset runs over 1..19, never 0).
        return [names[i % 20], names[(i % 20 + 1 + (i // 20) % 19) % 20]]

    async def batch(host: RefereeHost, first_seed: int) -> list:
        return await asyncio.gather(
            *(host.run_match(BALLOON2, first_seed + i, pair(i), PATIENT) for i in range(1000))
        )

    async def main():
        async with RefereeHost(tmp_path) as host:
            tokens = [host.tokens.issue(n) for n in names]
            await host.launch("swarm", swarm(64), token=",".join(tokens))
            for n in names:
                assert await host.server.directory.wait_for(n, scaled(60)) is not None
            await asyncio.gather(
                *(
                    host.run_match(BALLOON2, i, [names[i], names[i + 1]], PATIENT)
                    for i in range(0, 20, 2)
                )
            )  # warm up
            gc.collect()
            before = rss_bytes()
            peak = before
            sampling = True

            async def sample():
                nonlocal peak
                while sampling:  # a measurement, not synchronisation
                    peak = max(peak, rss_bytes())
                    await asyncio.sleep(0.05)

            sampler = asyncio.ensure_future(sample())
            start = time.perf_counter()
            first = await batch(host, 1000)
            elapsed = time.perf_counter() - start
            gc.collect()
            after_first = rss_bytes()
            second = await batch(host, 5000)
            sampling = False
            await sampler
            gc.collect()
            after_second = rss_bytes()
            live = len(host.server.live._matches)
            return (
                first,
                second,
                elapsed,
                before,
                peak,
                after_first,
                after_second,
                await open_state(host),
                live,
            )

    (first, second, elapsed, before, peak, after_first, after_second, state, live) = asyncio.run(
        main()
    )
    assert len(first) == len(second) == 1000
    assert all(r.faults == () for r in first + second)
    # Nothing of a finished match stays behind but the recent matches kept for spectators.
    assert state == {"pending": 0, "seats": 0, "answered": 0, "queued": 0, "writing": 0}
    assert live <= 100
    mib = 1024 * 1024
    # Bounded: a match in flight costs tens of KiB; a second batch of 1,000 reuses the memory
    # of the first (no growth with the number of matches played).
    assert (peak - before) / 1000 < 200 * 1024
    assert after_second - after_first < 16 * mib
    decisions = sum(len(r.moves) for r in first)
    print(
        f"FIGURE 1000 matches: {decisions} decisions in {elapsed:.1f} s "
        f"({decisions / elapsed:.0f}/s); RSS before {before / mib:.0f} MiB, peak "
        f"+{(peak - before) / mib:.1f} MiB ({(peak - before) / 1000 / 1024:.1f} KiB/match), "
        f"after 1st batch +{(after_first - before) / mib:.1f} MiB, after 2nd "
        f"+{(after_second - before) / mib:.1f} MiB"
    )
