"""A sandbox's PID namespace is found by its number (the `/proc/PID/ns/pid` link), and the
kernel hands a freed number to the next namespace made on the host: the next bot's sandbox.
Seen under load (fresh-clone run T, beside two CPU spinners): an honest bot's new lane exited
0.1 s after it connected, by SIGTERM (its SDK logged "stopped"), and was charged with a crash."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys

from arena.botcommand import BotCommand
from arena.referee.launcher import BotProcess, ResourceLimits, bot_environment
from tests.timing import scaled

SANDBOXED = ResourceLimits(control_group=False)  # the sandbox alone: what this is about

# Writes TERM to its log at each SIGTERM, and sleeps on: only a SIGKILL ends it.
SLEEPER = (
    "import signal, time\n"
    "signal.signal(signal.SIGTERM, lambda *_: print('TERM', flush=True))\n"
    "print('UP', flush=True)\n"
    "while True:\n"
    "    time.sleep(600)\n"
)


def test_stopping_a_bot_whose_sandbox_ended_leaves_the_next_sandbox_alone(tmp_path, run):
    def bot(name: str) -> BotProcess:
        return BotProcess(
            name,
            BotCommand((sys.executable, "-c", SLEEPER), None),
            tmp_path / "bots" / name,
            tmp_path / "logs" / f"{name}.log",
            bot_environment("tok", tmp_path / "bots" / name),
            tmp_path / "referee.sock",
            SANDBOXED,
        )

    async def up(proc: BotProcess) -> None:
        await proc.start()
        deadline = asyncio.get_running_loop().time() + scaled(30)
        while "UP" not in proc.log_tail():
            assert proc.exit_info() is None, proc.log_tail()
            assert asyncio.get_running_loop().time() < deadline, "the sleeper did not start"
            await asyncio.sleep(0.05)

    async def main() -> tuple[bool, str, list[int]]:
        (tmp_path / "logs").mkdir()
        referee = socket.socket(socket.AF_UNIX)  # (the socket a sandbox is given: never used)
        referee.bind(str(tmp_path / "referee.sock"))
        first, second = bot("first"), bot("second")
        await up(first)
        assert first.sandbox_pids()  # (its namespace found while it runs, and kept)
        ended_namespace = first._pid_namespace()
        # Its sandbox ends by itself (as in a crash): its init killed, the whole namespace ends.
        assert first._init_pid is not None
        os.kill(first._init_pid, signal.SIGKILL)
        await asyncio.wait_for(first.wait(), scaled(30))
        await up(second)
        reused = second._pid_namespace() == ended_namespace
        print(f"FIGURE the next sandbox got the ended one's namespace number: {reused}")
        if not reused:  # another namespace was made meanwhile: as the kernel would have it
            first._pidns = second._pid_namespace()
        try:
            await first.stop()
            stale = first.sandbox_pids()
            alive = second.exit_info() is None
        finally:
            # Its own stop: one SIGTERM, then (it sleeps on) the kill after the grace, by which
            # time a SIGTERM from the first one's stop has long been written down too.
            await second.stop(grace_s=scaled(3))
            referee.close()
        return alive, second.log_tail(), stale

    alive, log, stale = run(main())
    assert alive, log
    assert log.count("TERM") == 1, log  # its own stop's alone
    assert stale == []  # the ended sandbox has no members, whatever its number now names
