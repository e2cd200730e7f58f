"""A seat's observation array and action mask as the environments build them, by the engines'
fast paths: the engine's `feature_values(seat)` (Boom's in parts, so that the seats of a state
share what they can), kept up to date by the actions the environment plays, instead
of `features.encode(observation)`, and masks numbered by table (a Boom pair step from its pool
of cards, `LegalPairs.pool`) instead of action by action.
`features.encode` and `features.legal_mask` are the plain versions, which say the layout;
tests/envs/test_env_features.py holds these equal to them."""

from __future__ import annotations

from typing import Any, Callable, Sequence, cast

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

    Balloon: a BalloonArrays, which keeps the ones that only a card played changes; Boom: a
    BoomArrays, which keeps every seat's array through a round. The environment tells them of
    each action it applies (`played(state, seat, action)`); a state they were not told about
    is worked out anew. The masks are built per call (mask_function)."""
    if game == "balloon":
        return BalloonArrays(num_players)
    return BoomArrays(num_players)


def _values_of(array: np.ndarray) -> "memoryview[float]":
    """A float32 array's values, to be set one by one (a handful of them costs less so than
    by a numpy call, which costs as much as dozens)."""
    return cast("memoryview[float]", array.reshape(-1).data)


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
            # set in a bytearray and wrapped, as Balloon's: cheaper than three numpy calls
            ones = bytearray(count)
            for action in legal:
                ones[single_number[action]] = 1
            return np.frombuffer(ones, int8)
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

    def played(self, state: Any, seat: int, action: int) -> None:
        """`seat`'s `action` has just been applied to `state`: if it put a card on the table of the
        round kept, that card's one is set."""
        if (
            state is self._state
            and action < self._PUBLIC
            and state.size == self._balloon + 1
            and state.round == self._round
        ):
            self._public[100 + action] = 1
            self._balloon += 1


