"""The stream's reader (`RefereeServicer.Play`) and a bot's connection (`BotConnection`) over
a fake stream, with matches as tasks awaiting `BotConnection.request`: what a match's next step
may do while the reader is part-way through a batch of replies (write to the same stream, fail
its write, raise, cancel the reader, close the stream), and what the reader must still do
afterwards. Two were written in review against defects since fixed: a batch's replies timed
after the steps run for the replies before them, and a close from a step cancelling the
reader's handler.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from arena.referee import wire
from arena.referee.connection import BotConnection, BotDirectory
from arena.referee.server import LiveMatches, RefereeServicer
from arena.referee.transport import ConnectionClosed
from arena.results import MALFORMED
from arena_sdk.proto import arena_pb2 as pb

from .support import until

MOVE_S = 60.0  # deadlines far beyond any test: no timer fires unless a test moves the clock


class FakeStream:
    """A Play stream's servicer context as RefereeServicer.Play uses it: messages to read are
    put in `inbox`; writes are kept (or fail once `broken`); an abort is kept, then raised."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.written: list[pb.RefereeMessage] = []
        self.broken = False
        self.aborted: list[tuple[grpc.StatusCode, str]] = []

    async def read(self):
        msg = await self.inbox.get()  # read as the stream's deserializer reads it
        return wire.from_bot_message(msg) if isinstance(msg, pb.BotMessage) else msg

    async def write(self, msg: pb.RefereeMessage | bytes) -> None:
        if self.broken:
            raise RuntimeError("the stream is broken")
        if isinstance(msg, bytes):  # action requests, encoded by wire.py
            msg = pb.RefereeMessage.FromString(msg)
        self.written.append(msg)
        await asyncio.sleep(0)  # grpc's write gives the loop a turn before it completes

    def peer(self) -> str:
        return "fake"

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        self.aborted.append((code, details))
        await asyncio.sleep(0)  # grpc sends the status, then raises
        raise grpc.aio.AbortError("Locally aborted.")

    def requests(self) -> list[pb.ActionRequest]:
        out: list[pb.ActionRequest] = []
        for msg in self.written:
            kind = msg.WhichOneof("kind")
            if kind == "action_request":
                out.append(msg.action_request)
            elif kind == "action_requests":
                out.extend(msg.action_requests.requests)
        return out

    def kinds(self) -> list[str]:
        return [m.WhichOneof("kind") for m in self.written]


async def _authenticate(token: str) -> str:
    return token  # the bot's name is its token


async def connect(max_concurrent: int = 8):
    """Open a Play stream for bot "bot" that reads ActionRequests, over a fake stream. Returns
    (the fake stream, the handler task, which is the stream's reader, and the bot's
    connection)."""
    stream = FakeStream()
    directory = BotDirectory()
    servicer = RefereeServicer(_authenticate, directory, LiveMatches())
    handler = asyncio.ensure_future(servicer.Play(None, stream))
    stream.inbox.put_nowait(
        pb.BotMessage(
            hello=pb.Hello(
                token="bot", protocol_version=1, max_concurrent=max_concurrent, batches=True
            )
        )
    )
    await until(lambda: directory.get("bot") is not None)
    return stream, handler, directory.get("bot")


def request(match_id: str) -> tuple[bytes, bytes]:
    """An action request as wire.action_request encodes it: (before the id, after it)."""
    return pb.ActionRequest(match_id=match_id).SerializeToString(), b"\x28\x01"


def reply_to(req: pb.ActionRequest) -> pb.ActionReply:
    return pb.ActionReply(match_id=req.match_id, request_id=req.request_id)


def reply_in_one_batch(stream: FakeStream, *requests: pb.ActionRequest) -> None:
    """The bot answering `requests` in one ActionReplies message."""
    replies = [reply_to(req) for req in requests]
    stream.inbox.put_nowait(pb.BotMessage(action_replies=pb.ActionReplies(replies=replies)))


def run(main, loop_factory=asyncio.new_event_loop):
    """Run `main` as asyncio.run does, stricter: nothing may reach the loop's exception handler
    (a hand-off that leaves the current task wrong is reported there and nowhere else), and
    every task left at the end must end when cancelled. A task that cannot (it waits on a
    settled reply that never woke it) fails the test; asyncio.run would hang on it."""
    loop = loop_factory()
    reported: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        result = loop.run_until_complete(main)
    finally:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        for _ in range(100):
            if all(task.done() for task in left):
                break
            loop.run_until_complete(asyncio.sleep(0))
        loop.close()
    stuck = [task for task in left if not task.done()]
    assert not stuck, f"tasks that never woke and cannot be cancelled: {stuck}"
    assert reported == [], reported
    return result


