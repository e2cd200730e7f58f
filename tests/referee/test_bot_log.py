"""A launched bot's log across launches: what is read as this launch's output (a fault's
excerpt, a verification's verdict) is this launch's alone."""

from __future__ import annotations

import asyncio
import sys

from arena.botcommand import BotCommand
from arena.referee.launcher import BotProcess, ResourceLimits, bot_environment
from tests.timing import scaled

UNCONFINED = ResourceLimits(sandbox=False, control_group=False)


def test_a_relaunch_s_log_tail_holds_its_own_lines_not_the_earlier_launch_s(tmp_path, run):
    """A bot that exits before its match seats it is launched again, into the same log (its
    lane's): the verdict of an upload showed both launches' lines (seen under load: the
    excerpts of a probe and of its twin then differed)."""
    log = tmp_path / "logs" / "b.log"
    log.parent.mkdir()

    def launch(word: str) -> BotProcess:
        code = f"print({word!r}, flush=True)"
        return BotProcess(
            "b",
            BotCommand((sys.executable, "-c", code), None),
            tmp_path / "bots" / "b",
            log,
            bot_environment("tok", tmp_path / "bots" / "b"),
            tmp_path / "referee.sock",
            UNCONFINED,
        )

    async def main() -> tuple[str, str]:
        tails = []
        for word in ("FIRST-LAUNCH", "SECOND-LAUNCH"):
            proc = launch(word)
            await proc.start()
            await asyncio.wait_for(proc.wait(), scaled(30))
            await proc.stop()
            tails.append(proc.log_tail())
        return tails[0], tails[1]

    first, second = run(main())
    assert "FIRST-LAUNCH" in first
    assert "SECOND-LAUNCH" in second and "FIRST-LAUNCH" not in second, second
    assert "FIRST-LAUNCH" in log.read_text()  # the log itself keeps both
