"""Connections (issue 29, part 3): a bot or a stranger that opens connections and streams by the
thousand takes nothing another bot needs. Each launched bot reaches the referee through a socket
of its own with its own caps; the TCP port caps each peer. Real bots in real sandboxes, real
gRPC on real sockets.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from arena.games import make_game
from arena.referee.host import RefereeHost
from arena.referee.match import Limits

from .conftest import BOTS, FAST, good, hostile, report_of

BALLOON2 = make_game("balloon", 2)


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


class Sampler:
    """The most descriptors this process (the referee's) held, sampled every 20 ms."""

    def __init__(self) -> None:
        self.base = open_descriptors()
        self.most = self.base
        self._task: asyncio.Task | None = None

    async def _sample(self) -> None:
        while True:
            self.most = max(self.most, open_descriptors())
            await asyncio.sleep(0.02)  # a sampling period, not a synchronisation

    def __enter__(self) -> "Sampler":
        self._task = asyncio.ensure_future(self._sample())
        return self

    def __exit__(self, *exc) -> None:
        assert self._task is not None
        self._task.cancel()


def fd_hog_reports(run_dir: Path, name: str) -> list[dict]:
    work = run_dir / "bots" / name
    return [json.loads(p.read_text()) for p in sorted(work.glob("fd_hog-*.json"))]


async def matches_until(host: RefereeHost, done, seats: list[str], limits: Limits, deadline_s):
    """Good matches one after another until `done()` (and at least three), within a deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + deadline_s
    results = []
    while not (done() and len(results) >= 3):
        if loop.time() > deadline:
            raise AssertionError(f"not done within {deadline_s} s; {len(results)} matches")
        results.append(await host.run_match(BALLOON2, len(results), seats, limits))
    return results


async def hostile_client(cwd: Path, address: str, token: str, *args: str):
    """tests/bots/hostile_bot.py ARGS as a client from outside (no sandbox), in `cwd`."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(BOTS / "hostile_bot.py"),
        *args,
        cwd=cwd,
        env={**os.environ, "ARENA_TOKEN": token, "ARENA_ADDRESS": address},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def run(coro):
    return asyncio.run(coro)


def test_a_descriptor_hog_fills_only_its_own_socket(tmp_path, capfd):
    # 8 processes x 200 plain connections to its socket, each closed one replaced: on the old
    # shared socket this took the platform from 32 to 1,232 descriptors.
    async def main():
        async with RefereeHost(tmp_path) as host:
            await host.launch("good-a", good())
            await host.launch("good-b", good())
            await host.server.directory.wait_for("good-a", 15)
            await host.server.directory.wait_for("good-b", 15)
            with Sampler() as fds:
                await host.launch("hog", hostile("fd_hog", "8,200"))

                def hog_went_through_its_connections() -> bool:
                    reports = fd_hog_reports(tmp_path, "hog")
                    return len(reports) == 8 and all(r["connected"] >= 200 for r in reports)

                results = await matches_until(
                    host, hog_went_through_its_connections, ["good-a", "good-b"], FAST, 60
                )
            return results, fds, fd_hog_reports(tmp_path, "hog")

    results, fds, reports = run(main())
    assert all(r.faults == () for r in results), [r.faults for r in results]
    connected = sum(r["connected"] for r in reports)
    assert connected >= 1600
    # The referee held a few of them at a time (its socket takes 4 connections; grpc closes
    # the others as it accepts them), not 1,600.
    assert fds.most - fds.base < 100, (fds.base, fds.most)
    assert len(capfd.readouterr().err) < 100_000  # nothing flooded the log
    print(
        f"FIGURE fd_hog: {connected} connections made by the hog, referee descriptors "
        f"{fds.base} -> at most {fds.most}; {len(results)} good matches, no fault"
    )


def test_a_hello_slot_hog_inside_its_sandbox_leaves_a_slow_starter_unharmed(tmp_path):
    async def main():
        async with RefereeHost(tmp_path) as host:
            hog = await host.launch("hog", hostile("hello_hog", "1000"))
            await host.launch("good-a", good())
            # Starts 4 s late, when the hog is at full strength.
            await host.launch("late", hostile("late", "4"))
            results = await matches_until(
                host,
                lambda: (report_of(tmp_path, "hog") or {}).get("opened", 0) >= 1000,
                ["late", "good-a"],
                FAST,
                60,
            )
            return results, report_of(tmp_path, "hog"), hog.exit_info()

    results, report, hog_exit = run(main())
    assert all(r.faults == () for r in results), [r.faults for r in results]
    assert hog_exit is None  # still at it when the matches ended
    assert report is not None and report["opened"] >= 1000
    print(f"FIGURE hello_hog in the sandbox: {report}; {len(results)} good matches, no fault")


def test_a_tokenless_client_holding_silent_streams_locks_no_bot_out(tmp_path):
    # The referee listens on every loopback address (dual stack): the stranger comes from
    # 127.0.0.1, an honest remote bot from ::1, another peer.
    async def main():
        async with RefereeHost(tmp_path, host="[::]") as host:
            port = host.server.port
            stranger = await hostile_client(tmp_path, f"127.0.0.1:{port}", "", "hello_hog", "1000")
            remote = None
            try:
                await host.launch("late", hostile("late", "4"))
                token = host.tokens.issue("remote")
                (tmp_path / "remote").mkdir()
                remote = await hostile_client(
                    tmp_path / "remote", f"[::1]:{port}", token, "late", "4"
                )
                report_path = tmp_path / "report.json"

                def stranger_at_full_strength() -> bool:
                    if not report_path.exists():
                        return False
                    return json.loads(report_path.read_text())["opened"] >= 1000

                results = await matches_until(
                    host, stranger_at_full_strength, ["late", "remote"], FAST, 60
                )
                return results, json.loads(report_path.read_text()), stranger.returncode
            finally:
                for proc in (stranger, remote):
                    if proc is not None:
                        proc.kill()
                        await proc.wait()

    results, report, stranger_exit = run(main())
    assert all(r.faults == () for r in results), [r.faults for r in results]
    assert stranger_exit is None
    # It opened its thousand streams and more, and was refused most of them at once.
    assert report["opened"] >= 1000
    assert report["ended"].get("RESOURCE_EXHAUSTED", 0) > 0
    print(f"FIGURE tokenless hello_hog on TCP: {report}; {len(results)} good matches, no fault")
