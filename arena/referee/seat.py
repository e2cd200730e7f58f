"""A seat played by a remote bot: `RemoteSeat`, the `Seat` of match.py for a bot behind a
connection. It waits for its bot to connect, asks it for each move (the move's time and what it
draws from the seat's time bank), tells a lost stream from a crash, and translates engine values
to protocol messages through wire.py.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

import grpc

from arena.deadlines import within
from arena.games.base import Action, State
from arena.results import CRASH, DISCONNECT, MALFORMED, TIMEOUT, UNKNOWN_REQUEST, Fault

from . import wire
from .connection import BotConnection, BotDirectory
from .match import Decision, MatchContext, SeatClock
from .transport import ConnectionClosed

# How long a lost stream's process is given to exit, to tell a crash from a disconnect. Its
# exit has to pass through bubblewrap and the guard before the platform reaps it, in a cgroup
# whose CPU weight may be low: on a loaded machine 1 s was not always enough, and a crash was
# recorded as a disconnect. Waited only for a launched bot whose stream ended by itself.
CRASH_GRACE_S = 3.0


class BotProcessView(Protocol):
    """What a seat needs to know of a bot process the platform launched."""

    def exit_info(self) -> str | None: ...
    async def wait(self) -> int: ...
    def deciding(self) -> AbstractContextManager[None]: ...
    def log_size(self) -> int: ...


class RemoteSeat:
    """A seat played by a remote bot. `process` (for a bot the platform launched) tells a crash
    from a disconnect, and stops the wait for a bot that exited before it connected."""

    def __init__(
        self, directory: BotDirectory, bot_name: str, process: BotProcessView | None = None
    ):
        self.directory = directory
        self.bot_name = bot_name
        self.process = process
        self.bot_down = process.exit_info if process is not None else (lambda: None)
        self.conn: BotConnection | None = None
        self.ctx: MatchContext | None = None
        self.seat = -1
        self._unsolicited: list[str] = []
        # A launched bot's log size as each of its replies came (or its move ended without
        # one): the k-th mark ends what it wrote while deciding its k-th move (host.py).
        self.log_marks: list[int] = []

    async def start(self, ctx: MatchContext, seat: int) -> str | None:
        self.ctx, self.seat = ctx, seat
        # Usually the bot is connected already: then there is nothing to wait for.
        self.conn = self.directory.get(self.bot_name) or await self._wait_for_bot(ctx)
        if self.conn is None:
            return CRASH if self.bot_down() else DISCONNECT
        self.conn.attach(ctx.match_id, self)
        await self._deliver(
            self.conn,
            wire.match_start(
                ctx.match_id, ctx.game, seat, ctx.seat_names, ctx.limits, ctx.bot_seeds[seat]
            ),
        )
        return None

    async def _wait_for_bot(self, ctx: MatchContext) -> BotConnection | None:
        """The bot's connection once it connects within the match's connect_ms; None if it
        does not, or if its process exits first."""
        waiting = asyncio.ensure_future(
            self.directory.wait_for(self.bot_name, ctx.limits.connect_ms / 1000)
        )
        if self.process is not None:
            exited = asyncio.ensure_future(self.process.wait())
            # The match waits for this bot: its start-up weighs as a decision (launcher.py).
            with self.process.deciding():
                await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
            exited.cancel()
        else:
            await asyncio.wait({waiting})
        if waiting.done():
            return waiting.result()
        waiting.cancel()  # the process exited before it connected
        return None

    async def _deliver(self, conn: BotConnection, msg: wire.Outgoing) -> None:
        # Best effort: a bot that is gone is found out at its next move.
        try:
            await conn.deliver(msg)
        except ConnectionClosed:
            pass

    async def decide(self, state: State, seat: int, clock: SeatClock) -> Decision:
        decision = await self._ask(state, seat, clock)
        if self.process is not None:
            self.log_marks.append(self.process.log_size())
        # Stray replies to requests never sent are faults too, charged without costing a move.
        decision.extra_faults = [(UNKNOWN_REQUEST, d) for d in self._unsolicited]
        self._unsolicited.clear()
        return decision

    async def _ask(self, state: State, seat: int, clock: SeatClock) -> Decision:
        ctx, conn = self.ctx, self.conn
        if conn is None or ctx is None or conn.closed.is_set():  # (ctx is set with conn)
            return await self._lost(0.0)
        game_name = ctx.game.name
        limits = ctx.limits
        request = wire.action_request(
            game_name,
            ctx.match_id,
            state.observation(seat),
            state.legal_actions(seat),
            limits.move_ms,
            int(clock.bank_ms),
        )
        allowed_s = (limits.move_ms + clock.bank_ms) / 1000
        # A slot is held by this bot's other moves, each bounded by its own deadline.
        slot_wait_s = allowed_s * (conn.max_concurrent + 1) + 5
        # A launched bot's CPU weight is a deciding bot's while it is asked (launcher.py).
        deciding = self.process.deciding() if self.process is not None else nullcontext()
        try:
            with deciding:
                reply, elapsed_s = await conn.request(ctx.match_id, request, allowed_s, slot_wait_s)
        except TimeoutError:
            clock.bank_ms = 0
            return Decision(
                None,
                allowed_s * 1000,
                TIMEOUT,
                f"no reply within {limits.move_ms} ms plus the time bank",
            )
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
        if conn is not None and (
            conn.close_fault != DISCONNECT or conn.close_code != grpc.StatusCode.CANCELLED
        ):
            # The referee closed the stream for a reason of its own (bytes that do not parse,
            # a flood, a newer connection, a revoked token): that is the fault, and an exit of
            # the bot only follows from it.
            return Decision(None, elapsed_ms, conn.close_fault, conn.close_reason, retire=True)
        if self.process is not None and self.bot_down() is None:
            # A stream that ends is often a process that is exiting: give it a moment to be
            # reaped, so a crash is recorded as a crash.
            try:
                await within(self.process.wait(), CRASH_GRACE_S)
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
        ctx, conn = self.ctx, self.conn
        if conn is None or ctx is None or conn.closed.is_set():
            return
        await self._deliver(
            conn,
            wire.rejected(
                fault.kind,
                fault.detail,
                ctx.match_id,
                game_name=ctx.game.name,
                played_instead=played_instead,
            ),
        )

    async def end(self, state: State, scores, ranks, reason: str) -> None:
        ctx, conn = self.ctx, self.conn
        if conn is None or ctx is None:
            return
        # In the background: nothing of this match follows it on the stream, and the next
        # match need not wait for it.
        try:
            conn.send(
                wire.match_end(
                    ctx.game.name,
                    ctx.match_id,
                    scores,
                    ranks,
                    reason,
                    state.observation(self.seat),
                )
            )
        finally:
            conn.detach(ctx.match_id)
