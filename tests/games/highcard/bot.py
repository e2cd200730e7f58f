"""A bot for high card (the tests' game, tests/games/highcard): plays its highest card. Run as
a script: its folder is on sys.path, and it registers the game's SDK module before it plays."""

from __future__ import annotations

import arena_sdk
from arena_sdk import games


class HighestCard(arena_sdk.Bot):
    name = "highest-card"

    def act(self, observation, legal_actions, match):
        return max(legal_actions, key=lambda a: a.play.value)


if __name__ == "__main__":
    games.register("sdk_game")  # this folder's sdk_game.py, the game's SDK module
    arena_sdk.run(HighestCard())
