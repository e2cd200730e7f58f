"""A seat's observation array and action mask as the environments build them, by the engines'
fast paths: the engine's `feature_values(seat)` instead of `features.encode(observation)`, and
masks numbered by table (a Boom pair step from its pool of cards, `LegalPairs.pool`) instead of
action by action. `features.encode` and `features.legal_mask` are the plain versions, which say
the layout; tests/envs/test_env_features.py holds these equal to them."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from arena.games.boom import LegalPairs
from arena_sdk import features


def observation_array(state: Any, seat: int, size: int) -> np.ndarray:
    """features.encode(state.observation(seat)), a float32 array of `size` values."""
    ones, at, values = state.feature_values(seat)
    out = np.zeros(size, np.float32)
    out[np.fromiter(ones, np.intp, len(ones))] = 1
    out[np.fromiter(at, np.intp, len(at))] = np.fromiter(values, np.float32, len(values))
    return out


def mask_function(game: str) -> Callable[[Sequence[Any]], np.ndarray]:
    """For `game`, a function of the engine's legal actions (not empty) that gives
    features.legal_mask(game, legal)."""
    count = features.action_count(game)
    int8, intp, zeros, fromiter = np.int8, np.intp, np.zeros, np.fromiter
    if game == "balloon":  # an engine action is its number

        def balloon_mask(legal: Sequence[int]) -> np.ndarray:
            mask = zeros(count, int8)
            mask[fromiter(legal, intp, len(legal))] = 1
            return mask

        return balloon_mask

    # Boom: every number of a one-card action, and of a pair (a, b) at [a, b] and [b, a] of a
    # table whose diagonal holds 0 (a pair step's mask is 0 there: "play nothing" is not legal)
    single_number = {(c,): features.action_index(game, (c,)) for c in range(features.BOOM_RUSE + 1)}
    ids = range(features.BOOM_RUSE + 1)
    pair_number = np.array(
        [
            [features.action_index(game, (min(a, b), max(a, b))) if a != b else 0 for b in ids]
            for a in ids
        ],
        intp,
    )

    def boom_mask(legal: Sequence[tuple[int, ...]]) -> np.ndarray:
        if legal.__class__ is tuple and len(legal[0]) == 1:  # a one-card step
            mask = zeros(count, int8)
            mask[fromiter(map(single_number.__getitem__, legal), intp, len(legal))] = 1
            return mask
        if isinstance(legal, LegalPairs):
            pool = legal.pool
            cards = fromiter(pool, intp, len(pool))
            mask = zeros(count, int8)
            mask[pair_number[cards[:, None], cards]] = 1
            mask[0] = 0
            return mask
        return features.legal_mask(game, legal)  # a short hand's step: rare

    return boom_mask
