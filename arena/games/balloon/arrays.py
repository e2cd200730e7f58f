"""Balloon Challenge's observation arrays and action masks for the training environments
(arena/envs/arrays.py says how the environments use them), by the engine's fast path
(`feature_values`; the native core's `_write_observation` where it runs) instead of
`arena_sdk.features.encode`; tests/envs/test_env_features.py holds them equal to it. Needs numpy
(the `rl` extra)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from arena_sdk import features


def mask_function(count: int) -> Callable[[Sequence[Any]], np.ndarray]:
    """A function of the engine's legal actions (not empty) that gives their mask."""
    # a dtype object, not the type: numpy then need not look the dtype up on every call
    int8, frombuffer = np.dtype(np.int8), np.frombuffer

    def balloon_mask(legal: Sequence[int]) -> np.ndarray:
        # set in a bytearray and wrapped: one numpy call, where zeros and a fancy
        # assignment are three (each costs more than this loop over up to 11 actions)
        mask = bytearray(count)
        for action in legal:
            mask[action] = 1
        return frombuffer(mask, int8)

    return balloon_mask


class Arrays:
    """A Balloon seat's observation array and action mask (arrays_function's), keeping the
    ones of the face-up cards and the cards on the table [50, 150), the same for every seat,
    from one call to the next: they change only when a card is played, and `played` (the
    environment calls it after each action it applies) sets the card played. A state it was
    not told about (another object, another round, a card played without `played`) gets
    them anew from the engine's `feature_values`. A seat's own hand [0, 50) is set per call,
    and its values from 150 on (`feature_tail`)."""

    _TAIL = 150  # every index from here on holds a value (feature_values' `at`)
    _PUBLIC = 50  # the ones from here up to _TAIL are the face-up cards and the table's

    def __init__(self, num_players: int):
        self._mask_of = mask_function(features.action_count("balloon"))
        self._size = features.observation_size("balloon", num_players)
        self._public = np.zeros(self._size, np.float32)
        # the state, round and balloon size (face-up and table cards) _public holds
        self._state: Any = None
        self._round = 0
        self._balloon = -1
        self.native = True  # a native state writes its arrays itself (False: kept here, tests)

    def __call__(self, state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
        out = self.observation(state, seat)
        legal = state.legal_actions(seat)
        return out, self._mask_of(legal) if legal else None

    def observation(self, state: Any, seat: int) -> np.ndarray:
        """The seat's observation array (a new one)."""
        # the native core writes it all (in C: one call), the ones kept here left alone
        write = getattr(state, "_write_observation", None) if self.native else None
        if write is not None:
            out = np.zeros(self._size, np.float32)
            if write(out, seat):
                return out
        tail = state.feature_tail(seat)  # RulesError for a seat that is not there
        if state is not self._state or state.round != self._round or state.size != self._balloon:
            self._keep(state, seat)
        out = self._public.copy()
        hand = state.hand(seat)
        out[np.fromiter(hand, np.intp, len(hand))] = 1
        out[self._TAIL :] = tail
        return out

    def _keep(self, state: Any, seat: int) -> None:
        ones = [i for i in state.feature_values(seat)[0] if i >= self._PUBLIC]
        public = np.zeros(self._size, np.float32)
        public[np.fromiter(ones, np.intp, len(ones))] = 1
        self._public = public
        self._state, self._round, self._balloon = state, state.round, state.size

    def played(self, state: Any, actions: Sequence[tuple[int, Any]]) -> None:
        """These (seat, action)s have just been applied to `state`, in order: each that put a
        card on the table of the round kept sets that card's one."""
        for _, action in actions:
            if (
                state is self._state
                and action < self._PUBLIC
                and state.size == self._balloon + 1
                and state.round == self._round
            ):
                self._public[100 + action] = 1
                self._balloon += 1
