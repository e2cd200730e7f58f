"""Referee: (a) raw grpc.aio bidirectional ping-pong between two processes; (b) the referee's
decision round trip in one match, sequential (goal: at most 1.5 x (a)), its bot launched as
every bot is, in its bubblewrap sandbox over the Unix socket (over TCP before 2026-12-01; the
sandbox suite compares the two); (c) decisions per second
with 64 concurrent matches among 4 bot processes, against a raw pipelined grpc.aio stream with
the same messages in flight (goal: at least 0.6 x); the bots ask for batches, as the SDK does,
and the same run also measures bots that do not; (d) referee memory per concurrent match
with 1,000 matches open; (e) what a launched bot's own socket costs (a grpc.aio server each,
since 2026-12-02): the time to open and to close one, and the descriptors and memory it holds,
over 50 sockets."""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import grpc

from arena.games import make_game
from arena.referee import wire
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, ResourceLimits
from arena.referee.match import Limits
from arena.referee.server import RefereeServer
from arena_sdk.proto import arena_pb2 as pb

from .common import HERE, rss_bytes, start_process, stop_process

LIMITS = Limits(move_ms=10_000, time_bank_ms=0, max_strikes=3, connect_ms=30_000)


def sample_request() -> pb.RefereeMessage:
    """A real ActionRequest as the referee sends it (balloon, 4 players, first move)."""
    game = make_game("balloon", 4)
    state = game.new_match(1)
    seat = state.seats_to_act()[0]
    req = pb.ActionRequest(
        match_id="0123456789ab",
        request_id=1,
        observation=wire.observation_to_pb("balloon", state.observation(seat)),
        legal_actions=[wire.action_to_pb("balloon", a) for a in state.legal_actions(seat)],
        move_ms=1000,
        time_bank_ms=10000,
    )
    return pb.RefereeMessage(action_request=req)


class RawServer:
    """Plain grpc.aio server; each client stream is handed to `jobs` to drive."""

    def __init__(self) -> None:
        self.streams: asyncio.Queue = asyncio.Queue()
        self.server = grpc.aio.server()
        handler = grpc.stream_stream_rpc_method_handler(
            self._stream,
            request_deserializer=pb.BotMessage.FromString,
            response_serializer=pb.RefereeMessage.SerializeToString,
        )
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("bench.Raw", {"Pingpong": handler}),)
        )
        self.port = self.server.add_insecure_port("127.0.0.1:0")

    async def _stream(self, request_iterator, context):
        await context.read()  # the client's hello
        done = asyncio.get_running_loop().create_future()
        await self.streams.put((context, done))
        await done


class RawPingpong:
    """(a): a plain grpc.aio server in this process and a peer process; one message at a time.
    With `streams=2` the peer opens two streams and the round trips alternate between them, as
    a 2-player match's moves alternate between its two seats' streams in (b): not the goal's
    reference, but it shows what of (b)'s extra time is gRPC's rather than the referee's."""

    def __init__(self, payload: pb.RefereeMessage, streams: int = 1):
        self.payload = payload
        self.streams = streams

    async def __aenter__(self) -> "RawPingpong":
        self.raw = RawServer()
        await self.raw.server.start()
        self.peer = start_process(
            str(HERE / "raw_peer.py"), f"127.0.0.1:{self.raw.port}", str(self.streams)
        )
        self.calls = [
            await asyncio.wait_for(self.raw.streams.get(), 30) for _ in range(self.streams)
        ]
        await self.window(0.2)  # warm up
        return self

    async def window(self, seconds: float) -> tuple[float, int]:
        """Seconds per round trip over about `seconds`, and how many round trips."""
        contexts = [context for context, _ in self.calls]
        payload = self.payload
        n = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            context = contexts[n % len(contexts)]
            await context.write(payload)
            await context.read()
            n += 1
        return (time.perf_counter() - start) / n, n

    async def __aexit__(self, *exc) -> None:
        for _, done in self.calls:
            done.set_result(None)
        stop_process(self.peer)
        await self.raw.server.stop(0)


