"""A bot's connection to the referee: what comes in on its Play stream, and its requests.

One `BotConnection` per Play stream. On top of the stream's writing side (transport.py) it owns
the bot's request slots (never more requests outstanding than the bot declared), the request
ids and which match each belongs to, the replies that settle them, and the stray budget (pings
and replies to nothing cost the referee work: beyond a budget, the bot is closed as a flood).
`BotDirectory` holds the connected bots by name. The seats that play through a connection are in
seat.py.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING, Callable

import grpc

from arena.deadlines import within
from arena.results import DISCONNECT, MALFORMED, UNKNOWN_REQUEST

from . import wire
from .lanes import bot_of
from .transport import ConnectionClosed, Pending, Transport, Writer

if TYPE_CHECKING:
    from .seat import RemoteSeat

# Stray messages (pings, replies to unknown or already answered requests, unexpected message
# kinds) cost the referee work without being part of a move. A connection may send a burst of
# STRAY_BURST of them, then STRAY_PER_S a second; beyond that it is closed as a flood.
STRAY_BURST = 100
STRAY_PER_S = 10.0


class BotConnection(Transport):
    """The referee's side of one bot's Play stream (its writing side is Transport's)."""

    def __init__(
        self,
        bot_name: str,
        max_concurrent: int,
        write: Writer,
        peer: str = "",
        batches: bool = False,
        token_hash: str = "",
    ):
        super().__init__(write, batches)
        self.bot_name = bot_name
        # The hash of the token the stream presented: whoever owns the referee checks it
        # against the bot's current token, and closes the stream once it is revoked.
        self.token_hash = token_hash
        self.max_concurrent = max_concurrent
        self.peer = peer
        self._slots = asyncio.Semaphore(max_concurrent)
        self._ids = itertools.count(1)
        # match id -> request ids already answered or timed out
        self._answered: dict[str, set[int]] = {}
        self._seats: dict[str, "RemoteSeat"] = {}  # active matches on this connection
        self._stray_budget = float(STRAY_BURST)
        self._stray_at = self._loop.time()

    # ------------------------------------------------------------ reading

    def on_message(self, msg: wire.BotMessage) -> None:
        """For the stream's reader: one message from the bot (as wire.read_bot_message reads
        it). A reply settles the future its match awaits; the match runs on at the loop's
        next pass."""
        self._dispatch(msg)

    def _dispatch(self, msg: wire.BotMessage) -> None:
        # msg.__class__ is X: the quickest test, and one the type checker narrows by
        if msg.__class__ is wire.MoveReply:
            self._on_reply(msg)
        elif msg.__class__ is wire.MoveReplies:
            # Every reply of a batch arrived now, whatever the referee then does for the
            # replies before it (their matches run on here, one after the other).
            received_at = self._loop.time()
            replies = msg.replies
            if not replies and self._stray():
                self.send(
                    wire.rejected(
                        MALFORMED, "an empty action_replies message; send one or more replies in it"
                    )
                )
            for reply in replies:
                self._on_reply(reply, received_at)
                if self.closed.is_set():  # a flood, or a match's step found the stream broken
                    return
        elif msg.__class__ is wire.Ping:
            if self._stray():
                self.send(wire.pong(msg.nonce))
        elif self._stray():  # a second Hello, or a kind the referee does not take
            self.send(
                wire.rejected(
                    MALFORMED,
                    f"unexpected {msg.kind or 'empty'} message after hello; send action "
                    f"replies or pings",
                )
            )

    # ------------------------------------------------------------ used by seats

    def attach(self, match_id: str, seat: "RemoteSeat") -> None:
        self._seats[match_id] = seat

    def detach(self, match_id: str) -> None:
        self._seats.pop(match_id, None)
        self._answered.pop(match_id, None)

    async def request(
        self, match_id: str, request: tuple[bytes, bytes], allowed_s: float, slot_wait_s: float
    ) -> tuple[wire.MoveReply, float]:
        """Send an action request (as wire.action_request encodes it; its request id is chosen
        here) and wait for its reply. Returns (reply, elapsed seconds from
        send to receipt). Raises TimeoutError (`allowed_s` after the send, or when no request
        slot frees within `slot_wait_s`) or ConnectionClosed."""
        if self.closed.is_set():
            raise ConnectionClosed(self.close_reason)
        slots = self._slots
        if slots.locked():
            await within(slots.acquire(), slot_wait_s)
        else:
            await slots.acquire()
        rid = next(self._ids)
        key = (match_id, rid)
        pending = Pending(self._loop.create_future())
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

    def _on_reply(self, reply: wire.MoveReply, received_at: float | None = None) -> None:
        if received_at is None:
            received_at = self._loop.time()
        key = (reply.match_id, reply.request_id)
        pending = self._pending.get(key)
        if pending is not None and not pending.future.done():
            pending.future.set_result((reply, received_at))
            return
        if not self._stray():
            return
        seat = self._seats.get(reply.match_id)
        # A request still listed but settled timed out a moment ago (its waiter has not yet
        # run): its reply is late, like one to a request already answered or timed out.
        if pending is not None or reply.request_id in self._answered.get(reply.match_id, ()):
            # A late reply to a request that already timed out (the timeout was the fault) or a
            # second reply to an answered one: say so, record nothing more.
            detail = (
                f"request {reply.request_id} of match {reply.match_id} was already "
                "answered or timed out"
            )
            self.send(wire.rejected(UNKNOWN_REQUEST, detail, reply.match_id, reply.request_id))
            return
        detail = (
            f"no request {reply.request_id} is open in match {reply.match_id!r} for "
            f"bot {bot_of(self.bot_name)}"
        )
        self.send(wire.rejected(UNKNOWN_REQUEST, detail, reply.match_id, reply.request_id))
        if seat is not None:
            seat.record_unsolicited(detail)

    def _stray(self) -> bool:
        """Charge one stray message to the connection's budget (a token bucket). False, and
        the connection closed as a flood, when the budget is spent."""
        now = self._loop.time()
        budget = min(float(STRAY_BURST), self._stray_budget + (now - self._stray_at) * STRAY_PER_S)
        self._stray_at = now
        if budget < 1.0:
            self.close(
                f"flooding: more than {STRAY_BURST} stray messages (pings, replies to "
                f"unknown or answered requests, unexpected messages) at once, or more "
                f"than {STRAY_PER_S:g} a second after that",
                MALFORMED,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
            )
            return False
        self._stray_budget = budget - 1.0
        return True


class BotDirectory:
    """Connected bots by name. A newer connection of a bot replaces the older one."""

    def __init__(self) -> None:
        self._connections: dict[str, BotConnection] = {}
        self._changed = asyncio.Condition()
        self._barred: set[str] = set()  # bots that will not connect (see bar)
        # Told the name of each bot that connects (the host: a launched bot's start-up is over).
        self.on_connect: Callable[[str], None] | None = None

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
            old.close(
                "replaced by a newer connection of the same bot",
                DISCONNECT,
                grpc.StatusCode.ABORTED,
            )
        async with self._changed:
            self._connections[conn.bot_name] = conn
            self._changed.notify_all()
        if self.on_connect is not None:
            self.on_connect(conn.bot_name)

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
                    lambda: self.get(name) is not None or name in self._barred
                )
                return self.get(name)

        try:
            return await within(wait(), timeout_s)
        except TimeoutError:
            return None
