"""The games the SDK knows, one module a game (arena_sdk.games.balloon, arena_sdk.games.boom):
each holds what a bot sees and says in that game (its frozen dataclasses), their translation
from and to the game's proto messages, and its numbers for learning bots (arena_sdk.features).
arena_sdk.wire and arena_sdk.features loop over this registry instead of naming games.

A game module has:

    NAME, TITLE            the game's name (as the referee sends it) and its name for people
    OPTIONS                the GameOptions fields the game reads (its variant options)
    OBSERVATION, ACTION    its observation and action classes
    MARK                   an attribute only its observations have (the engine's and the SDK's)
    observation(msg)       its observation from the game's field of a pb.Observation
    action(msg)            its action from the game's field of a pb.Action
    action_to_proto(a)     a pb.Action from its action
    and, for arena_sdk.features (optional: a game without them has no arrays):
    observation_size(n), ACTIONS, action_key(a), action_index(key, shown), index_action(i),
    legal_indices(legal), legal_mask(legal, np), encode(obs, np)

A game outside the SDK (a test's, a new one's before it ships) registers its module with
`register("module.name")`: the bot that plays it calls that before `run`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

BUILTIN = ("arena_sdk.games.balloon", "arena_sdk.games.boom")

_games: dict[str, ModuleType] = {}
_builtin_loaded: list[bool] = []  # the shipped games are in _games


def register(module_name: str) -> ModuleType:
    """Add the game of the module `module_name` (see the package docstring); again: nothing."""
    module = importlib.import_module(module_name)
    name = getattr(module, "NAME", None)
    if not isinstance(name, str):
        raise ValueError(f"{module_name} is not an SDK game module: it has no NAME")
    known = _games.get(name)
    if known is not None and known is not module:
        raise ValueError(f"{module_name}: the SDK knows a game named {name!r} already")
    _games[name] = module
    return module


def _registry() -> dict[str, ModuleType]:
    if not _builtin_loaded:
        _builtin_loaded.append(True)
        for module_name in BUILTIN:
            register(module_name)
    return _games


def names() -> tuple[str, ...]:
    """The names of the games the SDK knows."""
    return tuple(sorted(_registry()))


def get(name: str) -> ModuleType | None:
    """The module of the game `name`, or None if the SDK does not know it."""
    return _registry().get(name)


def known(name: str) -> ModuleType:
    """The module of the game `name`; ValueError, naming the known ones, if there is none."""
    module = _registry().get(name)
    if module is None:
        raise ValueError(f"unknown game {name!r}; the games are: {', '.join(names())}")
    return module


def all_games() -> tuple[ModuleType, ...]:
    return tuple(_registry()[n] for n in names())
