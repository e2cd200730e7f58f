"""The rules engines, and the registry that builds a game from its name and configuration.

Importing this package needs nothing outside the standard library, so bots can simulate with it.
"""

from __future__ import annotations

from typing import Any

from .base import (
    Action,
    ConfigError,
    Event,
    Game,
    IllegalActionError,
    RulesError,
    State,
    ranks_from_scores,
)


def _registry() -> dict[str, type[Game]]:
    from .balloon import BalloonGame
    from .boom import BoomGame

    return {BalloonGame.name: BalloonGame, BoomGame.name: BoomGame}


def game_names() -> list[str]:
    return sorted(_registry())


def game_class(name: str) -> type[Game]:
    games = _registry()
    if name not in games:
        raise ConfigError(f"unknown game {name!r}; the games are: {', '.join(sorted(games))}")
    return games[name]


def make_game(name: str, num_players: int, **options: Any) -> Game:
    """Build a game from its name, player count and variant options (raises ConfigError)."""
    return game_class(name)(num_players, **options)


def game_from_config(config: dict[str, Any]) -> Game:
    """Inverse of Game.config()."""
    return make_game(config["game"], config["num_players"], **config.get("options", {}))


__all__ = [
    "Action", "ConfigError", "Event", "Game", "IllegalActionError", "RulesError", "State",
    "game_class", "game_from_config", "game_names", "make_game", "ranks_from_scores",
]
