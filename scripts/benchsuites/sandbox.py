"""Sandbox: what bubblewrap costs a launched bot, each side measured against the other in one run.

(a) Launch: from `BotProcess.start` until the bot's Hello has reached the referee, for the same
minimal bot (benchsuites/raw_bot.py: Python, grpc, the protocol) launched in its sandbox over
the Unix socket, and unconfined over TCP loopback (what every launch was before the sandbox),
taking turns. Goal: the sandbox adds at most 50 ms (median against median).
(b) Decision round trip: the referee's sequential decisions (balloon, 2 players, both seats in
one bot process), with the bot in its sandbox over the Unix socket, and unconfined over TCP
loopback, in short windows taken in pairs (in alternating order) so that load on this shared
machine lands on both alike.
Goal: the Unix socket is no slower (median of the window-by-window ratios at most 1.0).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from arena.referee.host import RefereeHost
from arena.referee.launcher import ResourceLimits

from .referee import RefereeSequential, raw_bot


async def launch_times(launches: int) -> tuple[list[float], list[float]]:
    """Seconds from start to connected, sandboxed and unconfined, `launches` of each in turn."""
    boxed, plain = [], []
    with tempfile.TemporaryDirectory() as tmp:
        async with (
            RefereeHost(Path(tmp) / "boxed") as box_host,
            RefereeHost(
                Path(tmp) / "plain", resource_limits=ResourceLimits(sandbox=False)
            ) as plain_host,
        ):
            for i in range(launches + 1):  # the first pair warms caches up and is not counted
                for host, times, tcp in ((box_host, boxed, False), (plain_host, plain, True)):
                    name = f"bot-{i}"
                    start = time.perf_counter()
                    proc = await host.launch(
                        name, raw_bot(1, address=host.server.address if tcp else None)
                    )
                    conn = await host.server.directory.wait_for(name, 30)
                    elapsed = time.perf_counter() - start
                    if conn is None:
                        raise RuntimeError(f"the bot did not connect: {proc.log_tail()}")
                    if i:
                        times.append(elapsed)
                    await host.bots.pop(name).stop()
    return boxed, plain


async def roundtrip_windows(seconds: float, window_s: float = 0.1):
    """Per-decision seconds of (b) over the Unix socket (sandboxed) and TCP (unconfined), in
    pairs of short windows whose order alternates (unix, tcp, then tcp, unix), so that neither
    side is always the one measured after the other."""
    unix_windows, tcp_windows, decisions = [], [], 0
    async with RefereeSequential() as unix, RefereeSequential(tcp=True) as tcp:
        for i in range(max(100, round(seconds / window_s))):  # a stable median needs many
            pair = ((unix, unix_windows), (tcp, tcp_windows))
            for side, windows in pair if i % 2 == 0 else pair[::-1]:
                per, n = await side.window(window_s)
                windows.append(per)
                decisions += n
    return unix_windows, tcp_windows, decisions


def run(seconds: float, log) -> dict:
    launches = max(10, int(seconds * 5))
    boxed, plain = asyncio.run(launch_times(launches))
    box_ms, plain_ms = statistics.median(boxed) * 1e3, statistics.median(plain) * 1e3
    log(
        f"(a) launch to Hello, sandboxed (Unix socket): {box_ms:7.1f} ms  (median of "
        f"{len(boxed)}, {min(boxed) * 1e3:.1f} to {max(boxed) * 1e3:.1f})"
    )
    log(
        f"    launch to Hello, unconfined (TCP):        {plain_ms:7.1f} ms  (median of "
        f"{len(plain)}, {min(plain) * 1e3:.1f} to {max(plain) * 1e3:.1f})"
    )
    unix_windows, tcp_windows, decisions = asyncio.run(roundtrip_windows(seconds))
    unix_us = statistics.median(unix_windows) * 1e6
    tcp_us = statistics.median(tcp_windows) * 1e6
    ratios = sorted(u / t for u, t in zip(unix_windows, tcp_windows))
    ratio = statistics.median(ratios)
    log(
        f"(b) decision round trip, Unix socket:        {unix_us:7.1f} us  (median of "
        f"{len(unix_windows)} windows)"
    )
    log(
        f"    decision round trip, TCP loopback:       {tcp_us:7.1f} us  ({decisions} "
        "decisions in all)"
    )
    log(
        f"    Unix / TCP window by window: {ratios[0]:.3f} lowest, {ratio:.3f} median, "
        f"{ratios[-1]:.3f} highest"
    )
    results = {
        "launch_sandboxed_ms": round(box_ms, 1),
        "launch_unconfined_ms": round(plain_ms, 1),
        "launches_each": len(boxed),
        "roundtrip_unix_us": round(unix_us, 1),
        "roundtrip_tcp_us": round(tcp_us, 1),
        "roundtrip_windows": len(unix_windows),
        "unix_vs_tcp_by_window": {
            "lowest": round(ratios[0], 3),
            "median": round(ratio, 3),
            "highest": round(ratios[-1], 3),
        },
    }
    goals = {
        "launch: sandboxed - unconfined (ms)": {
            "value": round(box_ms - plain_ms, 1),
            "goal": "<= 50",
            "met": box_ms - plain_ms <= 50,
        },
        "round trip: Unix socket / TCP": {
            "value": round(ratio, 3),
            "goal": "<= 1.0",
            "met": ratio <= 1.0,
        },
    }
    return {"results": results, "goals": goals}