async def outcome(task: asyncio.Future):
    """The task's result (its exception raised), once it ends within a bounded number of loop
    turns: a task that is never woken fails the test rather than hanging it."""
    await until(task.done)
    return task.result()


async def ended(*tasks: asyncio.Future) -> None:
    await until(lambda: all(task.done() for task in tasks))


async def end_stream(stream: FakeStream, handler: asyncio.Task) -> None:
    stream.inbox.put_nowait(grpc.aio.EOF)
    await outcome(handler)


def asks_once(conn: BotConnection, match: str):
    """Match `match` asking the bot for one move (a coroutine: the reply and its timing)."""
    return conn.request(match, request(match), MOVE_S, MOVE_S)


async def two_requests_written(stream: FakeStream, conn: BotConnection, first, second=None):
    """Start matches m1 (coroutine `first`) and m2 (`second`, by default one that asks the bot
    once and returns the reply), each asking the bot once; return their tasks and their two
    requests once both are on the stream."""
    m1 = asyncio.ensure_future(first)
    m2 = asyncio.ensure_future(second if second is not None else asks_once(conn, "m2"))
    await until(lambda: len(stream.requests()) == 2)
    req1, req2 = stream.requests()
    assert (req1.match_id, req2.match_id) == ("m1", "m2")
    return m1, m2, req1, req2


# ------------------------------------------------------------ a batch, continuation by continuation


def test_a_batch_whose_first_reply_makes_its_match_write_again_on_the_same_stream():
    async def main():
        stream, handler, conn = await connect()
        seen = {}

        async def first():
            await asks_once(conn, "m1")
            seen["m1 runs as"] = asyncio.current_task()
            # Its next move, asked while the reader is still in the batch, on the same stream.
            return await asks_once(conn, "m1")

        async def second():
            reply, _ = await asks_once(conn, "m2")
            seen["m2 runs as"] = asyncio.current_task()
            seen["writer as m2 runs"] = conn._writer
            return reply

        m1, m2, req1, req2 = await two_requests_written(stream, conn, first(), second())
        reply_in_one_batch(stream, req1, req2)
        await until(lambda: len(stream.requests()) == 3)
        assert seen["m1 runs as"] is m1 and seen["m2 runs as"] is m2
        # m1 was still writing its next request when m2's reply came: the outbox's writer is
        # m1's task (not the reader's), the one the watchdog must cancel if that write stalls.
        assert seen["writer as m2 runs"] is m1
        assert (await outcome(m2)).request_id == req2.request_id
        req3 = stream.requests()[2]
        assert req3.match_id == "m1" and req3.request_id not in (req1.request_id, req2.request_id)
        stream.inbox.put_nowait(pb.BotMessage(action=reply_to(req3)))
        reply, _ = await outcome(m1)
        assert reply.request_id == req3.request_id
        # The reader reads on after both steps: a ping is answered.
        stream.inbox.put_nowait(pb.BotMessage(ping=pb.Ping(nonce=5)))
        await until(lambda: "pong" in stream.kinds())
        assert not handler.done() and not conn.closed.is_set()
        assert conn._pending == {} and conn._slots._value == 8
        await end_stream(stream, handler)
        assert stream.aborted == []

    run(main())


def test_a_match_whose_write_fails_inside_the_batch_closes_the_stream_and_leaves_nothing_behind():
    async def main():
        stream, handler, conn = await connect()

        async def first():
            await asks_once(conn, "m1")
            stream.broken = True  # its next write fails: the stream is gone
            return await asks_once(conn, "m1")

        m1, m2, req1, req2 = await two_requests_written(stream, conn, first())
        reply_in_one_batch(stream, req1, req2)
        await ended(handler, m1, m2)
        assert conn.closed.is_set() and "the stream failed" in conn.close_reason
        with pytest.raises(ConnectionClosed):
            m1.result()
        # m2 either took its reply or learnt of the close; it never waits forever.
        if m2.exception() is None:
            assert m2.result()[0].request_id == req2.request_id
        else:
            assert isinstance(m2.exception(), ConnectionClosed)
        assert conn._pending == {} and not conn._outbox and conn._writer is None
        assert conn._slots._value == 8  # every request slot given back

    run(main())


def test_a_match_that_raises_inside_the_batch_keeps_its_error_and_the_reader_reads_on():
    async def main():
        stream, handler, conn = await connect()

        async def first():
            await asks_once(conn, "m1")
            raise LookupError("a bug in m1's next step")

        m1, m2, req1, req2 = await two_requests_written(stream, conn, first())
        reply_in_one_batch(stream, req1, req2)
        reply, _ = await outcome(m2)
        assert reply.request_id == req2.request_id
        with pytest.raises(LookupError):
            await outcome(m1)
        stream.inbox.put_nowait(pb.BotMessage(ping=pb.Ping(nonce=1)))
        await until(lambda: "pong" in stream.kinds())
        assert not handler.done() and not conn.closed.is_set()
        # The match's error is its task's, not the loop's (run() checks the loop saw none).
        await end_stream(stream, handler)

    run(main())


