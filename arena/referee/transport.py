"""The writing side of a bot's Play stream, and the clocks of the requests on it.

`Transport` owns the stream's outbox (one write at a time; requests queued together go out as
one message to a bot that reads batches), the write watchdog (a bot that stops reading its
stream is disconnected), the clocks of the requests in flight (a move's clock starts when its
request is handed to the stream, so time spent queueing inside the platform never counts against
a bot; one timer serves the earliest deadline), and the stream's closing: a closed stream fails
every request in flight with ConnectionClosed. `BotConnection` (connection.py) builds on it.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass
from typing import Awaitable, Callable

import grpc

from arena.results import DISCONNECT, MALFORMED

from . import wire

# A write that cannot complete in this long means the bot stopped reading its stream.
WRITE_TIMEOUT_S = 30.0
# How often a connection checks that its stream takes writes.
WATCHDOG_S = WRITE_TIMEOUT_S / 4
# Messages a connection may have waiting to be written (requests are bounded by the bot's slots;
# pongs and rejections of stray replies by the stray budget).
MAX_QUEUED_WRITES = 1000


class ConnectionClosed(Exception):
    """The bot's stream ended while a request was outstanding."""


@dataclass(slots=True)
class Pending:
    """A request in flight."""

    future: asyncio.Future  # -> (wire.MoveReply, received_at); TimeoutError when it expires
    sent_at: float = -1.0  # loop time its write began: its clock started (-1: still queued)
    deadline: float = math.inf  # loop time by which its reply must arrive


Writer = Callable[[wire.Outgoing], Awaitable[None]]


