"""A bot that plays a uniformly random legal action, in any game.

Run by the launcher (ARENA_ADDRESS and ARENA_TOKEN set), or by hand:
    python example_bots/random_bot.py --address HOST:PORT --token TOKEN
"""

from arena_sdk import Bot, run


class RandomBot(Bot):
    name = "random"
    quick = True  # act() is one random choice: run it on the SDK's loop, no thread hop

    def act(self, observation, legal_actions, match):
        # match.rng is seeded by the referee, so a replayed match replays this bot too.
        return match.rng.choice(legal_actions)


if __name__ == "__main__":
    run(RandomBot())
