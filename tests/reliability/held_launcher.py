"""A launching process for tests/reliability/test_killed_launcher.py: launches one sandboxed bot
with the real launcher, optionally holding bubblewrap in the middle of building the sandbox, and
waits to be killed.

    python held_launcher.py RUN_DIR TOKEN hold|run

`hold` adds `--file FD /tmp/held` to bubblewrap's command line, FD being a pipe this process
never writes to nor closes: bubblewrap's child (the sandbox's init to be) blocks reading it,
before it has bound its life to bubblewrap's, which is the window in which a kill of the
platform used to leave the sandbox behind. `run` launches the bot normally.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from arena.referee import sandbox
from arena.referee.launcher import BotCommand, BotProcess, ResourceLimits, bot_environment


def holding(fd: int):
    real = sandbox.Sandbox.argv

    def argv(self, command, cwd):
        args = real(self, command, cwd)
        at = args.index("--chdir")
        return args[:at] + ["--file", str(fd), "/tmp/held"] + args[at:]

    return argv


async def main(run_dir: Path, token: str, how: str) -> None:
    socket = run_dir / "referee.sock"
    socket.touch()
    workdir = run_dir / "bot"
    bot = BotCommand((sys.executable, "-c", "import time; time.sleep(600)"), None)
    proc = BotProcess(
        "held",
        bot,
        workdir,
        run_dir / "held.log",
        bot_environment(token, workdir),
        socket,
        ResourceLimits(),
    )
    sandbox.require()  # checked with the real command line, before it is changed below
    if how == "hold":
        read_end, _write_end = os.pipe()  # the write end stays open, unwritten, until we die
        os.set_inheritable(read_end, True)
        sandbox.Sandbox.argv = holding(read_end)  # type: ignore[method-assign]
        # The guard and bubblewrap must inherit the read end: close_fds would close it.
        real_exec = asyncio.create_subprocess_exec

        async def exec_passing_fd(*args, pass_fds=(), **kwargs):
            return await real_exec(*args, pass_fds=(*pass_fds, read_end), **kwargs)

        asyncio.create_subprocess_exec = exec_passing_fd  # type: ignore[assignment]
    await proc.start()
    await asyncio.Event().wait()  # until killed


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3]))
