"""A bot's connection to the referee, and the seats that remote bots play through it.

One `BotConnection` per Play stream. It owns the stream's outbox (one writer), the bot's request
slots (never more requests outstanding than the bot declared), and the pending requests with
their clocks: a move's clock starts when its request is handed to the stream and stops when the
reply is read, so time spent queueing inside the platform never counts against a bot.

`RemoteSeat` is the `Seat` of match.py for a bot behind a connection; it translates engine values
to protocol messages through wire.py.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
from collections import deque

import grpc
from dataclasses import dataclass
from typing import Awaitable, Callable, Protocol

from arena.games.base import Action, State
from arena.results import (
    CRASH, DISCONNECT, MALFORMED, TIMEOUT, UNKNOWN_REQUEST, Fault,
)
from arena_sdk.proto import arena_pb2 as pb

from . import wire
from .match import Decision, MatchContext, SeatClock
from .reply import Reply

log = logging.getLogger(__name__)

FAULT_TO_PB = {
    TIMEOUT: pb.FAULT_TIMEOUT, "illegal_action": pb.FAULT_ILLEGAL_ACTION,
    UNKNOWN_REQUEST: pb.FAULT_UNKNOWN_REQUEST, DISCONNECT: pb.FAULT_DISCONNECT,
    CRASH: pb.FAULT_CRASH, MALFORMED: pb.FAULT_MALFORMED,
}

# A write that cannot complete in this long means the bot stopped reading its stream.
WRITE_TIMEOUT_S = 30.0
# How often a connection checks that its stream takes writes.
WATCHDOG_S = WRITE_TIMEOUT_S / 4
# Messages a connection may have waiting to be written (requests are bounded by the bot's slots;
# pongs and rejections of stray replies by the stray budget).
MAX_QUEUED_WRITES = 1000
# How long a lost stream's process is given to exit, to tell a crash from a disconnect.
CRASH_GRACE_S = 1.0
# Stray messages (pings, replies to unknown or already answered requests, unexpected message
# kinds) cost the referee work without being part of a move. A connection may send a burst of
# STRAY_BURST of them, then STRAY_PER_S a second; beyond that it is closed as a flood.
STRAY_BURST = 100
STRAY_PER_S = 10.0


class ConnectionClosed(Exception):
    """The bot's stream ended while a request was outstanding."""


@dataclass(slots=True)
class _Pending:
    future: Reply  # -> (pb.ActionReply, received_at); TimeoutError when it expires
    sent_at: float = -1.0  # loop time its write began: its clock started (-1: still queued)
    deadline: float = math.inf  # loop time by which its reply must arrive


# What goes to a bot's stream: a message, or bytes already encoded by wire.py.
Outgoing = pb.RefereeMessage | bytes
Writer = Callable[[Outgoing], Awaitable[None]]


