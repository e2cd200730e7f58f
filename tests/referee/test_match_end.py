"""The end of a match and of a bot: every MatchEnd is written before the platform stops the bot,
and a launched bot gets SIGTERM and time to read it (in its sandbox too)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from arena.games import make_game
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, ResourceLimits

from .conftest import FAST

BOTS = Path(__file__).resolve().parent.parent / "bots"


def ends_bot() -> BotCommand:
    return BotCommand((sys.executable, str(BOTS / "hostile_bot.py"), "ends"), None)


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "unconfined"])
def test_every_match_end_reaches_the_bot_before_it_is_stopped(tmp_path, sandboxed):
    async def main():
        limits = ResourceLimits(sandbox=sandboxed)
        async with RefereeHost(tmp_path, resource_limits=limits) as host:
            await host.launch("a", ends_bot())
            await host.launch("b", ends_bot())
            ids = []
            for seed in range(3):
                result = await host.run_match(
                    make_game("balloon", 2), seed, ["a", "b"], FAST, match_id=f"m{seed}"
                )
                assert result.faults == ()
                ids.append(f"m{seed}")
            # The host stops the bots right after the last match: its MatchEnd must not be lost.
        return ids

    ids = asyncio.run(main())
    for name in ("a", "b"):
        log = (tmp_path / "logs" / f"{name}.log").read_text().splitlines()
        seen = [line.split()[1] for line in log if line.startswith("match_end ")]
        assert seen == ids, (name, seen)
