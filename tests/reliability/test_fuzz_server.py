"""Property tests of the server's message handling, over real gRPC streams on loopback.

Random and mutated BotMessage bytes are sent on Play streams (raw bytes, so that anything can
be sent). The referee never crashes; it answers every message that parses with a Pong or a
Rejected that says what was wrong, and ends the stream with a clear status when it must (bytes
that do not parse, a first message that is not a usable Hello, a flood); and all the while two
good bots play match after match on the same referee without a fault.
"""

from __future__ import annotations

import asyncio
import random
import threading
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import make_game
from arena.referee.connection import STRAY_BURST
from arena.referee.host import RefereeHost
from arena.referee.match import Limits
from arena_sdk.proto import arena_pb2 as pb
from tests.bots.swarm_bot import play
from tests.support.fuzz import actions, mutate
from tests.timing import scaled

PLAY = "/arena.v1.Referee/Play"
LIMITS = Limits(move_ms=2000, time_bank_ms=2000, max_strikes=3, connect_ms=15_000)
# A stream's messages stay within the stray budget (the flood has its own test below).
MAX_MESSAGES = 40


async def good_bot(address: str, token: str) -> None:
    """An in-process bot over a real stream: answers every request with its first legal
    action."""
    await play(address, token, max_concurrent=4, pick=0, name="")


