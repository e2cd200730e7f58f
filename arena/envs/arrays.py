"""A seat's observation array and action mask as the environments build them, by the engines'
fast paths: the engine's `feature_values(seat)` (Boom's in parts, so that the seats of a state
share what they can; Balloon's table kept card by card as the environment plays them) instead
of `features.encode(observation)`, and masks numbered by table (a Boom pair step from its pool
of cards, `LegalPairs.pool`) instead of action by action.
`features.encode` and `features.legal_mask` are the plain versions, which say the layout;
tests/envs/test_env_features.py holds these equal to them."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from arena.games import RulesError
from arena.games.boom import LegalPairs
from arena_sdk import features


def arrays_function(
    game: str, num_players: int
) -> Callable[[Any, int], tuple[np.ndarray, np.ndarray | None]]:
    """For `game` at `num_players`, a function of (state, seat) that gives the seat's
    observation array, features.encode(state.observation(seat)), and its action mask,
    features.legal_mask of its legal actions (None if it has none). Each call gives new arrays.

    Balloon: a BalloonArrays, which keeps the ones that only a card played changes (the
    environment tells it of each action: `played`). Boom keeps what every seat's observation
    of an engine state shares, until the state changes (`feature_key`): the seats of a
    simultaneous step observe one state. That is the head, then every seat's block laid out
    twice, so that a seat's rotation (its own block first) is one slice of it: the round's
    part built once a round (`round_feature_values`), the step's set into a copy of it
    (`step_feature_values`). A seat's observation is then two slices of it and its own hand
    (`ones_and_to_play`). The masks are built per call (mask_function)."""
    if game == "balloon":
        return BalloonArrays(num_players)
    size = features.observation_size(game, num_players)
    float32, intp, zeros, empty, fromiter = np.float32, np.intp, np.zeros, np.empty, np.fromiter
    mask_of = mask_function(game)

    n = num_players
    head_size, block_size = 129, 105  # the seat-free part, then each seat's block
    blocks_size = n * block_size
    # where each seat's hand size and chosen flag go (block offsets 101, 102), in both copies
    step_at = np.array(
        [
            head_size + copy * blocks_size + s * block_size + offset
            for copy in range(2)
            for s in range(n)
            for offset in (101, 102)
        ],
        intp,
    )
    kept_round: list[Any] = [None, None]  # the round's head ones it was built from, its part
    kept: list[Any] = [None, 0, None]  # the state's key (feature_key), the shared part

    def round_part(state: Any) -> np.ndarray:
        parts = state.round_feature_values()
        if parts[0] is kept_round[0]:
            return kept_round[1]
        head_ones, head_at, head_values, blocks = parts
        ones = [*head_ones]
        at = [*head_at]
        values = [*head_values]
        for copy in range(2):
            base = head_size + copy * blocks_size
            for block_ones, offsets, block_values in blocks:
                ones += map(base.__add__, block_ones)
                at += map(base.__add__, offsets)
                values += block_values
                base += block_size
        part = zeros(head_size + 2 * blocks_size, float32)
        part[fromiter(ones, intp, len(ones))] = 1
        part[fromiter(at, intp, len(at))] = fromiter(values, float32, len(values))
        kept_round[:] = head_ones, part
        return part

    def shared_part(state: Any) -> np.ndarray:
        key = state.feature_key()
        if key[0] is kept[0] and key[1] == kept[1]:
            return kept[2]
        step_one, revealed, sizes, chosen = state.step_feature_values()
        shared = round_part(state).copy()
        ones = [step_one]
        values: list[float] = []
        for copy in range(2):
            base = head_size + copy * blocks_size
            for cards in revealed:
                ones += map(base.__add__, cards)
                base += block_size
            for hand_size, has_chosen in zip(sizes, chosen):
                values += (hand_size, has_chosen)
        shared[fromiter(ones, intp, len(ones))] = 1
        shared[step_at] = values
        kept[:] = *key, shared
        return shared

    def boom_arrays(state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
        if type(seat) is not int or not 0 <= seat < n:
            raise RulesError.no_seat(seat, n, "encode")
        shared = shared_part(state)
        out = empty(size, float32)
        out[:head_size] = shared[:head_size]
        start = head_size + seat * block_size
        out[head_size:] = shared[start : start + blocks_size]
        own, to_play = state.ones_and_to_play(seat)  # its hand and ruse card, below 51
        out[fromiter(own, intp, len(own))] = 1
        out[51] = to_play
        legal = state.legal_actions(seat)
        return out, mask_of(legal) if legal else None

    return boom_arrays


def mask_function(game: str) -> Callable[[Sequence[Any]], np.ndarray]:
    """For `game`, a function of the engine's legal actions (not empty) that gives
    features.legal_mask(game, legal)."""
    count = features.action_count(game)
    int8, intp, zeros, fromiter = np.int8, np.intp, np.zeros, np.fromiter
    if game == "balloon":  # an engine action is its number

        def balloon_mask(legal: Sequence[int]) -> np.ndarray:
            # set in a bytearray and wrapped: one numpy call, where zeros and a fancy
            # assignment are three (each costs more than this loop over up to 11 actions)
            mask = bytearray(count)
            for action in legal:
                mask[action] = 1
            return np.frombuffer(mask, int8)

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


class BalloonArrays:
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
        self._mask_of = mask_function("balloon")
        self._size = features.observation_size("balloon", num_players)
        self._public = np.zeros(self._size, np.float32)
        # the state, round and balloon size (face-up and table cards) _public holds
        self._state: Any = None
        self._round = 0
        self._balloon = -1

    def __call__(self, state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
        tail = state.feature_tail(seat)  # RulesError for a seat that is not there
        if state is not self._state or state.round != self._round or state.size != self._balloon:
            self._keep(state, seat)
        out = self._public.copy()
        hand = state.hand(seat)
        out[np.fromiter(hand, np.intp, len(hand))] = 1
        out[self._TAIL :] = tail
        legal = state.legal_actions(seat)
        return out, self._mask_of(legal) if legal else None

    def _keep(self, state: Any, seat: int) -> None:
        ones = [i for i in state.feature_values(seat)[0] if i >= self._PUBLIC]
        public = np.zeros(self._size, np.float32)
        public[np.fromiter(ones, np.intp, len(ones))] = 1
        self._public = public
        self._state, self._round, self._balloon = state, state.round, state.size

    def played(self, state: Any, action: int) -> None:
        """`action` has just been applied to `state`: if it put a card on the table of the
        round kept, that card's one is set."""
        if (
            state is self._state
            and action < self._PUBLIC
            and state.size == self._balloon + 1
            and state.round == self._round
        ):
            self._public[100 + action] = 1
            self._balloon += 1
