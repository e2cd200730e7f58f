"""The rules engines, and the registry that builds a game from its name and configuration.

Importing this package needs nothing outside the standard library, so bots can simulate with it.
"""

from __future__ import annotations

from typing import Any

from .base import (
    Action,
    ConfigError,
    EngineVersionError,
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


def game_from_config(config: dict[str, Any], engine_version: str | None = None) -> Game:
    """Inverse of Game.config(). With `engine_version` (a replay's or a stored match's), the game
    plays by that version's rules (Game.at_engine_version: EngineVersionError if this Arena
    cannot); without it, by the current ones."""
    cls = game_class(config["game"])
    if engine_version is not None:
        cls = cls.at_engine_version(str(engine_version))
    return cls(config["num_players"], **config.get("options", {}))


__all__ = [
    "Action",
    "ConfigError",
    "EngineVersionError",
    "Event",
    "Game",
    "IllegalActionError",
    "RulesError",
    "State",
    "game_class",
    "game_from_config",
    "game_names",
    "make_game",
    "ranks_from_scores",
]