class BoomArrays:
    """Every Boom seat's observation array (arrays_function's), kept as an (n, size) matrix,
    row by seat, for one state and brought up to date by the actions the environment applies
    to it: `played` (called after each) notes them, and the next call sets what they changed,
    value by value: the cards played leave the player's hand, its cards to play go to 0 and
    its chosen flag to 1 in every row; if they ended the round's first escape step, the
    second step's part (the step, the cards revealed, hand sizes, chosen flags, cards to play,
    from the engine's `step_feature_values`). Anything else (a new round, the match over, a
    state it was not told about) builds the rows anew (`_build`, from `round_feature_values`
    and `step_feature_values`): once a round in an environment's play. A call is then one
    row's copy and the mask (mask_function's)."""

    _HEAD, _BLOCK = 129, 105  # the seat-free part, then each seat's block
    _CHOSEN, _HAND_SIZE = 102, 101  # offsets in a block
    _TO_PLAY, _STEP = 51, 52  # cards to play / 2, the step's one-hot 52..54

    def __init__(self, num_players: int):
        n = self._n = num_players
        self._mask_of = mask_function("boom")
        size = self._size = features.observation_size("boom", n)
        head, block = self._HEAD, self._BLOCK
        blocks_size = n * block
        # what every seat's observation of a state shares: the head, then every seat's block
        # in seat order; row r of the matrix is its head, then its blocks from seat r's on
        self._shared_size = head + blocks_size
        self._shared_block_at = range(head, head + blocks_size, block)
        self._gather = np.array(
            [
                [
                    *range(head),
                    *(head + (r + k) % n * block + i for k in range(n) for i in range(block)),
                ]
                for r in range(n)
            ],
            np.intp,
        )
        # the flat index of seat s's block in row r (s's block is (s - r) % n places on)
        self._block_at = [
            [r * size + head + (s - r) % n * block for s in range(n)] for r in range(n)
        ]
        # the flat indices of seat s's chosen flag in every row
        self._chosen_of = [
            [self._block_at[r][s] + self._CHOSEN for r in range(n)] for s in range(n)
        ]
        self._row_at = [r * size for r in range(n)]  # where each seat's row starts
        self._rows = np.zeros((n, size), np.float32)
        self._values = _values_of(self._rows)  # set value by value
        # the round the rows were built in (the identity of round_feature_values' first list)
        self._round_ones: Any = None
        # the state the rows hold, its feature_key's object and count when they were set
        self._state: Any = None
        self._pending: Any = None
        self._count = 0
        self._told: list[tuple[int, tuple[int, ...]]] = []  # the actions played since, by seat
        self.built = 0  # how many times the rows were built anew (the tests read it)

    def __call__(self, state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
        n = self._n
        if type(seat) is not int or not 0 <= seat < n:
            raise RulesError.no_seat(seat, n, "encode")
        pending, count = state.feature_key()
        if state is not self._state or pending is not self._pending or count != self._count:
            if not self._catch_up(state, pending, count):
                self._build(state)
        out = self._rows[seat].copy()
        legal = state.legal_actions(seat)
        return out, self._mask_of(legal) if legal else None

    def _build(self, state: Any) -> None:
        """Every seat's row anew, from the engine's parts: the head and every seat's block in
        seat order set value by value (a few dozen), gathered into the rows, each seat's
        blocks rotated, by one precomputed index; then each seat's own part."""
        shared = np.zeros(self._shared_size, np.float32)
        values = _values_of(shared)
        head_ones, head_at, head_values, blocks = state.round_feature_values()
        step_one, revealed, sizes, chosen = state.step_feature_values()
        for i in head_ones:
            values[i] = 1.0
        for i, value in zip(head_at, head_values):
            values[i] = value
        values[step_one] = 1.0
        for base, (ones, offsets, block_values), cards, hand_size, has_chosen in zip(
            self._shared_block_at, blocks, revealed, sizes, chosen
        ):
            for i in ones:
                values[base + i] = 1.0
            for i in cards:
                values[base + i] = 1.0
            for i, value in zip(offsets, block_values):
                values[base + i] = value
            values[base + self._HAND_SIZE] = hand_size
            values[base + self._CHOSEN] = has_chosen
        self._rows = shared[self._gather]
        self._values = _values_of(self._rows)
        self._set_own(state)
        self._state, self._round_ones = state, head_ones
        self._pending, self._count = state.feature_key()
        self._told.clear()
        self.built += 1

    def _set_own(self, state: Any) -> None:
        """Every seat's own part of its row: its hand and ruse card, its cards to play."""
        values = self._values
        for seat, at in enumerate(self._row_at):
            ones, values[at + self._TO_PLAY] = state.ones_and_to_play(seat)
            for i in ones:
                values[at + i] = 1.0

    def played(self, state: Any, seat: int, action: tuple[int, ...]) -> None:
        """`seat`'s `action` has just been applied to `state`: noted, for the rows to be
        brought up to date when next asked for (the env plays a step's actions one after
        another, and the seats observe the state after the last). More than two steps' worth
        unobserved, and the rows are left to be built anew."""
        if state is self._state:
            told = self._told
            told.append((seat, action))
            if len(told) > 2 * self._n:
                self._state = None
                told.clear()

    def _catch_up(self, state: Any, pending: Any, count: int) -> bool:
        """Bring the rows up to date with the actions told of since they were set, if they
        hold `state` as it was before them and the round goes on; whether they were. Set
        value by value: a handful of values, where a numpy call costs as much as dozens."""
        told = self._told
        if state is not self._state or not told:
            return False
        same_step = pending is self._pending and count == self._count - len(told)
        if not same_step and (
            state.is_over() or state.round_feature_values()[0] is not self._round_ones
        ):
            return False  # a new round, or the end
        values, row_at = self._values, self._row_at
        for seat, action in told:  # its cards leave its hand (the ruse card's one is at 50)
            at = row_at[seat]
            values[at + self._TO_PLAY] = 0.0
            for card in action:
                values[at + card] = 0.0
            for i in self._chosen_of[seat]:  # it has chosen, in every row
                values[i] = 1.0
        if not same_step:  # the second escape step has begun: the step's part of every row
            step_one, revealed, sizes, chosen = state.step_feature_values()
            for seat, at in enumerate(row_at):
                for one_hot in range(self._STEP, self._STEP + 3):
                    values[at + one_hot] = 0.0
                values[at + step_one] = 1.0
                values[at + self._TO_PLAY] = state.ones_and_to_play(seat)[1]
                for block, cards, hand_size, has_chosen in zip(
                    self._block_at[seat], revealed, sizes, chosen
                ):
                    for card in cards:
                        values[block + card] = 1.0
                    values[block + self._HAND_SIZE] = hand_size
                    values[block + self._CHOSEN] = has_chosen
        self._pending, self._count = pending, count
        told.clear()
        return True