async def raw_pipelined(
    payload: pb.RefereeMessage, seconds: float, clients: int, window: int
) -> float:
    """Messages per second with `window` messages in flight on each of `clients` streams."""
    raw = RawServer()
    await raw.server.start()
    peers = [
        start_process(str(HERE / "raw_peer.py"), f"127.0.0.1:{raw.port}") for _ in range(clients)
    ]
    try:
        streams = [await asyncio.wait_for(raw.streams.get(), 30) for _ in range(clients)]
        stop_at = time.perf_counter() + seconds
        counts = []

        async def drive(context) -> None:
            slots = asyncio.Semaphore(window)
            replies = 0
            running = True

            async def reader():
                nonlocal replies
                while running or replies < sent:
                    await context.read()
                    replies += 1
                    slots.release()

            sent = 0
            task = asyncio.ensure_future(reader())
            while time.perf_counter() < stop_at:
                await slots.acquire()
                await context.write(payload)
                sent += 1
            running = False
            await task
            counts.append(replies)

        start = time.perf_counter()
        await asyncio.gather(*(drive(ctx) for ctx, _ in streams))
        elapsed = time.perf_counter() - start
        for _, done in streams:
            done.set_result(None)
        return sum(counts) / elapsed
    finally:
        for p in peers:
            stop_process(p)
        await raw.server.stop(0)


def raw_bot(
    max_concurrent: int, delay_ms: int = 0, batches: bool = False, address: str | None = None
) -> BotCommand:
    return BotCommand(
        (
            sys.executable,
            str(HERE / "raw_bot.py"),
            str(max_concurrent),
            str(delay_ms),
            "1" if batches else "0",
            *([address] if address else []),
        ),
        None,
    )


class RefereeSequential:
    """(b): the referee's decisions, one balloon 2-player match at a time. Both seats' bots live
    in one process (one stream each), so that, as in (a), two processes take part. The bot is
    launched in its sandbox and reaches the referee over its Unix socket; with `tcp` it runs
    unconfined and connects over TCP loopback instead (the sandbox suite compares the two)."""

    def __init__(self, tcp: bool = False) -> None:
        self.game = make_game("balloon", 2)
        self.seeds = itertools.count(1)
        self.tcp = tcp

    async def __aenter__(self) -> "RefereeSequential":
        self.tmp = tempfile.TemporaryDirectory()
        limits = ResourceLimits(sandbox=not self.tcp)
        self.host = RefereeHost(Path(self.tmp.name), resource_limits=limits)
        await self.host.__aenter__()
        tokens = ",".join(self.host.tokens.issue(name) for name in ("a", "b"))
        address = self.host.server.address if self.tcp else None
        await self.host.launch("a+b", raw_bot(1, address=address), token=tokens)
        await self.host.run_match(self.game, 0, ["a", "b"], LIMITS)  # wait for connections
        await self.window(0.2)  # warm up
        return self

    async def window(self, seconds: float) -> tuple[float, int]:
        """Seconds per decision over whole matches for about `seconds`, and how many."""
        decisions = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            result = await self.host.run_match(self.game, next(self.seeds), ["a", "b"], LIMITS)
            decisions += len(result.moves)
        return (time.perf_counter() - start) / decisions, decisions

    async def __aexit__(self, *exc) -> None:
        await self.host.__aexit__(*exc)
        self.tmp.cleanup()


async def roundtrips(
    payload: pb.RefereeMessage, seconds: float, window_s: float = 0.25
) -> tuple[list[float], list[float], list[float], int]:
    """(a), (b) and (a) over two alternating streams, in turn, in windows of about `window_s`,
    `seconds` each in all, with their processes kept running throughout: a burst of load on
    this shared machine then lands on every side alike instead of on one. Returns the windows'
    times of (a), of (b), of the two-stream (a), and the decisions (b) measured."""
    a_windows, b_windows, a2_windows, decisions = [], [], [], 0
    async with (
        RawPingpong(payload) as a,
        RefereeSequential() as b,
        RawPingpong(payload, streams=2) as a2,
    ):
        for _ in range(max(3, round(seconds / window_s))):
            a_windows.append((await a.window(window_s))[0])
            per_decision, n = await b.window(window_s)
            b_windows.append(per_decision)
            decisions += n
            a2_windows.append((await a2.window(window_s))[0])
    return a_windows, b_windows, a2_windows, decisions


