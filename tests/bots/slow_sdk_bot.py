"""An SDK bot that takes SLOW_MS (default 100) over each move, so that its matches last long
enough to be interrupted: it plays the first legal action. Run it as a remote bot:
    python slow_sdk_bot.py --address HOST:PORT --token TOKEN
Launched by the platform (its address is the referee's Unix socket), it makes the file `playing`
in its work directory (its HOME) when it first acts: tests wait for it to know the bot is
connected and in a match.
"""

import os
import time
from pathlib import Path

from arena_sdk import Bot, run

SLOW_MS = int(os.environ.get("SLOW_MS", "100"))


class SlowBot(Bot):
    name = "slow"

    def act(self, observation, legal_actions, match):
        if os.environ.get("ARENA_ADDRESS", "").startswith("unix:"):
            Path(os.environ["HOME"], "playing").touch()
        time.sleep(SLOW_MS / 1000)  # in the SDK's worker thread: the stream stays served
        return legal_actions[0]


if __name__ == "__main__":
    run(SlowBot())
