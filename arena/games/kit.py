"""A game as Arena plays it: its `GameKit`, the one entry a game package registers
(arena.games's registry). The kit names the engine and its determinizer, and the modules of the
game's package that the rest of Arena loads when it needs them: the wire codec (protobuf, for
the referee: arena/games/codec.py's GameCodec), the web's frames (arena/web/frames.py's
GameFrames), the training environments' fast arrays (arena/envs/arrays.py). Loading a kit loads
nothing but the engine, so bots simulate with arena.games alone.

A game package `arena/games/NAME/` (or any importable package, see arena.games.register) holds:
its engine (`Game` and `State`, with its options declared once as `Game.declared_options`), its
determinizer (`sample_state`), `wire.py` (its codec) and optionally `frames.py` and `arrays.py`,
and ends with `KIT = GameKit(...)`. Its proto messages go in proto/arena/v1/arena.proto (its
fields of the `Observation` and `Action` oneofs, named as the game) and the bot's side in the
SDK (arena_sdk.games).
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Mapping

from .base import Game, GameOption, State


@dataclass(frozen=True)
class GameKit:
    title: str  # the game's name for people ("Balloon Challenge")
    game: type[Game]  # the engine at its current version
    # the determinizer: a full state drawn from what one seat's observation tells it
    sample_state: Callable[[Any, random.Random], State]
    codec: str  # the module of its wire codec (a GameCodec)
    frames: str | None = None  # the module of its web frames; None: shown plainly
    arrays: str | None = None  # the module of the environments' fast arrays; None: plain ones
    # the opponents `arena compare` plays when none are named: name -> script in example_bots/
    example_bots: Mapping[str, str] = field(default_factory=dict)
    simultaneous: bool = False  # it has simultaneous steps (a ParallelEnv plays it)

    @property
    def name(self) -> str:
        return self.game.name

    @property
    def options(self) -> tuple[GameOption, ...]:
        return self.game.declared_options

    def load(self, part: str) -> ModuleType:
        """The module of `part` ("codec", "frames", "arrays"), imported on first use."""
        module = getattr(self, part)
        if module is None:
            raise LookupError(f"the game {self.name} has no {part} module")
        return importlib.import_module(module)
