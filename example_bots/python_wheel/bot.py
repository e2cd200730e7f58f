"""A Python bot with a dependency shipped as a wheel: `lowcard`, a package that is not on the
server, installed offline from this folder's wheels/ (requirements.txt) before the bot runs.

Run by the launcher (ARENA_ADDRESS and ARENA_TOKEN set); see README.md for the three commands.
"""

import lowcard

from arena_sdk import Bot, run


class LowCardBot(Bot):
    name = "lowcard"
    quick = True  # one cheap choice: run it on the SDK's loop

    def act(self, observation, legal_actions, match):
        return lowcard.choose(legal_actions, match.rng)


if __name__ == "__main__":
    run(LowCardBot())
