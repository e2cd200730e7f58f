"""A seat's observation array and action mask as the environments build them: by a game's fast
path where its package has one (GameKit.arrays: arena/games/balloon/arrays.py from the engine's
`feature_values(seat)`, arena/games/boom/arrays.py from one vector of every seat's values that
the engine writes), kept up to date by the actions the environment plays; else plainly, by
`features.encode(observation)` and `features.legal_mask` (which say the layout;
tests/envs/test_env_features.py holds the fast ones equal to them)."""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, cast

import numpy as np

from arena.games import game_kit
from arena_sdk import features


class Arrays(Protocol):
    """A game's arrays (arrays_function's)."""

    def __call__(self, state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]: ...

    def observation(self, state: Any, seat: int) -> np.ndarray: ...

    def played(self, state: Any, actions: Sequence[tuple[int, Any]]) -> None: ...


def arrays_function(game: str, num_players: int) -> Arrays:
    """For `game` at `num_players`, a function of (state, seat) that gives the seat's
    observation array, features.encode(state.observation(seat)), and its action mask,
    features.legal_mask of its legal actions (None if it has none). Each call gives new arrays;
    its `observation(state, seat)` gives the observation array alone.

    The game's own (its package's arrays module's `Arrays`) keep what they can from one call to
    the next: the environment tells them of the actions it applies (`played(state, actions)`);
    a state they were not told about is worked out anew."""
    kit = game_kit(game)
    if kit.arrays is None:
        return PlainArrays(game)
    return cast(Arrays, kit.load("arrays").Arrays(num_players))


def mask_function(game: str) -> Callable[[Sequence[Any]], np.ndarray]:
    """For `game`, a function of the engine's legal actions (not empty) that gives
    features.legal_mask(game, legal)."""
    kit = game_kit(game)
    if kit.arrays is None:
        return lambda legal: features.legal_mask(game, legal)
    return kit.load("arrays").mask_function(features.action_count(game))


class PlainArrays:
    """The arrays of a game without a fast path: features.encode of the seat's observation."""

    def __init__(self, game: str):
        self._game = game

    def __call__(self, state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
        legal = state.legal_actions(seat)
        mask = features.legal_mask(self._game, legal) if legal else None
        return self.observation(state, seat), mask

    def observation(self, state: Any, seat: int) -> np.ndarray:
        return features.encode(state.observation(seat))

    def played(self, state: Any, actions: Sequence[tuple[int, Any]]) -> None:
        """Nothing kept: nothing to do."""