async def referee_concurrent(
    seconds: float, matches: int = 64, batches: bool = True, shared_socket: bool = False
) -> float:
    """Decisions per second with `matches` balloon 4-player matches at once among 4 bots. With
    `batches` the bots say so in their Hello (as the SDK does) and answer ActionRequests with
    ActionReplies; without, every request and reply is a message of its own. With
    `shared_socket` the 4 bots reach the referee through one Unix socket, as every launched bot
    did before 2026-12-02, instead of a socket each."""
    game = make_game("balloon", 4)
    names = ["a", "b", "c", "d"]
    with tempfile.TemporaryDirectory() as tmp:
        async with RefereeHost(Path(tmp)) as host:
            if shared_socket:
                own_socket = host.server.open_bot_socket

                async def one_socket(key: str) -> Path:
                    return await own_socket("shared")

                host.server.open_bot_socket = one_socket  # type: ignore[method-assign]
            for name in names:
                await host.launch(name, raw_bot(matches, batches=batches))
            await host.run_match(game, 0, names, LIMITS)
            decisions = 0
            seed = itertools.count(1)
            stop_at = time.perf_counter() + seconds

            async def lane(i: int) -> None:
                nonlocal decisions
                while time.perf_counter() < stop_at:
                    s = next(seed)
                    order = names[s % 4 :] + names[: s % 4]
                    result = await host.run_match(game, s, order, LIMITS)
                    decisions += len(result.moves)

            start = time.perf_counter()
            await asyncio.gather(*(lane(i) for i in range(matches)))
            return decisions / (time.perf_counter() - start)


async def referee_memory(matches: int = 1000) -> float:
    """Bytes of referee memory per open match, with `matches` matches waiting on bots."""
    game = make_game("balloon", 4)
    names = ["a", "b", "c", "d"]
    with tempfile.TemporaryDirectory() as tmp:
        async with RefereeHost(Path(tmp)) as host:
            for name in names:
                await host.launch(name, raw_bot(matches, delay_ms=60_000))
            for name in names:
                await host.server.directory.wait_for(name, 30)
            gc.collect()
            before = rss_bytes()
            tasks = [
                asyncio.ensure_future(
                    host.run_match(
                        game, s, names[s % 4 :] + names[: s % 4], Limits(move_ms=120_000)
                    )
                )
                for s in range(matches)
            ]
            deadline = time.perf_counter() + 60
            while time.perf_counter() < deadline:  # a benchmark may poll: wait for 1,000 asks
                outstanding = sum(
                    len(c._pending) for c in host.server.directory._connections.values()
                )
                if outstanding >= matches:
                    break
                await asyncio.sleep(0.05)
            gc.collect()
            after = rss_bytes()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            return (after - before) / matches


async def bot_socket_cost(sockets: int = 50) -> dict:
    """Open `sockets` bot sockets on a started referee, then close them: per socket, the time
    of each, and the descriptors and memory (RSS) held while open."""

    async def nobody(token: str) -> None:
        return None

    server = RefereeServer(nobody)
    await server.start()
    try:
        gc.collect()
        fds, rss, threads = (
            len(os.listdir("/proc/self/fd")),
            rss_bytes(),
            len(os.listdir("/proc/self/task")),
        )
        started = time.perf_counter()
        for n in range(sockets):
            await server.open_bot_socket(f"bot-{n}")
        opened = time.perf_counter()
        fds_open, rss_open = len(os.listdir("/proc/self/fd")), rss_bytes()
        threads_open = len(os.listdir("/proc/self/task"))
        for n in range(sockets):
            await server.close_bot_socket(f"bot-{n}", grace_s=0)
        closed = time.perf_counter()
    finally:
        await server.stop(0)
    return {
        "open_ms": (opened - started) * 1000 / sockets,
        "close_ms": (closed - opened) * 1000 / sockets,
        "descriptors": (fds_open - fds) / sockets,
        "rss_kib": (rss_open - rss) / 1024 / sockets,
        "threads": (threads_open - threads) / sockets,
    }


