"""The reply slot (arena/referee/reply.py): a task awaits it as it would a future; the reader's
`deliver_now` runs that task's next step at once instead of one pass of the loop later. Every
test but the first runs against both sides of the FAST_REPLY switch (FastReply, and PlainReply,
a plain asyncio.Future): they behave alike but for when the waiter runs."""

import asyncio
import contextvars

import pytest

from arena.referee import reply as reply_module
from arena.referee.reply import FastReply, PlainReply

who = contextvars.ContextVar("who", default="nobody")


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(params=[FastReply, PlainReply], ids=["fast", "plain"])
def Reply(request):
    return request.param


def test_the_switch_picks_the_reply_the_referee_builds():
    assert reply_module.Reply is (FastReply if reply_module.FAST_REPLY else PlainReply)


def test_deliver_now_runs_the_waiter_before_it_returns_and_inside_the_waiters_own_task():
    async def main():
        loop = asyncio.get_running_loop()
        reply = FastReply(loop)
        seen = []

        async def waiter():
            who.set("waiter")
            value = await reply
            seen.append((value, asyncio.current_task() is waiting, who.get()))
            await asyncio.sleep(0)  # its next real await: control goes back to the reader
            seen.append("after its next await")

        waiting = asyncio.ensure_future(waiter())
        await asyncio.sleep(0)  # the waiter is now blocked on the reply

        async def reader():
            reply.deliver_now("the move")
            # No pass of the loop has happened, yet the waiter has taken the reply...
            assert seen == [("the move", True, "waiter")]
            # ...and the reader is its own task again, in its own context.
            assert asyncio.current_task() is reading
            assert who.get() == "nobody"

        reading = asyncio.ensure_future(reader())
        await reading
        await waiting
        assert seen[-1] == "after its next await"

    run(main())


def test_a_plain_reply_runs_the_waiter_one_pass_later_in_its_own_task():
    async def main():
        reply = PlainReply(asyncio.get_running_loop())
        seen = []

        async def waiter():
            who.set("waiter")
            value = await reply
            seen.append((value, asyncio.current_task() is waiting, who.get()))

        waiting = asyncio.ensure_future(waiter())
        await asyncio.sleep(0)
        reply.deliver_now("the move")
        assert seen == []  # scheduled, not run in the reader's turn
        await waiting
        assert seen == [("the move", True, "waiter")]

    run(main())


def test_a_reply_delivered_before_anyone_waits_is_taken_without_waiting(Reply):
    async def main():
        reply = Reply(asyncio.get_running_loop())
        reply.deliver_now(7)
        assert reply.done() and reply.result() == 7
        assert await reply == 7

    run(main())


def test_an_exception_wakes_the_waiter_through_the_loop(Reply):
    async def main():
        reply = Reply(asyncio.get_running_loop())
        task = asyncio.ensure_future(_await(reply))
        await asyncio.sleep(0)
        reply.set_exception(TimeoutError())
        assert not task.done()  # scheduled, not run in the caller's turn
        with pytest.raises(TimeoutError):
            await task

    run(main())


async def _await(reply):
    return await reply


def test_cancelling_the_waiting_task_cancels_the_reply(Reply):
    async def main():
        reply = Reply(asyncio.get_running_loop())
        task = asyncio.ensure_future(_await(reply))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert reply.cancelled() and reply.done()
        with pytest.raises(asyncio.CancelledError):
            reply.result()

    run(main())


def test_a_reply_is_settled_once(Reply):
    async def main():
        reply = Reply(asyncio.get_running_loop())
        reply.deliver_now(1)
        with pytest.raises(asyncio.InvalidStateError):
            reply.deliver_now(2)
        with pytest.raises(asyncio.InvalidStateError):
            reply.set_exception(TimeoutError())
        assert reply.result() == 1
        assert not reply.cancel()

    run(main())


def test_an_unsettled_reply_has_no_result(Reply):
    async def main():
        reply = Reply(asyncio.get_running_loop())
        with pytest.raises(asyncio.InvalidStateError):
            reply.result()
        with pytest.raises(asyncio.InvalidStateError):
            reply.exception()

    run(main())


def test_a_failing_callback_is_reported_to_the_loop_and_the_reader_goes_on(Reply):
    async def main():
        loop = asyncio.get_running_loop()
        reported = []
        loop.set_exception_handler(lambda _loop, context: reported.append(context["exception"]))
        reply = Reply(loop)
        reply.add_done_callback(lambda r: 1 / 0)
        calls = []
        reply.add_done_callback(lambda r: calls.append(r.result()))
        reply.deliver_now("x")
        if Reply is PlainReply:
            assert calls == [] and reported == []  # the callbacks run one pass later
            await asyncio.sleep(0)
        assert calls == ["x"]
        assert len(reported) == 1 and isinstance(reported[0], ZeroDivisionError)
        assert asyncio.current_task() is not None  # the reader's task is current again

    run(main())


def test_asyncio_wait_accepts_a_reply_and_a_removed_callback_is_not_called(Reply):
    async def main():
        loop = asyncio.get_running_loop()
        reply = Reply(loop)
        called = []
        callback = called.append
        reply.add_done_callback(callback)
        assert reply.remove_done_callback(callback) == 1
        loop.call_soon(reply.set_result, "late")
        done, _ = await asyncio.wait({asyncio.ensure_future(_await(reply))}, timeout=5)
        assert [t.result() for t in done] == ["late"]
        assert called == []

    run(main())
