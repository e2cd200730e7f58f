"""The rules engines, and the registry of games: a game is one package (arena/games/balloon/,
arena/games/boom/) that ends with its `KIT` (arena/games/kit.py), registered here by one line
of GAME_PACKAGES; the referee's codec, the environments, the web, the command line and the
conformance test loop over the registry instead of naming games.

More games come from packages outside Arena: named in the ARENA_GAMES environment variable
(package names, comma-separated; read on the registry's first use, so that commands Arena
starts see them too) or registered by `register(package)` (tests/games/highcard: a game the
tests play end to end). Importing this package needs nothing outside the standard library, so
bots can simulate with it.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Mapping
from typing import Any

from .base import (
    Action,
    ConfigError,
    EngineVersionError,
    Event,
    Game,
    GameOption,
    IllegalActionError,
    RulesError,
    State,
    ranks_from_scores,
)
from .kit import GameKit

# The game packages Arena ships: one line a game.
GAME_PACKAGES = (
    "arena.games.balloon",
    "arena.games.boom",
)
GAMES_VARIABLE = "ARENA_GAMES"

_kits: dict[str, GameKit] = {}
_builtin_loaded: list[bool] = []  # the shipped games and ARENA_GAMES's are in _kits
_loading = threading.RLock()


def register(package: str) -> GameKit:
    """Register the game of `package` (an importable package or module whose `KIT` is a
    GameKit); registering one again changes nothing. Raises ConfigError if it has no kit or
    another game already has its name."""
    try:
        module = importlib.import_module(package)
    except ImportError as err:
        raise ConfigError(f"cannot load the game package {package!r}: {err}") from None
    kit = getattr(module, "KIT", None)
    if not isinstance(kit, GameKit):
        raise ConfigError(f"{package} is not a game package: it has no KIT (a GameKit)")
    known = _kits.get(kit.name)
    if known is not None and known is not kit:
        raise ConfigError(f"{package}: there is a game named {kit.name!r} already")
    _kits[kit.name] = kit
    return kit


def _registry() -> dict[str, GameKit]:
    # Under a lock: a bot's matches run in threads, and a second thread that found the
    # registry marked loaded while the first was still filling it saw no game at all. (Marked
    # first, as before, for the loading thread itself: a game package that asks for the
    # registry while it is imported sees the games loaded so far.)
    with _loading:
        if not _builtin_loaded:
            _builtin_loaded.append(True)
            extra = os.environ.get(GAMES_VARIABLE, "")
            for package in (*GAME_PACKAGES, *(p.strip() for p in extra.split(",") if p.strip())):
                register(package)
    return _kits


def game_kits() -> list[GameKit]:
    """Every registered game's kit, by name."""
    return [kit for _, kit in sorted(_registry().items())]


def game_kit(name: str) -> GameKit:
    games = _registry()
    if name not in games:
        raise ConfigError(f"unknown game {name!r}; the games are: {', '.join(sorted(games))}")
    return games[name]


def game_names() -> list[str]:
    return sorted(_registry())


def game_class(name: str) -> type[Game]:
    return game_kit(name).game


def option_labels(name: str, options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The variant of game `name` as a page shows it: (label, help) for each option not at
    its default, in the game's declared order (GameOption.label). An option the game does not
    declare (an old ladder's, say) shows as its name and value."""
    declared = {o.name: o for o in game_class(name).declared_options} if name in _registry() else {}
    labels = []
    for option in declared.values():
        if option.name in options and (label := option.label(options[option.name])) is not None:
            labels.append((label, option.help))
    for key, value in options.items():
        if key not in declared and value not in (None, False):
            labels.append((key if value is True else f"{key} {value}", key))
    return labels


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
    "GameKit",
    "GameOption",
    "IllegalActionError",
    "RulesError",
    "State",
    "game_class",
    "game_from_config",
    "game_kit",
    "game_kits",
    "game_names",
    "make_game",
    "ranks_from_scores",
    "register",
]
