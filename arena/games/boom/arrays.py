"""Boom: Runaway's observation arrays and action masks for the training environments
(arena/envs/arrays.py says how the environments use them), from one vector of every seat's
values that the engine writes (`write_feature_values`) instead of `arena_sdk.features.encode`;
masks numbered by table (a pair step from its pool of cards, `LegalPairs.pool`).
tests/envs/test_env_features.py holds them equal to the plain versions. Needs numpy (the `rl`
extra)."""

from __future__ import annotations

from typing import Any, Callable, Sequence, cast

import numpy as np

from arena.games import RulesError
from arena_sdk import features


def _values_of(array: np.ndarray) -> "memoryview[float]":
    """A float32 array's values, to be set one by one (a handful of them costs less so than
    by a numpy call, which costs as much as dozens)."""
    return cast("memoryview[float]", array.reshape(-1).data)


def mask_function(count: int) -> Callable[[Sequence[Any]], np.ndarray]:
    """A function of the engine's legal actions (not empty) that gives their mask."""
    # a dtype object, not the type: numpy then need not look the dtype up on every call
    int8, frombuffer = np.dtype(np.int8), np.frombuffer
    # Boom: a one-card action (c,) is number 1 + c; the pairs (a, b), b > a, are numbers
    # start[a] + b - a - 1, one run per first card a (features' numbering)
    ids = features.BOOM_RUSE + 1
    # each first card a's run: where it starts and ends, and the first card b after a
    runs = [(at, at + ids - 1 - a, a + 1) for a, at in enumerate(features.PAIR_START)]

    def boom_mask(legal: Sequence[tuple[int, ...]]) -> np.ndarray:
        ones = bytearray(count)  # set in a bytearray and wrapped: one numpy call
        if legal.__class__ is tuple and len(legal[0]) == 1:  # a one-card step
            for (card,) in legal:
                ones[1 + card] = 1
            return frombuffer(ones, int8)
        pool = getattr(legal, "pool", None)  # a LegalPairs (isinstance of an ABC costs more)
        if pool is not None:
            # the pairs of a pool: for each card a of it, a's run is the pool's membership of
            # the cards after a (one slice each, where a pair at a time is a pool's square)
            member = bytearray(ids)
            for card in pool:
                member[card] = 1
            for a in pool:
                at, end, after = runs[a]
                ones[at:end] = member[after:]
            return frombuffer(ones, int8)
        return features.legal_mask("boom", legal)  # a short hand's step: rare

    return boom_mask


class Arrays:
    """Every Boom seat's observation array (arrays_function's), from one vector that holds
    each value of a state's observations once: every seat's own part (its hand, its ruse
    card, its cards to play: the 52 values an observation starts with), the seat-free head,
    then every seat's block in seat order. A seat's observation is one gather of it (its own
    part, the head, the blocks from its own on), by an index worked out once.

    The engine writes the vector (`write_feature_values`) when the state is new to it, a round
    has ended or the match is over: once a round in an environment's play. In between, the
    environment tells it of the actions it applies (`played`), and the next call sets what
    they changed, value by value: the cards played leave the player's hand, its cards to play
    go to 0 and its chosen flag to 1; if they ended the round's first escape step, the engine
    writes the second step's part (`write_step_values`). A call is then one gather and the
    mask (mask_function's)."""

    _OWN, _HEAD, _BLOCK = 52, 129, 105  # a seat's own part, the head (own part first), a block
    _CHOSEN = 102  # the chosen flag's offset in a block
    _TO_PLAY = 51  # cards to play / 2, in the own part

    def __init__(self, num_players: int):
        n = self._n = num_players
        self._mask_of = mask_function(features.action_count("boom"))
        own, head, block = self._OWN, self._HEAD, self._BLOCK
        # where things are in the vector: seat s's own part at s * 52, the head's value at
        # index i (52 <= i < 129 in an observation) at _head + i, seat s's block at _block_at[s]
        self._own_at = [s * own for s in range(n)]
        self._head = n * own - own
        blocks = n * own + head - own
        self._block_at = [blocks + s * block for s in range(n)]
        self._chosen_at = [at + self._CHOSEN for at in self._block_at]
        self._size = blocks + n * block
        # seat r's observation: its own part, the head, then the blocks from r's on
        self._gather = [
            np.array(
                [
                    *range(r * own, r * own + own),
                    *range(self._head + own, self._head + head),
                    *(blocks + (r + k) % n * block + i for k in range(n) for i in range(block)),
                ],
                np.intp,
            )
            for r in range(n)
        ]
        self._vector = np.zeros(self._size, np.float32)
        self._values = _values_of(self._vector)  # set value by value
        self._round: Any = None  # the round the vector was set in (the state's round_key)
        # the state the vector holds, its feature_key's object and count when it was set
        self._state: Any = None
        self._pending: Any = None
        self._count = 0
        self._told: list[tuple[int, tuple[int, ...]]] = []  # the actions played since, by seat
        self.built = 0  # how many times the vector was set anew (the tests read it)

    def __call__(self, state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
        n = self._n
        if type(seat) is not int or not 0 <= seat < n:
            raise RulesError.no_seat(seat, n, "encode")
        out = self.observation(state, seat)
        legal = state.legal_actions(seat)
        return out, self._mask_of(legal) if legal else None

    def observation(self, state: Any, seat: int) -> np.ndarray:
        """The seat's observation array (a new one); `seat` must be one of the state's (the
        environment's are; __call__ checks)."""
        pending, count = state.feature_key()
        if state is not self._state or pending is not self._pending or count != self._count:
            if not self._catch_up(state, pending, count):
                self._build(state)
        return self._vector[self._gather[seat]]

    def _build(self, state: Any) -> None:
        """The vector anew: the engine writes every value of it (write_feature_values)."""
        vector = np.zeros(self._size, np.float32)
        values = _values_of(vector)
        state.write_feature_values(values, self._own_at, self._head, self._block_at)
        self._vector, self._values = vector, values
        self._state, self._round = state, state.round_key()
        self._pending, self._count = state.feature_key()
        self._told.clear()
        self.built += 1

    def played(self, state: Any, actions: Sequence[tuple[int, Any]]) -> None:
        """These (seat, action)s have just been applied to `state`: noted, for the vector to
        be brought up to date when next asked for (the env plays a step's actions together,
        and the seats observe the state after the last). More than two steps' worth
        unobserved, and the vector is left to be set anew."""
        if state is self._state:
            told = self._told
            told += actions
            if len(told) > 2 * self._n:
                self._state = None
                told.clear()

    def _catch_up(self, state: Any, pending: Any, count: int) -> bool:
        """Bring the vector up to date with the actions told of since it was set, if it holds
        `state` as it was before them and the round goes on; whether it did. Set value by
        value: a handful of values, where a numpy call costs as much as dozens."""
        told = self._told
        if state is not self._state or not told:
            return False
        same_step = pending is self._pending and count == self._count - len(told)
        if not same_step and (state.is_over() or state.round_key() != self._round):
            return False  # a new round, or the end
        values, own_at = self._values, self._own_at
        for seat, action in told:  # its cards leave its hand (the ruse card's one is at 50)
            at = own_at[seat]
            for card in action:
                values[at + card] = 0.0
        if same_step:  # each seat told of has chosen: nothing left to play
            chosen_at = self._chosen_at
            for seat, _ in told:
                values[own_at[seat] + self._TO_PLAY] = 0.0
                values[chosen_at[seat]] = 1.0
        else:  # the second escape step has begun: the step's part
            state.write_step_values(values, own_at, self._head, self._block_at)
        self._pending, self._count = pending, count
        told.clear()
        return True