class Transport:
    """Writing to one bot's stream, and closing it.

    The stream takes one write at a time, so messages wait in an outbox, and the task that
    finds the stream idle writes them all (its own first, then whatever other matches queued
    meanwhile) before going back to its match. Nobody waits on a lock, and no writer task costs
    a hop through the event loop per message. A watchdog (one timer per connection, not one per
    write) disconnects a bot whose stream has not taken a write for WRITE_TIMEOUT_S: it stopped
    reading.
    """

    def __init__(self, write: Writer, batches: bool = False):
        # The bot reads ActionRequests: requests queued together go out as one message.
        self.batches = batches
        self._write = write
        # (message, pending request or None, seconds allowed for the reply); a request is
        # queued as its encoded ActionRequest (wire.request_body)
        self._outbox: deque[tuple[wire.Outgoing, Pending | None, float]] = deque()
        self._writer: asyncio.Task | None = None  # the task writing the outbox, if any
        self._write_started = 0.0
        self._stalled = False
        self._idle: asyncio.Future | None = None  # flush() waits on it
        self._loop = asyncio.get_running_loop()
        self._watchdog = self._loop.call_later(WATCHDOG_S, self._check_writes)
        # Requests in flight, by (match id, request id): the connection adds and removes them;
        # their clocks are kept here.
        self._pending: dict[tuple[str, int], Pending] = {}
        # One timer for every request in flight, set for the earliest deadline among them
        # (not one timer per request: a request answered in time then costs no timer at all).
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = math.inf
        self.on_close: Callable[[], None] = lambda: None  # set by the stream's handler
        self.closed = asyncio.Event()
        self.close_reason = ""
        self.close_fault = DISCONNECT
        # The status the referee ends the stream with when it is the one closing it.
        self.close_code = grpc.StatusCode.CANCELLED

    # ------------------------------------------------------------ writing

    async def deliver(
        self, msg: wire.Outgoing, pending: Pending | None = None, allowed_s: float = 0.0
    ) -> None:
        """Send one message (for a request: its encoded ActionRequest, and its `pending`
        entry). For a request, its clock starts when its write begins (after any
        wait in the outbox, which is the platform's queue, not the bot's time). Returns once the
        message is written, or queued behind the write in progress; a stream that fails closes
        the connection, which fails every pending request with ConnectionClosed."""
        if self.closed.is_set():
            raise ConnectionClosed(self.close_reason)
        self._queue(msg, pending, allowed_s)
        if self._writer is None:
            await self._drain()

    def send(self, msg: wire.Outgoing) -> None:
        """Send a message from code that cannot wait (the reader): in the background."""
        if self.closed.is_set():
            return
        if len(self._outbox) >= MAX_QUEUED_WRITES:
            self.close(
                "the bot does not read its stream (too many queued messages)",
                MALFORMED,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
            )
            return
        self._queue(msg, None, 0.0)
        if self._writer is None:
            self._drain_in_background()

    def _queue(self, msg: wire.Outgoing, pending: Pending | None, allowed_s: float) -> None:
        # Every message to the bot passes here, in the context of the code that sends it.
        self._outbox.append((msg, pending, allowed_s))

    def _drain_in_background(self) -> None:
        self._writer = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        outbox, loop = self._outbox, self._loop
        self._writer = task = asyncio.current_task(loop)
        try:
            while outbox:
                msg, pending, allowed_s = outbox.popleft()
                self._write_started = now = loop.time()
                if pending is not None:
                    if pending.future.done():
                        continue
                    self._start_clock(pending, now, allowed_s)
                    if self.batches and outbox and outbox[0][1] is not None:
                        msg = self._batch(msg, now)
                    else:
                        msg = wire.request_message(msg)
                await self._write(msg)
        except asyncio.CancelledError:
            if not (self._stalled and task is not None and task.uncancel() == 0):
                raise  # not the watchdog's doing: the task's own cancellation
            self.close(
                f"the bot did not read its stream for {WRITE_TIMEOUT_S:.0f} s",
                MALFORMED,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
            )
        except Exception as err:  # the stream broke under us
            self.close(f"the stream failed: {err}")
        finally:
            self._writer = None
            if self.closed.is_set():
                outbox.clear()
            elif outbox:  # this task was cancelled: others' messages still go out
                self._drain_in_background()
            if self._writer is None and self._idle is not None:
                if not self._idle.done():
                    self._idle.set_result(None)
                self._idle = None

    def _batch(self, first: bytes, now: float) -> bytes:
        """The request `first` and those queued right behind it, as one ActionRequests
        message (order kept: a match's start or end, which are not requests, ends the run);
        every clock starts now. A batch holds at most the bot's slots' worth, so it stays far
        below the message size limit."""
        outbox = self._outbox
        bodies = [first]
        while outbox:
            body, pending, allowed_s = outbox[0]
            if pending is None:
                break
            outbox.popleft()
            if pending.future.done():  # cancelled while queued
                continue
            self._start_clock(pending, now, allowed_s)
            bodies.append(body)
        return wire.requests_message(bodies)

    # ------------------------------------------------------------ clocks

    def _start_clock(self, pending: Pending, now: float, allowed_s: float) -> None:
        """A request is being written: its move's clock starts now."""
        pending.sent_at = now
        deadline = pending.deadline = now + allowed_s
        if deadline < self._deadline_at:
            self._arm_deadline(deadline)

    def _arm_deadline(self, at: float) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        self._deadline_at = at
        self._deadline_timer = self._loop.call_at(at, self._expire_due)

    def _expire_due(self) -> None:
        """The earliest deadline set has come: time out every request in flight that is due,
        and wait for the next deadline, if any."""
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()  # when called other than by the timer itself
        self._deadline_timer, self._deadline_at = None, math.inf
        now = self._loop.time()
        earliest = math.inf
        for pending in self._pending.values():
            if pending.future.done() or pending.sent_at < 0:
                continue
            if pending.deadline <= now:
                pending.future.set_exception(TimeoutError())  # wakes its task through the loop
            elif pending.deadline < earliest:
                earliest = pending.deadline
        if earliest < math.inf:
            self._arm_deadline(earliest)

    # ------------------------------------------------------------ the watchdog, flushing

    def _check_writes(self) -> None:
        """The watchdog's tick: a write in progress for longer than WRITE_TIMEOUT_S is
        cancelled, and _drain closes the connection (the bot stopped reading)."""
        if self.closed.is_set():
            return
        if self._writer is not None and self._loop.time() - self._write_started > WRITE_TIMEOUT_S:
            self._stalled = True
            self._writer.cancel()
        self._watchdog = self._loop.call_later(WATCHDOG_S, self._check_writes)

    async def flush(self, timeout_s: float = 5.0) -> None:
        """Wait (bounded) for the messages queued so far, so that a bot that closes its side
        still gets the answers to its last messages."""
        if self._writer is None:
            return
        if self._idle is None:
            self._idle = self._loop.create_future()
        await asyncio.wait({self._idle}, timeout=timeout_s)

    # ------------------------------------------------------------ closing

    def close(
        self,
        reason: str,
        fault: str = DISCONNECT,
        code: grpc.StatusCode = grpc.StatusCode.CANCELLED,
    ) -> None:
        """End the connection: why (`reason`), the fault it is to a seat whose bot it was, and
        the status the referee ends the stream with. Every request in flight fails with
        ConnectionClosed; the stream's handler is told (`on_close`)."""
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.close_fault = fault
        self.close_code = code
        self.closed.set()
        self._watchdog.cancel()
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(ConnectionClosed(reason))
        self.on_close()