def run(seconds: float, log) -> dict:
    payload = sample_request()
    a_windows, b_windows, a2_windows, decisions = asyncio.run(roundtrips(payload, seconds))
    a, b = statistics.median(a_windows), statistics.median(b_windows)
    a2 = statistics.median(a2_windows)
    ratios = sorted(y / x for x, y in zip(a_windows, b_windows))
    log(
        f"(a) raw grpc.aio ping-pong round trip:       {a * 1e6:8.1f} us  (median of "
        f"{len(a_windows)} windows)"
    )
    log(
        f"(b) referee decision round trip, sequential: {b * 1e6:8.1f} us  (median of "
        f"{len(b_windows)} windows, {decisions} decisions)"
    )
    log(
        f"    (b)/(a) window by window: {ratios[0]:.2f} lowest, {ratios[len(ratios) // 2]:.2f} "
        f"median, {ratios[-1]:.2f} highest"
    )
    log(
        f"    raw ping-pong alternating two streams:   {a2 * 1e6:8.1f} us  ((b) is "
        f"{b / a2:.2f} x this; not the goal's reference)"
    )
    raw_rate = asyncio.run(raw_pipelined(payload, seconds, clients=4, window=16))
    log(f"    raw pipelined, 4 streams x 16 in flight: {raw_rate:8.0f} messages/s")
    c = asyncio.run(referee_concurrent(seconds))
    log(
        f"(c) referee, 64 concurrent matches, 4 bots: {c:8.0f} decisions/s  (bots read and "
        "send batches, as the SDK does)"
    )
    c_single = asyncio.run(referee_concurrent(seconds, batches=False))
    log(
        f"    the same, one message per request/reply: {c_single:8.0f} decisions/s  (bots "
        "that do not ask for batches)"
    )
    # The 4 bots on one shared socket against a socket each, in turns.
    own, shared = [], []
    for _ in range(2):
        own.append(asyncio.run(referee_concurrent(seconds)))
        shared.append(asyncio.run(referee_concurrent(seconds, shared_socket=True)))
    c_own, c_shared = statistics.median(own), statistics.median(shared)
    log(
        f"    (c) in turns, a socket per bot: {c_own:8.0f} decisions/s; the 4 bots on one "
        f"socket (before): {c_shared:8.0f} ({c_own / c_shared:.2f} x)"
    )
    d = asyncio.run(referee_memory())
    log(f"(d) referee memory per open match (1,000):   {d / 1024:8.1f} KiB")
    e = asyncio.run(bot_socket_cost())
    log(
        f"(e) a bot's own socket: open {e['open_ms']:.2f} ms, close {e['close_ms']:.2f} ms, "
        f"{e['descriptors']:.1f} descriptors, {e['rss_kib']:.0f} KiB, {e['threads']:.1f} "
        "threads each while open (50 sockets)"
    )
    results = {
        "raw_pingpong_us": round(a * 1e6, 1),
        "referee_roundtrip_us": round(b * 1e6, 1),
        "roundtrip_windows": len(a_windows),
        "raw_pingpong_two_streams_us": round(a2 * 1e6, 1),
        "referee_roundtrip_vs_two_streams": round(b / a2, 3),
        "roundtrip_ratio_by_window": {
            "lowest": round(ratios[0], 3),
            "median": round(ratios[len(ratios) // 2], 3),
            "highest": round(ratios[-1], 3),
        },
        "raw_pipelined_msgs_per_s": round(raw_rate),
        "referee_concurrent_decisions_per_s": round(c),
        # Not a goal of its own: what bots that never ask for batches get.
        "referee_concurrent_unbatched_decisions_per_s": round(c_single),
        "referee_concurrent_unbatched_vs_raw_pipelined": round(c_single / raw_rate, 3),
        "referee_memory_per_match_kib": round(d / 1024, 1),
        "bot_socket": {k: round(v, 2) for k, v in e.items()},
        "concurrent_own_sockets_decisions_per_s": round(c_own),
        "concurrent_shared_socket_decisions_per_s": round(c_shared),
        "concurrent_own_vs_shared": round(c_own / c_shared, 3),
    }
    goals = {
        "(b) / (a)": {"value": round(b / a, 3), "goal": "<= 1.5", "met": b / a <= 1.5},
        "(c) / raw pipelined": {
            "value": round(c / raw_rate, 3),
            "goal": ">= 0.6",
            "met": c / raw_rate >= 0.6,
        },
    }
    return {"results": results, "goals": goals}
