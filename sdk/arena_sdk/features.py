"""Observations and actions as numbers, for learning bots: one layout, shared by the training
environments (`arena.envs`) and by bots in real matches (`arena_sdk.policy`).

`encode(observation)` turns an observation into a flat float32 numpy array; `legal_mask(game,
legal_actions)` marks the legal actions in a fixed action numbering; `action_index` and
`index_action` go between an action and its number. Each accepts an observation or action as a
bot sees it (arena_sdk.types, `Card` objects) or as the rules engine builds it (card ids): the
two have the same field names, so a policy trained in `arena.envs` reads exactly the same arrays
in a match. numpy is imported only by the functions that return arrays (the `rl` extra).
Each game's numbers are in its module of arena_sdk.games; this module is the plain statement of
the layout: Arena's training environments build the same
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
from typing import Any

from . import games
from .games import balloon as _balloon
from .games import boom as _boom

BALLOON_CARDS = _balloon.CARDS
BALLOON_DROP_OUT = _balloon.DROP_OUT
BALLOON_ACTIONS = _balloon.ACTIONS

BOOM_CARDS = _boom.CARDS
BOOM_RUSE = _boom.RUSE
BOOM_GUARDS = _boom.GUARDS
BOOM_ACTIONS = _boom.ACTIONS  # 1327
PAIR_START = _boom.PAIR_START


def game_names() -> tuple[str, ...]:
    """The games with arrays: those of arena_sdk.games that have numbers (registered ones too)."""
    return tuple(m.NAME for m in games.all_games() if hasattr(m, "encode"))


GAMES = game_names()  # the games the SDK ships with arrays


def _game(game: str):
    module = games.get(game)
    if module is None or not hasattr(module, "encode"):
        raise ValueError(f"unknown game {game!r}; the games are: {', '.join(game_names())}")
    return module


def observation_size(game: str, num_players: int) -> int:
    """How many values `encode` gives for an observation of `game` with `num_players` seats."""
    return _game(game).observation_size(num_players)


def action_count(game: str) -> int:
    """How many action numbers `game` has (the size of the mask and of a policy's output)."""
    return _game(game).ACTIONS


def action_key(action: Any) -> Any:
    """An action in the engine's terms (Balloon a card id or 50, drop out; Boom a sorted tuple
    of card ids, 50 = ruse). Accepts arena_sdk actions and engine actions alike."""
    if action.__class__ is int or action.__class__ is tuple:
        return action
    for module in games.all_games():
        if isinstance(action, module.ACTION):
            return module.action_key(action)
    if isinstance(action, (tuple, list)):
        return tuple(action)
    raise TypeError(f"not an action of a game the SDK knows: {action!r}")


def action_index(game: str, action: Any) -> int:
    """The number of an action (see the module docstring)."""
    return _game(game).action_index(action_key(action), action)


def index_action(game: str, index: int) -> Any:
    """The engine action with this number (the inverse of action_index)."""
    count = action_count(game)
    if not 0 <= index < count:
        raise ValueError(f"{game} action numbers are 0..{count - 1}, not {index!r}")
    return _game(game).index_action(int(index))


def legal_indices(game: str, legal_actions: Iterable[Any]) -> list[int]:
    """The numbers of the legal actions, in their order."""
    return _game(game).legal_indices(legal_actions, action_key)


def legal_mask(game: str, legal_actions: Sequence[Any]):
    """A numpy int8 array of action_count(game) values, 1 where the action is legal."""
    import numpy as np

    module = _game(game)
    mask = np.zeros(module.ACTIONS, np.int8)
    if legal_actions and not module.legal_mask(legal_actions, mask):
        mask[module.legal_indices(legal_actions, action_key)] = 1
    return mask


def encode(observation: Any):
    """The observation as a float32 numpy array, laid out as the module docstring says."""
    import numpy as np

    for module in games.all_games():
        if hasattr(observation, module.MARK) and hasattr(module, "encode"):
            return module.encode(observation, np)
    raise TypeError(f"not an observation of a game the SDK knows: {observation!r}")


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
    "game_names",
    "index_action",
    "legal_indices",
    "legal_mask",
    "observation_size",
]