class Referee:
    """A referee on its own event loop in a thread, for the whole module: hypothesis drives
    examples synchronously, the referee and its good matches run on meanwhile."""

    def __init__(self, run_dir: Path):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.results = []
        self.call(self._start(run_dir))

    def exchange(self, messages: list[bytes], hello: bytes | None):
        return exchange(self.address, messages, hello)

    def call(self, coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self, run_dir: Path) -> None:
        self.host = RefereeHost(run_dir)
        await self.host.__aenter__()
        self.address = self.host.server.address
        self.fuzz_token = self.host.tokens.issue("fuzzer")
        self.bots = [
            asyncio.ensure_future(good_bot(self.address, self.host.tokens.issue(n)))
            for n in ("good-a", "good-b")
        ]
        for name in ("good-a", "good-b"):
            assert await self.host.server.directory.wait_for(name, scaled(15)) is not None
        self.stopping = False
        self.matches = asyncio.ensure_future(self._match_loop())

    async def _match_loop(self) -> None:
        game = make_game("boom", 2, ruse=True)
        seed = 0
        while not self.stopping:
            seed += 1
            self.results.append(await self.host.run_match(game, seed, ["good-a", "good-b"], LIMITS))

    async def _stop(self) -> None:
        self.stopping = True
        await self.matches
        for bot in self.bots:
            bot.cancel()
        await asyncio.gather(*self.bots, return_exceptions=True)
        await self.host.__aexit__(None, None, None)

    def close(self) -> None:
        try:
            self.call(self._stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture(scope="module")
def referee(tmp_path_factory):
    ref = Referee(tmp_path_factory.mktemp("fuzz-referee"))
    yield ref
    ref.close()
    # All the while, the good bots' matches went on without a fault.
    assert len(ref.results) >= 10
    assert all(r.faults == () for r in ref.results)


def exchange(address: str, messages: list[bytes], hello: bytes | None):
    """Send hello (if any) then the messages, half-close, read everything back. Returns
    (welcome or None, the referee's messages after it, status code, details).

    A synchronous client: when the referee ends the stream while a grpc.aio client is still
    writing, the aio client reports its failed write (INTERNAL) instead of the referee's
    status; the synchronous one reports the referee's."""
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(
            PLAY, request_serializer=lambda b: b, response_deserializer=lambda b: b
        )(iter(([hello] if hello is not None else []) + messages), timeout=30)
        received: list[bytes] = []
        try:
            for raw in call:
                received.append(raw)
        except grpc.RpcError:
            pass
        code, details = call.code(), call.details()
    replies = [pb.RefereeMessage.FromString(r) for r in received]
    welcome = None
    if replies and replies[0].WhichOneof("kind") == "welcome":
        welcome = replies.pop(0)
    return welcome, replies, code, details


def bot_message_bytes():
    """Serialized BotMessages of every kind, with random contents."""
    return st.one_of(
        st.builds(lambda n: pb.BotMessage(ping=pb.Ping(nonce=n)), st.integers(0, 2**64 - 1)),
        st.builds(
            lambda m, r, a: pb.BotMessage(
                action=pb.ActionReply(match_id=m, request_id=r, action=a)
            ),
            st.text(max_size=20),
            st.integers(0, 2**64 - 1),
            actions,
        ),
        st.builds(
            lambda t, v, c: pb.BotMessage(
                hello=pb.Hello(token=t, protocol_version=v, max_concurrent=c)
            ),
            st.text(max_size=50),
            st.integers(0, 2**32 - 1),
            st.integers(0, 2**32 - 1),
        ),
        st.just(pb.BotMessage()),
    ).map(lambda m: m.SerializeToString())


def fuzz_messages():
    """Valid messages, mutations of them, and random bytes."""
    mutated = st.tuples(bot_message_bytes(), st.integers(0, 2**32)).map(
        lambda p: mutate(p[0], random.Random(p[1]))
    )
    return st.one_of(bot_message_bytes(), mutated, st.binary(max_size=200))


def parses(data: bytes) -> bool:
    try:
        pb.BotMessage.FromString(data)
        return True
    except DecodeError:
        return False


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(messages=st.lists(fuzz_messages(), max_size=MAX_MESSAGES))
def test_random_messages_after_hello_get_an_answer_or_a_clear_status(referee, messages):
    hello = pb.BotMessage(hello=pb.Hello(token=referee.fuzz_token, protocol_version=1))
    welcome, replies, code, details = referee.exchange(messages, hello.SerializeToString())
    assert welcome is not None
    good_prefix = 0
    for m in messages:
        if not parses(m):
            break
        good_prefix += 1
    for reply in replies:
        kind = reply.WhichOneof("kind")
        assert kind in ("pong", "rejected"), reply
        if kind == "rejected":
            assert reply.rejected.detail
    if good_prefix == len(messages):
        # Everything parsed: every message was answered, and the stream ended normally.
        assert code == grpc.StatusCode.OK, details
        assert len(replies) == len(messages)
    else:
        # Bytes that do not parse end the stream with INVALID_ARGUMENT, after the answers to
        # (some of) the messages before them.
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
        assert "does not parse" in details
        assert len(replies) <= good_prefix


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(first=fuzz_messages(), rest=st.lists(fuzz_messages(), max_size=3))
def test_a_random_first_message_is_refused_with_a_clear_status(referee, first, rest):
    welcome, replies, code, details = referee.exchange([first, *rest], None)
    # A random first message is almost never a Hello with the right token; when it is not,
    # the stream ends with a status that says what was wrong.
    assert welcome is None and replies == []
    assert code in (
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.FAILED_PRECONDITION,
    ), (code, details)
    assert details


def test_a_flood_ends_the_stream_with_resource_exhausted(referee):
    hello = pb.BotMessage(hello=pb.Hello(token=referee.fuzz_token, protocol_version=1))
    pings = [
        pb.BotMessage(ping=pb.Ping(nonce=i)).SerializeToString() for i in range(STRAY_BURST + 50)
    ]  # the budget refills at STRAY_PER_S meanwhile
    welcome, replies, code, details = referee.exchange(pings, hello.SerializeToString())
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "flooding" in details
    assert len(replies) < len(pings)


def test_the_referee_is_healthy_after_the_fuzzing(referee):
    async def check():
        async with grpc.aio.insecure_channel(referee.address) as channel:
            return await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="arena.v1.Referee"), timeout=5
            )

    assert referee.call(check()).status == health_pb2.HealthCheckResponse.SERVING
