"""A random bot like example_bots/random_bot.py, with randomness of its own: its choices are drawn
from bot_seed mixed with a salt, so it plays as well as random_bot but not the same moves (a
comparison of the two has no true difference, and does not replay the same games)."""

import random

from arena_sdk import Bot, run


class TwinRandom(Bot):
    name = "twin-random"
    quick = True

    def __init__(self):
        self.rngs = {}

    def on_match_start(self, match):
        self.rngs[match.match_id] = random.Random(match.bot_seed ^ 0x5A17)

    def act(self, observation, legal_actions, match):
        return self.rngs[match.match_id].choice(legal_actions)

    def on_match_end(self, match, result):
        self.rngs.pop(match.match_id, None)


if __name__ == "__main__":
    run(TwinRandom())
