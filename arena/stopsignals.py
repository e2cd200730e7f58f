"""Ctrl-C and SIGTERM for the platform's event loops: while `on_stop_signals(stop)` is
entered, either signal calls `stop` (cancel a task, begin a graceful stop) instead of killing
the process, so that whoever owns bots and referees ends them. The SDK keeps its own (it does
not import arena)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
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


def reclaim_stop_signals() -> None:
    """Put Python's handling of the stop signals back in front of a native library's. Ray's
    core, once connected, installs Abseil's failure handler for SIGTERM: at a stop it prints a
    stack dump, hands the signal on, and arms a 3 s alarm that aborts the process (SIGABRT) in
    the middle of a graceful stop that takes longer. Re-setting each signal's Python handler
    (whatever it is: the event loop's, or the default) makes the kernel call Python's again.
    Only the main thread may set handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in STOP_SIGNALS:
        handler = signal.getsignal(sig)
        if handler is not None:  # None: set outside Python, not ours to put back
            signal.signal(sig, handler)
