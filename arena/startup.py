"""What the platform's own process sets up for itself at start, before it serves anything: its
descriptor limit, logging that a repeated error cannot flood, and a stack dump on SIGUSR1.

Called by the command line's entry (arena.cli.main) and the `serve` command; library code
never changes the process's limits or logging by itself.
"""

from __future__ import annotations

import asyncio
import faulthandler
import inspect
import logging
import resource
import signal
import sys
import threading
import time

log = logging.getLogger(__name__)


def raise_descriptor_limit() -> tuple[int, int]:
    """Raise this process's soft RLIMIT_NOFILE as far as its hard limit allows; return the
    (before, after) soft limits. A common default soft limit is 1,024, and the platform holds a
    descriptor per connection (bots, remote bots, spectators, web clients) besides its files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            # RLIM_INFINITY is refused above the kernel's nr_open: stay where we are.
            return soft, soft
        return soft, hard
    return soft, soft


class RepeatLimiter(logging.Filter):
    """Lets through one warning or error per `interval_s` for each kind (logger, level, the
    message's first line, exception type), and counts the ones it held back: the next record
    of that kind to pass says how many there were. A failing accept() (out of descriptors)
    repeated thousands of times a second then costs one line per interval, not megabytes of
    tracebacks. Records below WARNING all pass: they tell what happened, each once.

    Put it on handlers (a filter on a logger does not see records its children propagate)."""

    def __init__(self, interval_s: float = 10.0, clock=time.monotonic):
        super().__init__()
        self.interval_s = interval_s
        self._clock = clock
        self._lock = threading.Lock()  # handlers may be called from several threads
        self._kinds: dict[tuple, tuple[float, int]] = {}  # kind -> (last passed at, held back)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:  # what happened (a bot connected...): all kept
            return True
        exc = record.exc_info[0] if record.exc_info else None
        # The message's first line: asyncio's "Exception in callback X" goes on with the
        # handle's time, different in every record.
        kind = (record.name, record.levelno, record.getMessage().split("\n", 1)[0][:200], exc)
        now = self._clock()
        with self._lock:
            last, held = self._kinds.get(kind, (None, 0))
            if last is not None and now - last < self.interval_s:
                self._kinds[kind] = (last, held + 1)
                return False
            self._kinds[kind] = (now, 0)
            if len(self._kinds) > 10_000:  # many distinct messages: forget the oldest kinds
                for old in sorted(self._kinds, key=lambda k: self._kinds[k][0])[:5_000]:
                    del self._kinds[old]
        if held:
            record.msg = f"{record.msg} [{held} more like this in the last {now - last:.0f} s]"
        return True


def limit_repeats(interval_s: float = 10.0) -> RepeatLimiter:
    """Put one RepeatLimiter on every handler of the root logger and on logging's last resort
    (the handler that prints warnings and errors when nothing configured logging, as in the
    commands other than `serve`); handlers that have one keep theirs. Returns the limiter."""
    limiter = RepeatLimiter(interval_s)
    handlers = [*logging.getLogger().handlers]
    if logging.lastResort is not None:
        handlers.append(logging.lastResort)
    for handler in handlers:
        if not any(isinstance(f, RepeatLimiter) for f in handler.filters):
            handler.addFilter(limiter)
    return limiter


def configure_logging(level: int = logging.INFO, interval_s: float = 10.0) -> RepeatLimiter:
    """The platform's logging: records to stderr with their time, each kind of record at most
    once per `interval_s` (RepeatLimiter). Returns the limiter."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(message)s")
    return limit_repeats(interval_s)


DUMP_SIGNAL = signal.SIGUSR1


def dump_stacks_on_signal(sig: signal.Signals = DUMP_SIGNAL) -> bool:
    """On `sig` (`kill -USR1 PID`), write to stderr where the process is: every thread's
    Python stack (faulthandler, from the signal handler itself, so even a thread stuck in C
    answers), then the stack of every task of the event loop running in the main thread (what
    each await waits for, which a thread's stack does not show). For a process that hangs: the
    tests send it before they kill one (tests/cli.py). Whether it was set: only from the main
    thread, with a stderr that is a real file (not a test runner's capture), and not over a
    handler someone else set."""
    try:
        stderr_fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(sig) not in (signal.SIG_DFL, None):
        return False

    def dump_tasks(signum, frame) -> None:
        loop = asyncio._get_running_loop()  # the main thread's, if one runs there
        if loop is None:
            return
        tasks = asyncio.all_tasks(loop)
        print(f"--- {len(tasks)} asyncio tasks ---", file=sys.stderr)
        for task in tasks:
            print(repr(task), file=sys.stderr)
            # Only a Python coroutine's frames: asking gRPC's compiled (Cython) ones for theirs
            # crashes the process; their repr above says where they are.
            if inspect.iscoroutine(task.get_coro()):
                task.print_stack(limit=30, file=sys.stderr)
        sys.stderr.flush()

    signal.signal(sig, dump_tasks)
    # Chained: faulthandler dumps the threads at once, then Python's own handler runs the task
    # dump above between two bytecodes of the main thread.
    faulthandler.register(sig, file=stderr_fd, all_threads=True, chain=True)
    return True
