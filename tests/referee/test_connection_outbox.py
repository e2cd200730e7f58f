"""Unit tests of BotConnection's outbox (one module, its stream replaced by a fake writer): one
write at a time in queue order, a request's clock starting when its write begins, a cancelled
writer handing the rest of the outbox on, requests queued together going out as one
ActionRequests to a bot that reads them, and the watchdog disconnecting a bot whose stream
stopped taking writes. The real stream is covered by the integration tests next to this one."""

from __future__ import annotations

import asyncio
import math

import grpc
import pytest

from arena.referee import wire
from arena.referee.connection import BotConnection
from arena.referee.transport import WRITE_TIMEOUT_S, ConnectionClosed
from arena.results import MALFORMED
from arena_sdk.proto import arena_pb2 as pb

from .support import until


class FakeStream:
    """A stream whose writes complete only when the test says so."""

    def __init__(self) -> None:
        self.written: list[pb.RefereeMessage] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.gates: list[asyncio.Future] = []

    async def write(self, msg: pb.RefereeMessage | bytes) -> None:
        if isinstance(msg, bytes):  # an action request, encoded by wire.py
            msg = pb.RefereeMessage.FromString(msg)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        gate = asyncio.get_running_loop().create_future()
        self.gates.append(gate)
        try:
            await gate
        finally:
            self.in_flight -= 1
        self.written.append(msg)

    def open_gates(self) -> None:
        for gate in self.gates:
            if not gate.done():
                gate.set_result(None)


def start(match_id: str) -> pb.RefereeMessage:
    """A message that is not a request (a match start)."""
    return pb.RefereeMessage(match_start=pb.MatchStart(match_id=match_id))


def request(match_id: str) -> tuple[bytes, bytes]:
    """An action request as wire.action_request encodes it: (before the id, after it)."""
    return pb.ActionRequest(match_id=match_id).SerializeToString(), b"\x28\x01"  # move_ms 1


def match_of(msg: pb.RefereeMessage) -> str:
    return getattr(msg, msg.WhichOneof("kind")).match_id


def connected(batches: bool = False) -> tuple[FakeStream, BotConnection]:
    """A fresh fake stream and a connection writing to it (up to 8 requests at once)."""
    stream = FakeStream()
    return stream, BotConnection("bot", 8, stream.write, batches=batches)


async def writing(
    stream: FakeStream, conn: BotConnection, msg: pb.RefereeMessage
) -> asyncio.Future:
    """`msg` delivered in a task of its own, once its write is on the stream (held there)."""
    task = asyncio.ensure_future(conn.deliver(msg))
    await until(lambda: stream.in_flight == 1)
    return task


def ask(
    conn: BotConnection, match_id: str, allowed_s: float = 60.0, slot_wait_s: float = 60.0
) -> asyncio.Future:
    """A seat of match `match_id` asking for a move, in a task of its own (BotConnection.request:
    `allowed_s` for the reply, `slot_wait_s` to wait for a request slot)."""
    return asyncio.ensure_future(conn.request(match_id, request(match_id), allowed_s, slot_wait_s))


def answer(conn: BotConnection, req: pb.ActionRequest) -> None:
    """The bot's reply to `req` arriving."""
    conn._on_reply(pb.ActionReply(match_id=req.match_id, request_id=req.request_id))


async def write_one_at_a_time(stream: FakeStream, upto: int) -> None:
    """Let the stream's writes complete one by one, each once it is the only one in flight,
    until `upto` messages are written."""
    for done in range(len(stream.written) + 1, upto + 1):
        await until(lambda: stream.in_flight == 1)
        stream.open_gates()
        await until(lambda done=done: len(stream.written) == done)


async def cancel(task: asyncio.Future) -> None:
    """Cancel `task` (its match stopped) and see it end cancelled."""
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_one_write_at_a_time_in_queue_order_and_the_clock_starts_at_the_write():
    async def main():
        stream, conn = connected()
        asks = [ask(conn, f"m{i}") for i in range(5)]
        await until(lambda: len(conn._outbox) == 4)  # the first is being written, four wait
        # Only the request being written has its clock running; the queued ones' have not started.
        clocks = sorted((p.sent_at >= 0, p.deadline < math.inf) for p in conn._pending.values())
        assert clocks == [(False, False)] * 4 + [(True, True)]
        await write_one_at_a_time(stream, 5)
        assert [m.action_request.match_id for m in stream.written] == [f"m{i}" for i in range(5)]
        assert stream.most_in_flight == 1
        for msg in stream.written:
            answer(conn, msg.action_request)
        replies = await asyncio.gather(*asks)
        assert [r.match_id for r, _ in replies] == [f"m{i}" for i in range(5)]
        assert conn._pending == {} and not conn._outbox and conn._writer is None

    asyncio.run(main())


