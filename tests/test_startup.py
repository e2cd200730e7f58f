"""Unit tests of arena.startup: the descriptor limit, the repeat-limited logging and the stack
dump on SIGUSR1."""

import logging
import subprocess
import sys

from arena.startup import RepeatLimiter, limit_repeats
from tests.cli import ROOT, dump_stacks_and_kill
from tests.timing import scaled


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def record(msg: str, *args, name: str = "asyncio", exc: type | None = None) -> logging.LogRecord:
    exc_info = (exc, exc(), None) if exc is not None else None
    return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, exc_info)


def test_a_repeated_record_passes_once_per_interval_with_a_count():
    clock = Clock()
    limiter = RepeatLimiter(interval_s=10, clock=clock)
    assert limiter.filter(record("socket.accept() out of system resource", exc=OSError))
    held = [limiter.filter(record("socket.accept() out of system resource", exc=OSError))]
    for _ in range(4999):
        clock.now += 0.001
        held.append(limiter.filter(record("socket.accept() out of system resource", exc=OSError)))
    assert not any(held)
    clock.now = 110.5
    again = record("socket.accept() out of system resource", exc=OSError)
    assert limiter.filter(again)
    assert "[5000 more like this in the last 10 s]" in again.getMessage()
    # The count starts over.
    clock.now = 121
    third = record("socket.accept() out of system resource", exc=OSError)
    assert limiter.filter(third) and "more like this" not in third.getMessage()


def test_kinds_are_told_apart_by_logger_message_and_exception():
    clock = Clock()
    limiter = RepeatLimiter(interval_s=10, clock=clock)
    assert limiter.filter(record("cut off bot %s", "a"))
    assert not limiter.filter(record("cut off bot %s", "a"))
    assert limiter.filter(record("cut off bot %s", "b"))  # another bot: another event
    assert limiter.filter(record("cut off bot %s", "a", name="arena.referee"))
    assert limiter.filter(record("cut off bot %s", "a", exc=OSError))
    assert limiter.filter(record("cut off bot %s", "a", exc=ValueError))
    # asyncio's "Exception in callback" goes on with the handle's time on its next line.
    assert limiter.filter(record("Exception in callback f()\nhandle: <when=1.5>", exc=ValueError))
    assert not limiter.filter(
        record("Exception in callback f()\nhandle: <when=2.5>", exc=ValueError)
    )


def test_records_below_warning_all_pass():
    limiter = RepeatLimiter(interval_s=10, clock=Clock())
    info = [record("bot %s disconnected", "a") for _ in range(3)]
    for r in info:
        r.levelno, r.levelname = logging.INFO, "INFO"
    assert all(limiter.filter(r) for r in info)


def test_the_limiter_on_a_handler_keeps_a_flood_to_one_line(tmp_path):
    # A real logger and handler: 10,000 errors with tracebacks in a burst write one.
    path = tmp_path / "log.txt"
    handler = logging.FileHandler(path)
    handler.addFilter(RepeatLimiter(interval_s=60))
    logger = logging.getLogger("test_startup.flood")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for _ in range(10_000):
            try:
                raise OSError(24, "Too many open files")
            except OSError:
                logger.exception("accept failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = path.read_text()
    assert text.count("accept failed") == 1
    assert text.count("Traceback") == 1


def test_the_soft_descriptor_limit_is_raised_to_the_hard_limit():
    # In a child, so this test process keeps its own limits.
    code = (
        "import resource, sys\n"
        "from arena.startup import raise_descriptor_limit\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "before, after = raise_descriptor_limit()\n"
        "print(before, after, resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after, now, hard = (int(x) for x in out.stdout.split())
    assert before == 256
    assert after == now == hard


def test_the_limiter_goes_on_the_last_resort_once(monkeypatch):
    # Commands that configure no logging print through logging.lastResort.
    last_resort = logging.StreamHandler()
    monkeypatch.setattr(logging, "lastResort", last_resort)
    # Not on this test process's own root handlers (pytest's log capture, which later tests
    # read): a limiter left there would hold back their repeated records.
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    limit_repeats()
    limit_repeats()
    assert [type(f) for f in last_resort.filters] == [RepeatLimiter]


def test_sigusr1_writes_every_threads_and_tasks_stack_to_stderr(tmp_path):
    """A process that seems stuck says where it is (arena.startup.dump_stacks_on_signal, set
    by the CLI's entry): its threads' stacks and its asyncio tasks', named, on stderr."""
    script = tmp_path / "stuck.py"
    script.write_text(
        "import asyncio\n"
        "from arena.startup import dump_stacks_on_signal\n"
        "assert dump_stacks_on_signal()\n"
        "async def waiting_for_godot():\n"
        "    await asyncio.Event().wait()\n"
        "async def main():\n"
        "    task = asyncio.ensure_future(waiting_for_godot())\n"
        "    await asyncio.sleep(0)\n"
        "    print('ready', flush=True)\n"
        "    await task\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        _, stderr = dump_stacks_and_kill(proc, wait_s=scaled(1))
    finally:
        proc.kill()
        proc.wait()
    assert "most recent call first" in stderr  # faulthandler's thread dump
    assert "asyncio tasks ---" in stderr
    assert "waiting_for_godot" in stderr and "asyncio.Event().wait()" in stderr, stderr