def test_a_reader_cancelled_by_a_match_step_takes_the_rest_of_its_batch_then_stops():
    async def main():
        stream, handler, conn = await connect()

        async def first():
            reply, _ = await asks_once(conn, "m1")
            handler.cancel()  # the server stops at this moment
            return reply

        m1, m2, req1, req2 = await two_requests_written(stream, conn, first())
        waiting = asyncio.ensure_future(asks_once(conn, "m3"))
        await until(lambda: len(stream.requests()) == 3)
        reply_in_one_batch(stream, req1, req2)
        await ended(handler)
        # The cancellation landed at the reader's next await, after the whole batch.
        assert handler.cancelled()
        assert (await outcome(m1)).request_id == req1.request_id
        assert (await outcome(m2))[0].request_id == req2.request_id
        with pytest.raises(ConnectionClosed):
            await outcome(waiting)
        assert conn.closed.is_set() and conn._pending == {}

    run(main())


def test_a_second_reply_to_one_request_in_the_same_batch_is_refused_without_a_fault():
    """The request's own cleanup has run by the time the batch's next reply is read, so the
    duplicate is told apart from a reply to a request that never was, as the protocol says:
    rejected as already answered, and not charged to the seat as an unsolicited reply."""

    class SeatRecord:
        def __init__(self) -> None:
            self.unsolicited: list[str] = []

        def record_unsolicited(self, detail: str) -> None:
            self.unsolicited.append(detail)

    async def main():
        stream, handler, conn = await connect()
        seat = SeatRecord()
        conn.attach("m1", seat)
        asking = asyncio.ensure_future(asks_once(conn, "m1"))
        await until(lambda: len(stream.requests()) == 1)
        req = stream.requests()[0]
        reply_in_one_batch(stream, req, req)
        reply, _ = await outcome(asking)
        assert reply.request_id == req.request_id
        await until(lambda: "rejected" in stream.kinds())
        rejected = stream.written[stream.kinds().index("rejected")].rejected
        assert rejected.request_id == req.request_id
        assert rejected.fault == pb.FAULT_UNKNOWN_REQUEST
        assert "already answered" in rejected.detail
        assert seat.unsolicited == []
        await end_stream(stream, handler)

    run(main())


# ------------------------------------------------------------ defects found in review


class SkewedLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock a test moves forward: time the referee spends working."""

    skew = 0.0

    def time(self) -> float:
        return super().time() + self.skew


def test_replies_in_one_batch_are_timed_from_the_batchs_arrival_not_after_other_matches_steps():
    async def main():
        stream, handler, conn = await connect()
        loop = asyncio.get_running_loop()

        async def first():
            reply = await asks_once(conn, "m1")
            loop.skew += 2.0  # m1's next step takes the referee 2 s (engine, encoding, ...)
            return reply

        m1, m2, req1, req2 = await two_requests_written(stream, conn, first())
        reply_in_one_batch(stream, req1, req2)
        (_, elapsed_1), (_, elapsed_2) = await outcome(m1), await outcome(m2)
        await end_stream(stream, handler)
        return elapsed_1, elapsed_2

    elapsed_1, elapsed_2 = run(main(), SkewedLoop)
    assert elapsed_1 < 1.0
    # The bot sent both replies at once: m1's 2 s are the referee's, not m2's bot's.
    assert elapsed_2 < 1.0


def test_a_close_made_by_a_match_step_inside_the_reader_ends_the_stream_as_a_close_by_the_reader():
    async def main():
        stream, handler, conn = await connect()
        reason = "the bot does not read its stream (too many queued messages)"

        async def first():
            reply = await asks_once(conn, "m1")
            # As RemoteSeat.end's conn.send does when the outbox is full.
            conn.close(reason, MALFORMED, grpc.StatusCode.RESOURCE_EXHAUSTED)
            return reply

        m1 = asyncio.ensure_future(first())
        await until(lambda: len(stream.requests()) == 1)
        stream.inbox.put_nowait(pb.BotMessage(action=reply_to(stream.requests()[0])))
        await ended(handler, m1)
        assert stream.aborted == [(grpc.StatusCode.RESOURCE_EXHAUSTED, reason)]
        # The handler ends by its abort, as when the reader closes the stream itself (a flood),
        # not by a cancellation left pending on it.
        assert not handler.cancelled()
        assert isinstance(handler.exception(), grpc.aio.AbortError)

    run(main())