class BotConnection:
    """The referee's side of one bot's Play stream.

    Writing: the stream takes one write at a time, so messages wait in an outbox, and the task
    that finds the stream idle writes them all (its own first, then whatever other matches
    queued meanwhile) before going back to its match. Nobody waits on a lock, and no writer task
    costs a hop through the event loop per message. A watchdog (one timer per connection, not
    one per write) disconnects a bot whose stream has not taken a write for WRITE_TIMEOUT_S: it
    stopped reading.
    """

    def __init__(self, bot_name: str, max_concurrent: int, write: Writer, peer: str = "",
                 batches: bool = False, token_hash: str = ""):
        self.bot_name = bot_name
        # The hash of the token the stream presented: whoever owns the referee checks it
        # against the bot's current token, and closes the stream once it is revoked.
        self.token_hash = token_hash
        self.max_concurrent = max_concurrent
        self.peer = peer
        # The bot reads ActionRequests: requests queued together go out as one message.
        self.batches = batches
        self._write = write
        # (message, pending request or None, seconds allowed for the reply); a request is
        # queued as its encoded ActionRequest (wire.request_body)
        self._outbox: deque[tuple[Outgoing, _Pending | None, float]] = deque()
        self._writer: asyncio.Task | None = None  # the task writing the outbox, if any
        self._write_started = 0.0
        self._stalled = False
        self._idle: asyncio.Future | None = None  # flush() waits on it
        self._loop = asyncio.get_running_loop()
        self._watchdog = self._loop.call_later(WATCHDOG_S, self._check_writes)
        # One timer for every request in flight, set for the earliest deadline among them
        # (not one timer per request: a request answered in time then costs no timer at all).
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = math.inf
        self._slots = asyncio.Semaphore(max_concurrent)
        self._pending: dict[tuple[str, int], _Pending] = {}
        self._ids = itertools.count(1)
        # match id -> request ids already answered or timed out
        self._answered: dict[str, set[int]] = {}
        self._seats: dict[str, "RemoteSeat"] = {}  # active matches on this connection
        self._stray_budget = float(STRAY_BURST)
        self._stray_at = self._loop.time()
        self.on_close: Callable[[], None] = lambda: None  # set by the stream's handler
        self.dispatching = False  # the reader is inside on_message (see server.py's on_close)
        self.closed = asyncio.Event()
        self.close_reason = ""
        self.close_fault = DISCONNECT
        # The status the referee ends the stream with when it is the one closing it.
        self.close_code = grpc.StatusCode.CANCELLED

    # ------------------------------------------------------------ writing

    async def deliver(self, msg: Outgoing, pending: _Pending | None = None,
                      allowed_s: float = 0.0) -> None:
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

    def send(self, msg: pb.RefereeMessage) -> None:
        """Send a message from code that cannot wait (the reader): in the background."""
        if self.closed.is_set():
            return
        if len(self._outbox) >= MAX_QUEUED_WRITES:
            self.close("the bot does not read its stream (too many queued messages)", MALFORMED,
                       grpc.StatusCode.RESOURCE_EXHAUSTED)
            return
        self._queue(msg, None, 0.0)
        if self._writer is None:
            self._drain_in_background()

    def _queue(self, msg: Outgoing, pending: _Pending | None, allowed_s: float) -> None:
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
            self.close(f"the bot did not read its stream for {WRITE_TIMEOUT_S:.0f} s",
                       MALFORMED, grpc.StatusCode.RESOURCE_EXHAUSTED)
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
        while outbox and outbox[0][1] is not None:
            body, pending, allowed_s = outbox.popleft()
            if pending.future.done():  # cancelled while queued
                continue
            self._start_clock(pending, now, allowed_s)
            bodies.append(body)
        return wire.requests_message(bodies)

    # ------------------------------------------------------------ clocks

    def _start_clock(self, pending: _Pending, now: float, allowed_s: float) -> None:
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

    def _check_writes(self) -> None:
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

    # ------------------------------------------------------------ reading

    def on_message(self, msg: pb.BotMessage) -> None:
        """For the stream's reader: one message from the bot. A reply runs the match that
        waits for it on at once (Reply.deliver_now), inside this call."""
        self.dispatching = True
        try:
            self._dispatch(msg)
        finally:
            self.dispatching = False

    def _dispatch(self, msg: pb.BotMessage) -> None:
        kind = msg.WhichOneof("kind")
        if kind == "action":
            self._on_reply(msg.action)
        elif kind == "action_replies":
            # Every reply of a batch arrived now, whatever the referee then does for the
            # replies before it (their matches run on here, one after the other).
            received_at = self._loop.time()
            replies = msg.action_replies.replies
            if not replies and self._stray():
                self.send(pb.RefereeMessage(rejected=pb.Rejected(
                    fault=pb.FAULT_MALFORMED, detail="an empty action_replies message; send "
                    "one or more replies in it")))
            for reply in replies:
                self._on_reply(reply, received_at)
                if self.closed.is_set():  # a flood, or a match's step found the stream broken
                    return
        elif kind == "ping":
            if self._stray():
                self.send(pb.RefereeMessage(pong=pb.Pong(nonce=msg.ping.nonce)))
        elif self._stray():
            self.send(pb.RefereeMessage(rejected=pb.Rejected(
                fault=pb.FAULT_MALFORMED,
                detail=f"unexpected {kind or 'empty'} message after hello; send action "
                       f"replies or pings")))

    def close(self, reason: str, fault: str = DISCONNECT,
              code: grpc.StatusCode = grpc.StatusCode.CANCELLED) -> None:
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

    # ------------------------------------------------------------ used by seats

    def attach(self, match_id: str, seat: "RemoteSeat") -> None:
        self._seats[match_id] = seat

    def detach(self, match_id: str) -> None:
        self._seats.pop(match_id, None)
        self._answered.pop(match_id, None)

    async def request(self, match_id: str, request: tuple[bytes, bytes], allowed_s: float,
                      slot_wait_s: float) -> tuple[pb.ActionReply, float]:
        """Send an action request (as wire.action_request encodes it; its request id is chosen
        here) and wait for its reply. Returns (reply, elapsed seconds from
        send to receipt). Raises TimeoutError (`allowed_s` after the send, or when no request
        slot frees within `slot_wait_s`) or ConnectionClosed."""
        if self.closed.is_set():
            raise ConnectionClosed(self.close_reason)
        slots = self._slots
        if slots.locked():
            await asyncio.wait_for(slots.acquire(), slot_wait_s)
        else:
            await slots.acquire()
        rid = next(self._ids)
        key = (match_id, rid)
        pending = _Pending(Reply(self._loop))
        self._pending[key] = pending
        try:
            await self.deliver(wire.request_body(request, rid), pending, allowed_s)
            reply, received_at = await pending.future
            return reply, received_at - pending.sent_at
        finally:
            if pending.sent_at < 0 and not pending.future.done():
                pending.future.cancel()  # cancelled while queued: the outbox skips it
            del self._pending[key]
            self._answered.setdefault(match_id, set()).add(rid)
            slots.release()

    # ------------------------------------------------------------ replies

    def _on_reply(self, reply: pb.ActionReply, received_at: float | None = None) -> None:
        if received_at is None:
            received_at = self._loop.time()
        key = (reply.match_id, reply.request_id)
        pending = self._pending.get(key)
        if pending is not None and not pending.future.done():
            # The match that waits runs on at once, in this turn of the reader, up to its
            # next await: no pass through the event loop between a reply and the next move.
            pending.future.deliver_now((reply, received_at))
            return
        if not self._stray():
            return
        seat = self._seats.get(reply.match_id)
        # A request still listed but settled timed out a moment ago (its waiter has not yet
        # run): its reply is late, like one to a request already answered or timed out.
        if pending is not None or reply.request_id in self._answered.get(reply.match_id, ()):
            # A late reply to a request that already timed out (the timeout was the fault) or a
            # second reply to an answered one: say so, record nothing more.
            detail = (f"request {reply.request_id} of match {reply.match_id} was already "
                      "answered or timed out")
            self.send(pb.RefereeMessage(rejected=pb.Rejected(
                match_id=reply.match_id, request_id=reply.request_id,
                fault=pb.FAULT_UNKNOWN_REQUEST, detail=detail)))
            return
        detail = (f"no request {reply.request_id} is open in match {reply.match_id!r} for "
                  f"bot {self.bot_name}")
        self.send(pb.RefereeMessage(rejected=pb.Rejected(
            match_id=reply.match_id, request_id=reply.request_id,
            fault=pb.FAULT_UNKNOWN_REQUEST, detail=detail)))
        if seat is not None:
            seat.record_unsolicited(detail)

    def _stray(self) -> bool:
        """Charge one stray message to the connection's budget (a token bucket). False, and
        the connection closed as a flood, when the budget is spent."""
        now = self._loop.time()
        budget = min(float(STRAY_BURST), self._stray_budget + (now - self._stray_at) * STRAY_PER_S)
        self._stray_at = now
        if budget < 1.0:
            self.close(f"flooding: more than {STRAY_BURST} stray messages (pings, replies to "
                       f"unknown or answered requests, unexpected messages) at once, or more "
                       f"than {STRAY_PER_S:g} a second after that", MALFORMED,
                       grpc.StatusCode.RESOURCE_EXHAUSTED)
            return False
        self._stray_budget = budget - 1.0
        return True


