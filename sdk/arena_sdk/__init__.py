"""arena-sdk: write an Arena bot in Python.

    from arena_sdk import Bot, run

    class RandomBot(Bot):
        name = "random"

        def act(self, observation, legal_actions, match):
            return match.rng.choice(legal_actions)

    if __name__ == "__main__":
        run(RandomBot())

A bot sees frozen dataclasses (arena_sdk.types); it never touches protobuf. See sdk/README.md.
"""

from .bot import Bot
from .policy import PolicyBot, policy_bot
from .runner import Backoff, RefusedError, Settings, run, serve, settings_from
from .types import (
    Action,
    BalloonAction,
    BalloonObservation,
    BoomAction,
    BoomObservation,
    Card,
    Limits,
    Match,
    MatchResult,
    MoveClock,
    Observation,
    ParadiseCard,
    Played,
    Rejection,
    Revealed,
)

__all__ = [
    "Action",
    "Backoff",
    "BalloonAction",
    "BalloonObservation",
    "Bot",
    "BoomAction",
    "BoomObservation",
    "Card",
    "Limits",
    "Match",
    "MatchResult",
    "MoveClock",
    "Observation",
    "ParadiseCard",
    "Played",
    "PolicyBot",
    "RefusedError",
    "Rejection",
    "Revealed",
    "Settings",
    "run",
    "serve",
    "settings_from",
    "policy_bot",
]
