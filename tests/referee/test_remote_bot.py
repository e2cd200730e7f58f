"""A bot its owner runs (not launched by the platform) connects with its token and plays."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from arena.games import make_game
from arena.referee.host import RefereeHost
from tests.timing import scaled

from .conftest import FAST, fault_bot

ROOT = Path(__file__).resolve().parents[2]


def test_remote_bot_with_its_token_plays_a_match(tmp_path, run):
    async def main():
        async with RefereeHost(tmp_path) as host:
            token = host.tokens.issue("owner-run")
            remote = subprocess.Popen(  # noqa: ASYNC220 (starting it does not block)
                [
                    sys.executable,
                    str(ROOT / "example_bots" / "random_bot.py"),
                    "--address",
                    host.server.address,
                    "--token",
                    token,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            try:
                await host.launch("launched", fault_bot("good"))
                # The owner starts its bot when it likes: wait until it is connected. (This
                # failed now and then until tokens got their "arena_" prefix: a token starting
                # with "-" made `--token TOKEN` a usage error. The bot's stderr is in the
                # message if it ever fails again.)
                connected = await host.server.directory.wait_for("owner-run", scaled(60))
                result = (
                    await host.run_match(make_game("boom", 2), 3, ["owner-run", "launched"], FAST)
                    if connected is not None
                    else None
                )
            finally:
                remote.terminate()
                _, stderr = await asyncio.to_thread(remote.communicate, timeout=10)
            return result, stderr.decode(errors="replace")

    result, stderr = run(main())
    assert result is not None, f"the remote bot never connected; its stderr:\n{stderr}"
    assert result.faults == (), f"the remote bot's stderr:\n{stderr}"
    assert any(m.seat == 0 and not m.default for m in result.moves)
