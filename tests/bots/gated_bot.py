"""A Balloon bot for the disclosure tests: random legal moves, held back on the test's word.

Usage: GATE_DIR=DIR python gated_bot.py --address HOST:PORT --token TOKEN  (a remote bot, run
by the test itself), or launched by a ladder: DIR is then its own work directory (its working
directory), which the test can reach whatever the launcher's sandbox hides.

A match id says nothing of the ladder (arena.seeds: opaque), so the test tells the bot which
match of the ladder each id is: its index in the file DIR/match-ID (tests/web/support.py,
MatchIndexes), which the bot waits for before its first move. In a match whose INDEX has no
file DIR/open-INDEX (and while there is no DIR/open-all), the bot plays HOLD moves, then before
its next move writes DIR/waiting-INDEX and waits for the file: the test keeps the match running,
frozen, while it looks at it, and lets it finish by creating the file. The move deadline must
outlast the wait.

A seat's own view, for the test: every observation the bot acts on is appended to
DIR/seen-INDEX-SEAT.jsonl as the hand's card ids. In match 0, seat 0 first plays a card it does
not hold: an illegal-action fault, whose detail (the engine's message) lists the seat's hand.
"""

import json
import os
import threading
import time
from pathlib import Path

from arena_sdk import Bot, run
from arena_sdk.types import BalloonAction, Card

GATE = Path(os.environ.get("GATE_DIR", "."))
HOLD = 2  # moves per seat before a closed gate holds the match


class GatedBot(Bot):
    name = "gated"

    def __init__(self) -> None:
        self._moves: dict[str, int] = {}
        self._indexes: dict[str, str] = {}
        self._lock = threading.Lock()

    def _index(self, match) -> str:
        """The ladder's index of this match, as the test wrote it for the match's id."""
        known = self._indexes.get(match.match_id)
        if known is None:
            told = GATE / f"match-{match.match_id}"
            # Bounded by the move's deadline: past it the read fails, and so does the test.
            while not told.exists() and match.clock.remaining() > 2:
                time.sleep(0.01)
            known = self._indexes[match.match_id] = told.read_text()
        return known

    def act(self, observation, legal_actions, match):
        index = self._index(match)
        with open(GATE / f"seen-{index}-{match.seat}.jsonl", "a") as seen:
            seen.write(json.dumps([c.id for c in observation.hand]) + "\n")
        with self._lock:
            moves = self._moves[match.match_id] = self._moves.get(match.match_id, 0) + 1
        if moves > HOLD:
            self._wait(index, match)
        if index == "0" and match.seat == 0 and moves == 1:
            held = {c.id for c in observation.hand}
            return BalloonAction(play=Card(next(i for i in range(50) if i not in held), "", 0))
        return match.rng.choice(legal_actions)

    def _wait(self, index: str, match) -> None:
        gate, everything = GATE / f"open-{index}", GATE / "open-all"
        if gate.exists() or everything.exists():
            return
        (GATE / f"waiting-{index}").touch()
        # Bounded by the move's deadline: past it the bot plays on (and the test fails, since
        # the match moved while it was being looked at).
        while not (gate.exists() or everything.exists()) and match.clock.remaining() > 2:
            time.sleep(0.02)


if __name__ == "__main__":
    run(GatedBot())
