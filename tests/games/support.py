"""Helpers shared by the engines' tests, through the game interface only."""

from __future__ import annotations

import random

from arena.games import State


def play_random_moves(state: State, rng: random.Random, moves: int) -> None:
    """Up to `moves` random legal actions, one seat at a time (fewer if the match ends)."""
    for _ in range(moves):
        if state.is_over():
            return
        seat = state.seats_to_act()[0]
        state.apply_action(seat, rng.choice(state.legal_actions(seat)))