class BotDirectory:
    """Connected bots by name. A newer connection of a bot replaces the older one."""

    def __init__(self) -> None:
        self._connections: dict[str, BotConnection] = {}
        self._changed = asyncio.Condition()
        self._barred: set[str] = set()  # bots that will not connect (see bar)

    async def bar(self, name: str) -> None:
        """The bot may not play (suspended, removed): a seat waiting for it to connect, or that
        will, is told at once that it will not, until it authenticates again."""
        if name not in self._barred:
            self._barred.add(name)
            async with self._changed:
                self._changed.notify_all()

    def unbar(self, name: str) -> None:
        """The bot may connect again (it was launched again, or reinstated)."""
        self._barred.discard(name)

    async def add(self, conn: BotConnection) -> None:
        self.unbar(conn.bot_name)
        old = self._connections.get(conn.bot_name)
        if old is not None:
            old.close("replaced by a newer connection of the same bot", DISCONNECT,
                      grpc.StatusCode.ABORTED)
        async with self._changed:
            self._connections[conn.bot_name] = conn
            self._changed.notify_all()

    async def flush(self, timeout_s: float) -> None:
        """Wait (bounded) until what is queued for every connected bot is written: a match's
        MatchEnd goes out before the platform stops the bots."""
        live = self.connections()
        if live:
            await asyncio.gather(*(c.flush(timeout_s) for c in live))

    def remove(self, conn: BotConnection) -> None:
        if self._connections.get(conn.bot_name) is conn:
            del self._connections[conn.bot_name]

    def get(self, name: str) -> BotConnection | None:
        conn = self._connections.get(name)
        return conn if conn is not None and not conn.closed.is_set() else None

    def connected(self) -> list[str]:
        return [c.bot_name for c in self.connections()]

    def connections(self) -> list[BotConnection]:
        """Every open connection (one per bot)."""
        return [c for c in self._connections.values() if not c.closed.is_set()]

    async def wait_for(self, name: str, timeout_s: float) -> BotConnection | None:
        """The bot's live connection, waiting up to `timeout_s` for it to connect (None at
        once for a barred bot)."""
        async def wait() -> BotConnection | None:
            async with self._changed:
                await self._changed.wait_for(
                    lambda: self.get(name) is not None or name in self._barred)
                return self.get(name)

        try:
            return await asyncio.wait_for(wait(), timeout_s)
        except TimeoutError:
            return None


