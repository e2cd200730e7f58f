"""A seat's observation array and action mask as the environments build them, by the engines'
fast paths: the engine's `feature_values(seat)` (Boom's split into what the seats share and
what is each seat's own) instead of `features.encode(observation)`, and masks numbered by table
(a Boom pair step from its pool of cards, `LegalPairs.pool`) instead of action by action; Boom's
for every seat of a state at once. `features.encode` and `features.legal_mask` are the plain
versions, which say the layout; tests/envs/test_env_features.py holds these equal to them."""

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

    Balloon builds the observation per call: the engine's `feature_values`, its values from
    150 on set as one slice. Boom builds every seat's observation at once, the first time one
    is asked for in a state of the engine, and keeps them until the state changes (told by the
    identity of `shared_feature_values`' blocks): the seats of a simultaneous step observe one
    state, so a seat's observation is then a copy. They are built from the shared parts (the
    head, and every seat's block laid out twice, so that each seat's rotation is one slice of
    it) and each seat's own hand; every seat's mask from its legal actions, a pair step's
    pools of cards numbered by one lookup in a table of pairs."""
    size = features.observation_size(game, num_players)
    float32, intp, zeros, fromiter = np.float32, np.intp, np.zeros, np.fromiter
    if game == "balloon":
        tail = 150  # Balloon's values are every index from 150 on (feature_values' `at`)
        mask_of = mask_function(game)

        def balloon_arrays(state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
            ones, _, values = state.feature_values(seat)
            out = zeros(size, float32)
            out[fromiter(ones, intp, len(ones))] = 1
            out[tail:] = values
            legal = state.legal_actions(seat)
            return out, mask_of(legal) if legal else None

        return balloon_arrays

    n = num_players
    head_size, block_size = 129, 105  # the seat-free part, then each seat's block
    blocks_size = n * block_size
    item = np.dtype(float32).itemsize
    # The masks, in rows of count + 1 (the last a sink for numbers that are none). A pair
    # step's pools of cards, as ids s * ids + card for seat s and padded to one length with
    # each seat's id `pad`, give every seat's numbers in one lookup in `pair_number`: at
    # [s * ids + a, s * ids + b], s * width + the number of the pair (a, b); the sink where
    # a == b, either is the pad, or the seats differ.
    count = features.action_count(game)
    width = count + 1
    pad = features.BOOM_RUSE + 1
    ids = pad + 1
    pair_number = np.full((n * ids, n * ids), count, np.int32)
    for a in range(pad):
        for b in range(pad):
            if a != b:
                number = features.action_index(game, (min(a, b), max(a, b)))
                for s in range(n):
                    pair_number[s * ids + a, s * ids + b] = s * width + number
    # at [s * 2 + 0/1]: seat s's hand size and chosen flag, in the blocks laid out twice
    step_at = np.array(
        [
            head_size + copy * blocks_size + s * block_size + offset
            for copy in range(2)
            for s in range(n)
            for offset in (101, 102)
        ],
        intp,
    )
    # the round's: its head ones it was built from, the head and the blocks laid out twice
    kept_round: list[Any] = [None, None]
    # the state's: its key, every seat's observation, its mask, whether it has legal actions
    kept: list[Any] = [None, 0, None, None, None]

    def round_template(state: Any) -> np.ndarray:
        """The head, then every seat's block twice over (so that a seat's rotation, its own
        block first, is one slice of them), of the round: 0 where a step's values go."""
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
        template = zeros(head_size + 2 * blocks_size, float32)
        template[fromiter(ones, intp, len(ones))] = 1
        template[fromiter(at, intp, len(at))] = fromiter(values, float32, len(values))
        kept_round[:] = head_ones, template
        return template

    def build(state: Any, key: tuple[Any, int]) -> None:
        step_one, revealed, sizes, chosen = state.step_feature_values()
        both = round_template(state).copy()
        ones = [step_one]
        values: list[float] = []
        for copy in range(2):
            base = head_size + copy * blocks_size
            for cards in revealed:
                ones += map(base.__add__, cards)
                base += block_size
            for hand_size, has_chosen in zip(sizes, chosen):
                values += (hand_size, has_chosen)
        both[fromiter(ones, intp, len(ones))] = 1
        both[step_at] = values
        observations = np.empty((n, size), float32)
        observations[:, :head_size] = both[:head_size]
        observations[:, head_size:] = np.ndarray(
            (n, blocks_size), float32, both, head_size * item, (block_size * item, item)
        )
        # each seat's own part: its hand and ruse card (ones below 51), cards to play at 51
        own: list[int] = []
        to_play: list[float] = []
        for s in range(n):
            seat_ones, seat_to_play = state.ones_and_to_play(s)
            own += map((s * size).__add__, seat_ones)
            to_play.append(seat_to_play)
        observations.reshape(-1)[fromiter(own, intp, len(own))] = 1
        observations[:, 51] = to_play
        kept[:] = *key, observations, *build_masks(state)

    def build_masks(state: Any) -> tuple[np.ndarray, list[bool]]:
        masks = zeros(n * width, np.int8)
        has_legal = []
        numbers: list[int] = []  # one-card actions' numbers, each seat's row offset
        pools: list[list[int]] = []  # pair steps' pools, as seat-card ids
        for s in range(n):
            legal = state.legal_actions(s)
            has_legal.append(bool(legal))
            if not legal:
                continue
            if legal.__class__ is tuple:
                if len(legal[0]) == 1:
                    numbers += [s * width + 1 + a for (a,) in legal]
                    continue
            else:
                pool = getattr(legal, "pool", None)  # LegalPairs
                if pool is not None:
                    pools.append([*map((s * ids).__add__, pool)])
                    continue
            # a short hand's step: rare
            numbers += map((s * width).__add__, features.legal_indices(game, legal))
        if pools:
            longest = max(map(len, pools))
            padded: list[int] = []
            for pool in pools:
                padded += pool
                padded += [pool[0] - pool[0] % ids + pad] * (longest - len(pool))
            cards = fromiter(padded, intp, len(padded)).reshape(len(pools), longest)
            masks[pair_number[cards[:, :, None], cards[:, None, :]]] = 1
        if numbers:
            masks[fromiter(numbers, intp, len(numbers))] = 1
        return masks.reshape(n, width)[:, :count], has_legal

    def boom_arrays(state: Any, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
        if type(seat) is not int or not 0 <= seat < n:
            raise RulesError(f"there is no seat {seat!r} to encode (seats are 0..{n - 1})")
        key = state.feature_key()
        if key[0] is not kept[0] or key[1] != kept[1]:
            build(state, key)
        return kept[2][seat].copy(), kept[3][seat].copy() if kept[4][seat] else None

    return boom_arrays


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