def test_a_writer_cancelled_mid_write_hands_the_rest_of_the_outbox_on():
    async def main():
        stream, conn = connected()
        first = await writing(stream, conn, start("m0"))
        conn.send(start("m1"))  # queued behind m0, written by first's task
        second = ask(conn, "m2")
        await until(lambda: len(conn._outbox) == 2)
        await cancel(first)  # its match was stopped while it was writing
        await write_one_at_a_time(stream, 2)  # a background writer took over
        assert [match_of(m) for m in stream.written] == ["m1", "m2"]
        answer(conn, stream.written[1].action_request)
        reply, _ = await second
        assert reply.match_id == "m2" and not conn.closed.is_set()
        await conn.flush()
        assert conn._writer is None

    asyncio.run(main())


def test_a_request_cancelled_while_queued_is_never_sent():
    async def main():
        stream, conn = connected()
        busy = await writing(stream, conn, start("m0"))
        queued = ask(conn, "m1")
        await until(lambda: len(conn._outbox) == 1)
        await cancel(queued)
        stream.open_gates()
        await busy
        assert [match_of(m) for m in stream.written] == ["m0"]
        assert conn._pending == {} and not conn._outbox

    asyncio.run(main())


def test_a_stream_that_stops_taking_writes_is_closed_by_the_watchdog():
    async def main():
        stream, conn = connected()  # its gates are never opened: the bot stopped reading
        closed = []
        conn.on_close = lambda: closed.append(conn.close_reason)
        first, queued = ask(conn, "m0", 600.0, 600.0), ask(conn, "m1", 600.0, 600.0)
        await until(lambda: stream.in_flight == 1 and len(conn._outbox) == 1)
        conn._check_writes()  # the watchdog's round while the write is still young: no effect
        assert not conn.closed.is_set()
        conn._write_started -= WRITE_TIMEOUT_S + 1  # as if the write had hung that long
        conn._check_writes()
        for task in (first, queued):
            with pytest.raises(ConnectionClosed):
                await task  # a fault for the seat, never a cancelled match
        assert conn.close_fault == MALFORMED
        assert conn.close_code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert closed and "did not read its stream" in closed[0]
        assert not conn._outbox and conn._writer is None
        with pytest.raises(ConnectionClosed):
            await conn.deliver(start("m2"))

    asyncio.run(main())


def test_requests_queued_together_go_as_one_batch_to_a_bot_that_reads_batches():
    async def main():
        stream, conn = connected(batches=True)
        first = ask(conn, "m0")
        await until(lambda: stream.in_flight == 1)
        # While m0's request is being written: two more requests, a match start, one more.
        asks = [ask(conn, m) for m in ("m1", "m2")]
        await until(lambda: len(conn._outbox) == 2)
        conn.send(pb.RefereeMessage(match_start=pb.MatchStart(match_id="m3")))
        asks.append(ask(conn, "m3"))
        await until(lambda: len(conn._outbox) == 4)
        await write_one_at_a_time(stream, 3)
        single, batch, start = stream.written
        await write_one_at_a_time(stream, 4)
        last = stream.written[3]
        # Order is kept: the run of requests ends at the match start, which is not a request.
        assert single.WhichOneof("kind") == "action_request"
        assert batch.WhichOneof("kind") == "action_requests"
        assert [r.match_id for r in batch.action_requests.requests] == ["m1", "m2"]
        assert start.WhichOneof("kind") == "match_start"
        assert last.WhichOneof("kind") == "action_request" and last.action_request.match_id == "m3"
        # Each request in the batch has its own id, and a reply to it is matched as usual.
        for r in list(batch.action_requests.requests) + [
            single.action_request,
            last.action_request,
        ]:
            answer(conn, r)
        replies = await asyncio.gather(first, *asks)
        assert [r.match_id for r, _ in replies] == ["m0", "m1", "m2", "m3"]

    asyncio.run(main())


def test_a_bot_that_did_not_ask_for_batches_gets_one_request_per_message():
    async def main():
        stream, conn = connected(batches=False)  # as an older bot says
        asks = [ask(conn, f"m{i}") for i in range(3)]
        await until(lambda: len(conn._outbox) == 2)
        await write_one_at_a_time(stream, 3)
        assert [m.WhichOneof("kind") for m in stream.written] == ["action_request"] * 3
        for m in stream.written:
            answer(conn, m.action_request)
        await asyncio.gather(*asks)

    asyncio.run(main())


