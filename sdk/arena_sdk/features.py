"""Observations and actions as numbers, for learning bots: one layout, shared by the training
environments (`arena.envs`) and by bots in real matches (`arena_sdk.policy`).

`encode(observation)` turns an observation into a flat float32 numpy array; `legal_mask(game,
legal_actions)` marks the legal actions in a fixed action numbering; `action_index` and
`index_action` go between an action and its number. Each accepts an observation or action as a
bot sees it (arena_sdk.types, `Card` objects) or as the rules engine builds it (card ids): the
two have the same field names, so a policy trained in `arena.envs` reads exactly the same arrays
in a match. numpy is imported only by the functions that return arrays (the `rl` extra).
This module is the plain statement of the layout: Arena's training environments build the same
arrays by a faster route (the engines' `feature_values`, arena/envs/arrays.py), and
tests/envs/test_env_features.py holds them equal, so a change of layout is made in both.

Seats are rotated: in every per-seat block, block 0 is the observing seat, block k the seat k
places after it. Layouts (n = number of players; docs/rl.md has the same tables):

Balloon Challenge, 162 + 6n values, actions 0..50 (a card id: play it; 50: drop out):
    [0, 50)     own hand, 1 per card id          [50, 100)   face-up cards (two players)
    [100, 150)  cards on the table this round    [150, 156)  cards of each colour on the
                                                             balloon / 8 (5 colours, black)
    156 round / 5      157 turn / 12      158 balloon size / 50     159 own hand's volume / 50
    160 chips in the middle / 12          161 first drop-out chip still there (0/1)
    162 + 6k + (0 hand size / 10, 1 dropped out (0/1), 2 chips / 12, 3 total / 100,
                4 to act (0/1), 5 start seat (0/1))

Boom: Runaway, 129 + 105n values, actions 0..1326 (an action is a sorted tuple of card ids,
RUSE = 50 for the seat's ruse card): 0 plays nothing, 1 + c the single card c, 52 + p the p-th
pair (a, b), a < b, in lexicographic order over ids 0..50:
    [0, 50)     own hand                 50 holds its ruse card (0/1)     51 cards to play / 2
    52, 53, 54  step is 0 (over), 1, 2   [55, 63) guard card (one-hot)
    [63, 68)    guard limits / 16        [68, 76) guards used since the shuffle (0/1)
    76 guards left / 8                   77 round / 20                    78 game number / 10
    [79, 129)   cards discarded face up
    129 + 105k + ([0, 50) cards revealed this round, 50 ruse revealed (0/1),
                  [51, 101) paradise: 1 face up, 0.5 face down, 101 hand size / 16,
                  102 has chosen this step (0/1), 103 score / 100, 104 series total / 200)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

GAMES = ("balloon", "boom")

BALLOON_CARDS = 50
BALLOON_DROP_OUT = 50
BALLOON_ACTIONS = 51
_BALLOON_HEAD = 162
_BALLOON_SEAT = 6

BOOM_CARDS = 50
BOOM_RUSE = 50
BOOM_GUARDS = 8
_BOOM_IDS = BOOM_CARDS + 1  # bomb cards and the ruse card
_PAIRS_AT = 1 + _BOOM_IDS
BOOM_ACTIONS = _PAIRS_AT + _BOOM_IDS * (_BOOM_IDS - 1) // 2  # 1327
_BOOM_HEAD = 129
_BOOM_SEAT = 105

# The first pair number of each first card a: pairs (a, b), a < b, counted in order.
_PAIR_START = tuple(_PAIRS_AT + a * _BOOM_IDS - a * (a + 1) // 2 for a in range(_BOOM_IDS))
_INDEX_PAIR = tuple((a, b) for a in range(_BOOM_IDS) for b in range(a + 1, _BOOM_IDS))


def _check_game(game: str) -> None:
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; the games are: {', '.join(GAMES)}")


def observation_size(game: str, num_players: int) -> int:
    """How many values `encode` gives for an observation of `game` with `num_players` seats."""
    _check_game(game)
    if game == "balloon":
        return _BALLOON_HEAD + _BALLOON_SEAT * num_players
    return _BOOM_HEAD + _BOOM_SEAT * num_players


def action_count(game: str) -> int:
    """How many action numbers `game` has (the size of the mask and of a policy's output)."""
    _check_game(game)
    return BALLOON_ACTIONS if game == "balloon" else BOOM_ACTIONS


def _id(card: Any) -> int:
    return card if card.__class__ is int else card.id


def _ids(cards: Iterable[Any]) -> list[int]:
    return [c if c.__class__ is int else c.id for c in cards]


def action_key(action: Any) -> int | tuple[int, ...]:
    """An action in the engine's terms: Balloon a card id or 50 (drop out), Boom a sorted tuple
    of card ids (50 = ruse). Accepts arena_sdk actions and engine actions alike."""
    if action.__class__ is int or action.__class__ is tuple:
        return action
    if hasattr(action, "drop_out"):  # BalloonAction
        return BALLOON_DROP_OUT if action.drop_out else action.play.id
    if hasattr(action, "ruse"):  # BoomAction
        ids = [c.id for c in action.cards]
        if action.ruse:
            ids.append(BOOM_RUSE)
        return tuple(sorted(ids))
    if isinstance(action, (tuple, list)):
        return tuple(action)
    raise TypeError(f"not an action of Balloon Challenge or Boom: {action!r}")


def action_index(game: str, action: Any) -> int:
    """The number of an action (see the module docstring)."""
    key = action_key(action)
    if game == "balloon":
        if key.__class__ is not int or not 0 <= key <= BALLOON_DROP_OUT:
            raise ValueError(f"{action!r} is not a Balloon Challenge action (card ids 0..49, 50)")
        return key
    _check_game(game)
    if isinstance(key, int):
        key = (key,)
    if not all(0 <= c <= BOOM_RUSE for c in key) or list(key) != sorted(set(key)):
        raise ValueError(f"{action!r} is not a Boom action (sorted distinct card ids 0..50)")
    if len(key) == 0:
        return 0
    if len(key) == 1:
        return 1 + key[0]
    if len(key) == 2:
        a, b = key
        return _PAIR_START[a] + b - a - 1
    raise ValueError(f"{action!r} plays {len(key)} cards; a Boom step plays at most 2")


def index_action(game: str, index: int) -> int | tuple[int, ...]:
    """The engine action with this number (the inverse of action_index)."""
    count = action_count(game)
    if not 0 <= index < count:
        raise ValueError(f"{game} action numbers are 0..{count - 1}, not {index!r}")
    index = int(index)
    if game == "balloon":
        return index
    if index == 0:
        return ()
    if index < _PAIRS_AT:
        return (index - 1,)
    return _INDEX_PAIR[index - _PAIRS_AT]


def legal_indices(game: str, legal_actions: Iterable[Any]) -> list[int]:
    """The numbers of the legal actions, in their order."""
    if game == "balloon":
        return [action_index(game, a) for a in legal_actions]
    start = _PAIR_START
    out = []
    for a in legal_actions:
        key = action_key(a)
        if isinstance(key, int):  # a Boom action of one card given as its id
            key = (key,)
        n = len(key)
        out.append(
            start[key[0]] + key[1] - key[0] - 1
            if n == 2
            else 1 + key[0]
            if n == 1
            else action_index(game, key)
        )
    return out


def legal_mask(game: str, legal_actions: Sequence[Any]):
    """A numpy int8 array of action_count(game) values, 1 where the action is legal."""
    import numpy as np

    mask = np.zeros(action_count(game), np.int8)
    if not legal_actions:
        return mask
    first = legal_actions[0]
    if game == "balloon" and first.__class__ is int:  # engine actions are their numbers
        mask[list(legal_actions)] = 1
    elif game == "boom" and first.__class__ is tuple and 1 <= len(first) <= 2:
        # engine actions of one step all play the same number of cards: number them at once
        ids = np.fromiter(chain.from_iterable(legal_actions), np.intp)
        if len(first) == 1:
            mask[ids + 1] = 1
        else:
            a, b = ids[0::2], ids[1::2]
            mask[_PAIR_START_ARRAY(np)[a] + b - a - 1] = 1
    else:
        mask[legal_indices(game, legal_actions)] = 1
    return mask


_pair_start_array: list = []


def _PAIR_START_ARRAY(np):  # noqa: N802 - a constant, built on first use (numpy is optional)
    if not _pair_start_array:
        _pair_start_array.append(np.array(_PAIR_START, np.intp))
    return _pair_start_array[0]


def encode(observation: Any):
    """The observation as a float32 numpy array, laid out as the module docstring says."""
    import numpy as np

    if hasattr(observation, "guard"):
        return _boom(observation, np)
    return _balloon(observation, np)


def _balloon(obs: Any, np) -> Any:
    n = obs.num_players
    me = obs.seat if obs.seat >= 0 else 0
    hand = _ids(obs.hand)
    face_up = _ids(obs.face_up)
    table = [_id(p.card) for p in obs.table]
    # every value set at once: indices and values gathered here, one numpy call at the end
    at = [*hand, *[50 + c for c in face_up], *[100 + c for c in table]]
    values = [1.0] * len(at)
    colours = [0] * 6
    for c in face_up + table:
        colours[c >> 3 if c < 40 else 5] += 1
    volume = sum((c & 7) if c < 40 else c - 40 for c in hand)
    at += range(150, _BALLOON_HEAD + _BALLOON_SEAT * n)
    values += (
        *(k / 8 for k in colours),
        obs.round / 5,
        obs.turn / 12,
        (len(face_up) + len(table)) / 50,
        volume / 50,
        obs.chips_in_middle / 12,
        1.0 if obs.first_drop_out_chip else 0.0,
    )
    sizes, dropped, chips, totals = obs.hand_sizes, obs.dropped_out, obs.chips, obs.totals
    to_act, start = obs.to_act, obs.start_seat
    for k in range(n):
        s = (me + k) % n
        values += (
            sizes[s] / 10,
            1.0 if dropped[s] else 0.0,
            chips[s] / 12,
            totals[s] / 100,
            1.0 if to_act == s else 0.0,
            1.0 if start == s else 0.0,
        )
    out = np.zeros(_BALLOON_HEAD + _BALLOON_SEAT * n, np.float32)
    out[at] = values
    return out


def _revealed_ids(revealed: Any) -> Sequence[int]:
    if revealed.__class__ is tuple:  # the engine's: card ids, RUSE among them
        return revealed
    ids = [c.id for c in revealed.cards]
    if revealed.ruse:
        ids.append(BOOM_RUSE)
    return ids


def _boom(obs: Any, np) -> Any:
    n = obs.num_players
    me = obs.seat if obs.seat >= 0 else 0
    out = np.zeros(_BOOM_HEAD + _BOOM_SEAT * n, np.float32)
    # every value set at once: (index, value) pairs gathered here, one numpy call at the end
    at = [c for c in _ids(obs.hand) if c < BOOM_CARDS]
    if obs.has_ruse:
        at.append(50)
    at += (52 + min(obs.step, 2), 55 + obs.guard, *(68 + g for g in obs.guards_used))
    at += [79 + c for c in _ids(obs.discarded) if c < BOOM_CARDS]
    values = [1.0] * len(at)
    at += (51, 63, 64, 65, 66, 67, 76, 77, 78)
    values += (
        obs.to_play / 2,
        *(limit / 16 for limit in obs.guard_limits),
        obs.guards_left / 8,
        obs.round / 20,
        obs.game_number / 10,
    )
    totals = obs.series_totals
    for k in range(n):
        s = (me + k) % n
        base = _BOOM_HEAD + _BOOM_SEAT * k
        revealed = _revealed_ids(obs.revealed[s])
        at += [base + c for c in revealed]
        values += [1.0] * len(revealed)
        for p in obs.paradise[s]:
            at.append(base + 51 + _id(p.card))
            values.append(1.0 if p.face_up else 0.5)
        at += (base + 101, base + 102, base + 103, base + 104)
        values += (
            obs.hand_sizes[s] / 16,
            1.0 if obs.acted[s] else 0.0,
            obs.scores[s] / 100,
            totals[s] / 200 if totals else 0.0,
        )
    out[at] = values
    return out


__all__ = [
    "BALLOON_ACTIONS",
    "BALLOON_DROP_OUT",
    "BOOM_ACTIONS",
    "BOOM_RUSE",
    "GAMES",
    "action_count",
    "action_index",
    "action_key",
    "encode",
    "index_action",
    "legal_indices",
    "legal_mask",
    "observation_size",
]
