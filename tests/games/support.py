"""Helpers shared by the engines' tests, through the game interface only."""

from __future__ import annotations

import random
from typing import Sequence

from arena.games import State


def play_random_moves(state: State, rng: random.Random, moves: int) -> None:
    """Up to `moves` random legal actions, one seat at a time (fewer if the match ends)."""
    for _ in range(moves):
        if state.is_over():
            return
        seat = state.seats_to_act()[0]
        state.apply_action(seat, rng.choice(state.legal_actions(seat)))


def boom_small_hands(rng: random.Random, deck: Sequence[int], players: int, kind: int) -> list:
    """Boom hands of a few cards of one or two colours, where provably stuck games are common.
    Kinds 1 and 2 are for two players and use cards the advanced game removes."""
    if kind == 1:  # four high cards of a colour each: stuck if every sum is over 16
        colours = rng.sample(range(5), 2)
        return [[c * 10 + i for i in rng.sample(range(3, 10), 4)] for c in colours]
    if kind == 2:  # the eight highest values, each of a random colour: often tied at 16
        pool = [rng.randrange(5) * 10 + i for i in range(2, 10)]
        rng.shuffle(pool)
        return [pool[:4], pool[4:]]
    colours = rng.sample(range(5), rng.choice([1, 2]))  # a few cards of one or two colours
    pool = [c for c in deck if c // 10 in colours]
    sizes = [rng.randint(3, 5) for _ in range(players)]
    if sum(sizes) > len(pool):
        pool = list(deck)
    rng.shuffle(pool)
    return [[pool.pop() for _ in range(n)] for n in sizes]
