"""Ctrl-C and SIGTERM for the platform's event loops: while `on_stop_signals(stop)` is
entered, either signal calls `stop` (cancel a task, begin a graceful stop) instead of killing
the process, so that whoever owns bots and referees ends them. The SDK keeps its own (it does
not import arena)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Callable, Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def on_stop_signals(stop: Callable[[], object]) -> Iterator[None]:
    """Call `stop` on SIGINT or SIGTERM while inside; the default handling is back after.
    Must be entered with the event loop running (in the main thread)."""
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop)
    try:
        yield
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