class BotProcessView(Protocol):
    """What a seat needs to know of a bot process the platform launched."""

    def exit_info(self) -> str | None: ...
    async def wait(self) -> int: ...


class RemoteSeat:
    """A seat played by a remote bot. `process` (for a bot the platform launched) tells a crash
    from a disconnect, and stops the wait for a bot that exited before it connected."""

    def __init__(self, directory: BotDirectory, bot_name: str,
                 process: BotProcessView | None = None):
        self.directory = directory
        self.bot_name = bot_name
        self.process = process
        self.bot_down = process.exit_info if process is not None else (lambda: None)
        self.conn: BotConnection | None = None
        self.ctx: MatchContext | None = None
        self.seat = -1
        self._unsolicited: list[str] = []

    async def start(self, ctx: MatchContext, seat: int) -> str | None:
        self.ctx, self.seat = ctx, seat
        # Usually the bot is connected already: then there is nothing to wait for.
        self.conn = self.directory.get(self.bot_name) or await self._wait_for_bot(ctx)
        if self.conn is None:
            return CRASH if self.bot_down() else DISCONNECT
        self.conn.attach(ctx.match_id, self)
        game = ctx.game
        await self._deliver(pb.RefereeMessage(match_start=pb.MatchStart(
            match_id=ctx.match_id, game=game.name, options=wire.options_to_pb(game), seat=seat,
            seat_names=ctx.seat_names, limits=wire.limits_to_pb(ctx.limits),
            bot_seed=bot_seed(ctx.seed, seat))))
        return None

    async def _wait_for_bot(self, ctx: MatchContext) -> BotConnection | None:
        """The bot's connection once it connects within the match's connect_ms; None if it
        does not, or if its process exits first."""
        waiting = asyncio.ensure_future(
            self.directory.wait_for(self.bot_name, ctx.limits.connect_ms / 1000))
        if self.process is not None:
            exited = asyncio.ensure_future(self.process.wait())
            await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
            exited.cancel()
        else:
            await asyncio.wait({waiting})
        if waiting.done():
            return waiting.result()
        waiting.cancel()  # the process exited before it connected
        return None

    async def _deliver(self, msg: pb.RefereeMessage) -> None:
        # Best effort: a bot that is gone is found out at its next move.
        try:
            await self.conn.deliver(msg)
        except ConnectionClosed:
            pass

    async def decide(self, state: State, seat: int, clock: SeatClock) -> Decision:
        decision = await self._ask(state, seat, clock)
        # Stray replies to requests never sent are faults too, charged without costing a move.
        decision.extra_faults = [(UNKNOWN_REQUEST, d) for d in self._unsolicited]
        self._unsolicited.clear()
        return decision

    async def _ask(self, state: State, seat: int, clock: SeatClock) -> Decision:
        ctx, conn = self.ctx, self.conn
        if conn is None or conn.closed.is_set():
            return await self._lost(0.0)
        game_name = ctx.game.name
        limits = ctx.limits
        request = wire.action_request(game_name, ctx.match_id, state.observation(seat),
                                      state.legal_actions(seat), limits.move_ms,
                                      int(clock.bank_ms))
        allowed_s = (limits.move_ms + clock.bank_ms) / 1000
        # A slot is held by this bot's other moves, each bounded by its own deadline.
        slot_wait_s = allowed_s * (conn.max_concurrent + 1) + 5
        try:
            reply, elapsed_s = await conn.request(ctx.match_id, request, allowed_s, slot_wait_s)
        except TimeoutError:
            clock.bank_ms = 0
            return Decision(None, allowed_s * 1000, TIMEOUT,
                            f"no reply within {limits.move_ms} ms plus the time bank")
        except ConnectionClosed:
            return await self._lost(0.0)
        elapsed_ms = elapsed_s * 1000
        over = elapsed_ms - limits.move_ms
        if over > 0:
            clock.bank_ms = max(0.0, clock.bank_ms - over)
        try:
            action = wire.action_from_pb(game_name, reply.action)
        except wire.WireError as err:
            return Decision(None, elapsed_ms, MALFORMED, str(err))
        return Decision(action, elapsed_ms)

    async def _lost(self, elapsed_ms: float) -> Decision:
        conn = self.conn
        if conn is not None and (conn.close_fault != DISCONNECT
                                 or conn.close_code != grpc.StatusCode.CANCELLED):
            # The referee closed the stream for a reason of its own (bytes that do not parse,
            # a flood, a newer connection, a revoked token): that is the fault, and an exit of
            # the bot only follows from it.
            return Decision(None, elapsed_ms, conn.close_fault, conn.close_reason, retire=True)
        if self.process is not None and self.bot_down() is None:
            # A stream that ends is often a process that is exiting: give it a moment to be
            # reaped, so a crash is recorded as a crash.
            try:
                await asyncio.wait_for(self.process.wait(), CRASH_GRACE_S)
            except TimeoutError:
                pass
        exit_info = self.bot_down()
        reason = self.conn.close_reason if self.conn else "not connected"
        if exit_info:
            return Decision(None, elapsed_ms, CRASH, f"{exit_info} ({reason})", retire=True)
        kind = self.conn.close_fault if self.conn else DISCONNECT
        return Decision(None, elapsed_ms, kind, reason, retire=True)

    def record_unsolicited(self, detail: str) -> None:
        # Charged with this seat's next decision (the match loop owns the fault list).
        self._unsolicited.append(detail)

    async def notify_fault(self, fault: Fault, played_instead: Action | None) -> None:
        conn = self.conn
        if conn is None or conn.closed.is_set():
            return
        msg = pb.Rejected(match_id=self.ctx.match_id, fault=FAULT_TO_PB.get(fault.kind, 0),
                          detail=fault.detail)
        if played_instead is not None:
            msg.played_instead.CopyFrom(wire.action_to_pb(self.ctx.game.name, played_instead))
        await self._deliver(pb.RefereeMessage(rejected=msg))

    async def end(self, state: State, scores, ranks, reason: str) -> None:
        conn = self.conn
        if conn is None:
            return
        # In the background: nothing of this match follows it on the stream, and the next
        # match need not wait for it.
        try:
            conn.send(pb.RefereeMessage(match_end=pb.MatchEnd(
                match_id=self.ctx.match_id, scores=scores, ranks=ranks, reason=reason,
                final_observation=wire.observation_to_pb(self.ctx.game.name,
                                                         state.observation(self.seat)))))
        finally:
            conn.detach(self.ctx.match_id)


def bot_seed(match_seed: int, seat: int) -> int:
    """The seed a seat's bot gets for its own randomness: fixed by the match seed and the seat,
    so a replayed match gives a seeded bot the same seed again."""
    return (match_seed * 1_000_003 + seat * 7919 + 12345) % (1 << 63)
