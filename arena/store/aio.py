"""AsyncStore: a Store on its own writer thread, for async code (the datasette pattern)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .schema import DEFAULT_PATH

if TYPE_CHECKING:
    import concurrent.futures

    from . import Store

T = TypeVar("T")


def _wrap(future):
    import asyncio  # imported late: only async callers need it

    return asyncio.wrap_future(future)


class AsyncStore:
    """A Store on its own writer thread, for async code: every call runs there, in order, and
    the caller awaits its result, so SQLite never blocks the event loop and there is exactly one
    writer (the datasette pattern). Open with `await AsyncStore.open(path)`; close with
    `await store.close()` (or `async with`).

    `await astore.run(Store.method, *args)` runs `Store.method(store, *args)` (any function
    whose first argument is the Store) on the writer thread, as datasette's
    `execute_write_fn`; the Store's own methods are the whole API. Threads may use `submit` for
    a concurrent.futures.Future instead."""

    def __init__(self, executor: concurrent.futures.ThreadPoolExecutor, store: Store):
        self._executor = executor
        self.store = store  # touch only from the writer thread (through run/submit)
        self.closed = False  # set by close(): no call runs after it

    @classmethod
    async def open(cls, path: str | os.PathLike[str] = DEFAULT_PATH, **kwargs: Any) -> "AsyncStore":
        import concurrent.futures  # here: `arena rankings` need not pay for it

        from . import Store

        executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="arena-store")
        try:
            # The connection must be made on the thread that will use it.
            store = await _wrap(executor.submit(Store, path, **kwargs))
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(executor, store)

    def submit(
        self, fn: Callable[..., T], *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        return self._executor.submit(fn, self.store, *args, **kwargs)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await _wrap(self.submit(fn, *args, **kwargs))

    async def close(self) -> None:
        self.closed = True
        try:
            await self.run(lambda store: store.close())
        finally:
            self._executor.shutdown(wait=True)

    async def __aenter__(self) -> "AsyncStore":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
