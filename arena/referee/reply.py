"""A request's reply slot: awaited by the match that asked, filled by the stream's reader.

An asyncio.Future wakes the task that awaits it through the event loop: `set_result` schedules
the task, which runs one pass of the loop later. A reply is what a match waits for between two
moves, so that pass is on every move's path (one of the five passes a sequential decision
takes; scripts/bench.py referee measures it). A `FastReply` keeps the future protocol that a task
awaits (asyncio's duck-typed futures: `_asyncio_future_blocking`, `add_done_callback`,
`result`, `cancel`), and adds `deliver_now`: fill the reply and run the waiting task's next step
at once, in the reader's turn, up to the match's next await (typically its next write).
Everything else (a deadline expiring, a stream closing, the waiter being cancelled) wakes the
task through the loop, as a future does.

That is a speed trick resting on asyncio's internals (the private `_asyncio_future_blocking`
marker and `_enter_task`/`_leave_task`), so it sits behind one switch, FAST_REPLY; with it off,
a reply is a plain asyncio.Future (PlainReply) whose `deliver_now` is `set_result`.
tests/referee/test_reply.py holds the two to the same behaviour, but for when the waiter runs.
"""

from __future__ import annotations

import asyncio
import contextvars
from asyncio import tasks as _tasks
from typing import Any, Callable, Generator

# FAST_REPLY: Reply is FastReply, which runs the waiting match's next step inside the reader,
# instead of PlainReply (asyncio.Future). What it buys is one pass of the event loop per
# reply. `scripts/bench.py reply --seconds 10`, 2026-12-01: (a) 2.6 to 3.7 us of CPU per
# request/reply round trip in one loop (21.5 us against 24.1), under 1% of a referee decision's
# ~430 us; (b) the referee's own decision round trip, the two alternating in one run, medians
# 443 us against 464, but window by window plain - fast had a median of -10 us, spread over
# +-1.5 ms: on the loaded machine the referee cannot tell them apart. Little, for leaning on
# asyncio's internals: a candidate to go (with connection.py's and the handoff tests' owners).
FAST_REPLY = True

_PENDING, _DONE, _CANCELLED = 0, 1, 2

# asyncio's own hooks for running a task's step (CPython 3.11 to 3.14 have them). Without them
# deliver_now wakes the waiter through the loop, as set_result does.
_enter_task = getattr(_tasks, "_enter_task", None)
_leave_task = getattr(_tasks, "_leave_task", None)


class FastReply:
    """A reply slot that a task awaits as a future; `deliver_now` runs the task's next step at
    once (see the module's docstring)."""

    __slots__ = (
        "_loop",
        "_state",
        "_result",
        "_exception",
        "_callbacks",
        "_cancel_message",
        "_asyncio_future_blocking",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self._loop = loop
        self._state = _PENDING
        self._result: Any = None
        self._exception: BaseException | None = None
        self._callbacks: list[tuple[Callable[[FastReply], Any], contextvars.Context]] = []
        self._cancel_message: Any = None
        self._asyncio_future_blocking = False  # asyncio's marker of a future-like object

    # ------------------------------------------------------------ the future protocol

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def done(self) -> bool:
        return self._state != _PENDING

    def cancelled(self) -> bool:
        return self._state == _CANCELLED

    def result(self) -> Any:
        if self._state == _CANCELLED:
            raise self._make_cancelled_error()
        if self._state == _PENDING:
            raise asyncio.InvalidStateError("the reply has not arrived")
        if self._exception is not None:
            raise self._exception
        return self._result

    def exception(self) -> BaseException | None:
        if self._state == _CANCELLED:
            raise self._make_cancelled_error()
        if self._state == _PENDING:
            raise asyncio.InvalidStateError("the reply has not arrived")
        return self._exception

    def add_done_callback(
        self, fn: Callable[["FastReply"], Any], *, context: contextvars.Context | None = None
    ) -> None:
        if context is None:
            context = contextvars.copy_context()
        if self._state != _PENDING:
            self._loop.call_soon(fn, self, context=context)
        else:
            self._callbacks.append((fn, context))

    def remove_done_callback(self, fn: Callable[["FastReply"], Any]) -> int:
        kept = [(f, c) for f, c in self._callbacks if f != fn]
        removed = len(self._callbacks) - len(kept)
        self._callbacks = kept
        return removed

    def set_result(self, result: Any) -> None:
        self._finish(_DONE, result, None)
        self._schedule_callbacks()

    def set_exception(self, exception: BaseException) -> None:
        self._finish(_DONE, None, exception)
        self._schedule_callbacks()

    def cancel(self, msg: Any = None) -> bool:
        if self._state != _PENDING:
            return False
        self._state = _CANCELLED
        self._cancel_message = msg
        self._schedule_callbacks()
        return True

    def _make_cancelled_error(self) -> asyncio.CancelledError:
        # as asyncio.Future has it (gather asks a cancelled child for it)
        if self._cancel_message is None:
            return asyncio.CancelledError()
        return asyncio.CancelledError(self._cancel_message)

    def __await__(self) -> Generator[Any, None, Any]:
        if self._state == _PENDING:
            self._asyncio_future_blocking = True
            yield self  # the task registers its wakeup with add_done_callback
        return self.result()

    __iter__ = __await__

    # ------------------------------------------------------------ the reader's way in

    def deliver_now(self, result: Any) -> None:
        """Fill the reply and run its waiter's next step now. The caller's own task (the
        stream's reader), if any, steps aside meanwhile: asyncio allows one current task per
        loop, and the woken task's step enters and leaves as itself."""
        self._finish(_DONE, result, None)
        if _enter_task is None or _leave_task is None:
            self._schedule_callbacks()
            return
        callbacks, self._callbacks = self._callbacks, []
        if not callbacks:
            return  # nobody waits yet: the match finds the reply when it gets there
        loop = self._loop
        current = _tasks.current_task(loop)
        if current is not None:
            _leave_task(loop, current)
        try:
            for fn, context in callbacks:
                started: list[bool] = []
                try:
                    context.run(_start, started, fn, self)
                except (SystemExit, KeyboardInterrupt):
                    raise
                except BaseException as exc:
                    if not started:
                        # The context could not be entered here (it is the reader's own,
                        # already entered): wake the waiter through the loop, as a future does.
                        loop.call_soon(fn, self, context=context)
                    else:  # as the loop treats a failing callback
                        loop.call_exception_handler(
                            {
                                "message": f"exception in a reply's callback {fn!r}",
                                "exception": exc,
                                "future": self,
                            }
                        )
        finally:
            if current is not None:
                _enter_task(loop, current)

    # ------------------------------------------------------------ internals

    def _finish(self, state: int, result: Any, exception: BaseException | None) -> None:
        if self._state != _PENDING:
            raise asyncio.InvalidStateError("the reply is already settled")
        self._state, self._result, self._exception = state, result, exception

    def _schedule_callbacks(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for fn, context in callbacks:
            self._loop.call_soon(fn, self, context=context)


def _start(started: list[bool], fn: Callable[[FastReply], Any], reply: FastReply) -> Any:
    started.append(True)  # inside the context: it could be entered
    return fn(reply)


class PlainReply(asyncio.Future):
    """A reply slot that is an asyncio.Future: `deliver_now` is `set_result`, and the waiting
    task runs one pass of the loop later."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        super().__init__(loop=loop)

    def deliver_now(self, result: Any) -> None:
        self.set_result(result)


# What the referee builds for each request (connection.py), and its type.
Reply: type[FastReply] | type[PlainReply] = FastReply if FAST_REPLY else PlainReply
ReplySlot = FastReply | PlainReply
