"""Batched replies over real gRPC: a bot (a real process speaking the protocol directly) that
answers only with ActionReplies, several matches' replies in one message, plays two matches at
once without a fault. The referee's side of batching is unit-tested in test_connection_outbox."""

from __future__ import annotations

import asyncio
import re

from arena.games import make_game
from arena.referee.host import RefereeHost
from arena.referee.match import Limits

from .conftest import fault_bot

# Move limits far beyond the test's need: the batcher holds a reply until its other match asks
# it too, so its clock runs while the other match's good bot thinks; on a loaded machine that
# can pass FAST's 400 ms and a time bank, and batching, not timing, is under test here.
ROOMY = Limits(move_ms=10_000, time_bank_ms=10_000, max_strikes=2, connect_ms=30_000)


def test_replies_batched_across_matches_are_each_taken_as_sent_alone(tmp_path, run):
    game = make_game("balloon", 2)

    async def main():
        async with RefereeHost(tmp_path) as host:
            await host.launch("batcher", fault_bot("batcher"))
            await host.launch("good-a", fault_bot("good"))
            await host.launch("good-b", fault_bot("good"))
            return await asyncio.gather(
                host.run_match(game, 11, ["batcher", "good-a"], ROOMY),
                host.run_match(game, 12, ["good-b", "batcher"], ROOMY),
            )

    results = run(main())
    for result in results:
        assert result.faults == ()
        assert not any(m.default for m in result.moves)
    # The batcher answered every move through ActionReplies, two matches' replies at once
    # whenever both were waiting on it.
    log = (tmp_path / "logs" / "batcher.log").read_text()
    sizes = re.findall(r"batch sizes so far: \[([\d, ]+)\]", log)
    assert sizes and "2" in sizes[-1].split(", "), log[-2000:]