def test_an_empty_batch_of_replies_is_rejected_as_malformed():
    async def main():
        written: list[pb.RefereeMessage] = []

        async def write(msg):
            written.append(msg)

        conn = BotConnection("bot", 4, write, batches=True)
        conn.on_message(wire.from_bot_message(pb.BotMessage(action_replies=pb.ActionReplies())))
        await conn.flush()
        return written, conn

    written, conn = asyncio.run(main())
    [msg] = written
    assert msg.rejected.fault == pb.FAULT_MALFORMED
    assert "empty action_replies" in msg.rejected.detail
    assert not conn.closed.is_set()  # one is a stray, charged to the flood budget, not a close


def test_a_batch_of_stray_replies_is_a_flood_like_as_many_messages():
    async def main():
        async def write(msg):
            pass

        conn = BotConnection("bot", 4, write, batches=True)
        strays = [pb.ActionReply(match_id="nope", request_id=i) for i in range(1, 501)]
        conn.on_message(
            wire.from_bot_message(pb.BotMessage(action_replies=pb.ActionReplies(replies=strays)))
        )
        return conn

    conn = asyncio.run(main())
    assert conn.closed.is_set() and conn.close_fault == MALFORMED
    assert conn.close_code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "flooding" in conn.close_reason


def test_one_timer_serves_every_deadline_in_flight_and_each_request_times_out_at_its_own():
    async def main():
        stream, conn = connected(batches=True)
        allowed = {"m0": 30.0, "m1": 10.0, "m2": 20.0}
        asks = {m: ask(conn, m, s) for m, s in allowed.items()}
        await until(lambda: len(conn._outbox) == 2)  # m0 is being written, m1 and m2 wait
        stream.open_gates()
        await until(lambda: all(p.sent_at >= 0 for p in conn._pending.values()))
        await until(lambda: stream.in_flight == 1)
        stream.open_gates()  # the batch is written: m0's task, which wrote it, waits for m0
        await until(lambda: len(stream.written) == 2)
        # One timer, set for the earliest deadline of the three.
        assert conn._deadline_at == min(p.deadline for p in conn._pending.values())
        assert conn._deadline_at == next(
            p.sent_at + 10.0 for key, p in conn._pending.items() if key[0] == "m1"
        )
        # m1's deadline comes (moved into the past rather than waited for): only m1 times out,
        # and the timer moves on to the next deadline in flight, m2's.
        by_match = {key[0]: p for key, p in conn._pending.items()}
        now = asyncio.get_running_loop().time()
        by_match["m1"].deadline = now - 1.0
        conn._expire_due()
        with pytest.raises(TimeoutError):
            await asks["m1"]
        assert not asks["m0"].done() and not asks["m2"].done()
        assert conn._deadline_at == by_match["m2"].deadline
        # m2 is answered in time; then m0's deadline passes: m0 times out, and nothing is left
        # to watch, so no timer stays armed.
        rid2 = next(key[1] for key in conn._pending if key[0] == "m2")
        conn._on_reply(pb.ActionReply(match_id="m2", request_id=rid2))
        reply, _ = await asks["m2"]
        assert reply.match_id == "m2"
        by_match["m0"].deadline = now - 1.0
        conn._expire_due()
        with pytest.raises(TimeoutError):
            await asks["m0"]
        assert conn._deadline_timer is None and conn._pending == {}

    asyncio.run(main())


def test_a_reply_just_after_its_deadline_is_late_not_unknown_and_costs_no_second_fault():
    async def main():
        stream, conn = connected()

        class Seat:
            unsolicited: list[str] = []

            def record_unsolicited(self, detail: str) -> None:
                self.unsolicited.append(detail)

        seat = Seat()
        conn.attach("m0", seat)
        asked = ask(conn, "m0")
        await write_one_at_a_time(stream, 1)
        ((key, pending),) = conn._pending.items()
        pending.deadline = asyncio.get_running_loop().time() - 1.0
        conn._expire_due()  # the deadline has fired; the waiting task has not run yet
        conn._on_reply(pb.ActionReply(match_id="m0", request_id=key[1]))  # the reply, late
        with pytest.raises(TimeoutError):  # the timeout is the fault...
            await asked
        assert seat.unsolicited == []  # ...and the late reply is not a second one
        await until(lambda: len(stream.written) == 2 or stream.in_flight == 1)
        stream.open_gates()
        await until(lambda: len(stream.written) == 2)
        rejected = stream.written[1].rejected
        assert rejected.fault == pb.FAULT_UNKNOWN_REQUEST
        assert "already answered or timed out" in rejected.detail

    asyncio.run(main())
