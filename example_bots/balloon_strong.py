"""A Balloon Challenge bot that decides by Monte Carlo simulation over sampled hidden hands.

The idea: for each move, draw `simulations` determinizations of the hidden cards consistent
with what the seat has seen (the engine's `sample_state`), and in every one of them try each
legal action and play the rest of the round out with the heuristic bot's policy for every seat.
An action's value is its average round score margin: this seat's round points minus the mean of
the other seats' round points (later rounds do not depend on this round's moves, so the round
end is the horizon). The same determinizations are used for every action (common random
numbers), so the comparison between actions is far less noisy than the values themselves.

Deterministic given the match's rng: the number of simulations is fixed. A wall-clock cut-off
(half of the move's time left, see _engine_view.move_deadline) only stops the search early if
the machine is much slower than expected; then the actions are compared over the
determinizations done so far.

Run by the launcher (ARENA_ADDRESS and ARENA_TOKEN set), or by hand:
    python example_bots/balloon_strong.py --address HOST:PORT --token TOKEN
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

import balloon_heuristic
from _engine_view import PolicyBot

from arena.games import Game
from arena.games.balloon import BalloonObservation, BalloonState, sample_state
from arena_sdk import run

# Determinizations per move; each plays every legal action out to the end of the round.
# Measured on the development machine (CPU time per move): 2 players 15 ms on average, 40 ms at
# most; 5 players 29 ms on average, 91 ms at most.
SIMULATIONS = 32


def rollout(state: BalloonState, rng: random.Random) -> None:
    """Play `state` to the end of its round with the heuristic policy for every seat."""
    round_ = state.round
    game = state.game
    choose = balloon_heuristic.choose
    while not state.is_over() and state.round == round_:
        seat = state.seats_to_act()[0]
        state.apply_action(
            seat, choose(game, state.observation(seat), state.legal_actions(seat), rng)
        )


def margin(before: Sequence[int], after: Sequence[int], seat: int) -> float:
    """This seat's round points minus the mean of the other seats'."""
    gains = [a - b for a, b in zip(after, before)]
    mine = gains.pop(seat)
    return mine - sum(gains) / len(gains)


def choose(
    game: Game,
    obs: BalloonObservation,
    legal_actions: Sequence[int],
    rng: random.Random,
    deadline: float | None = None,
    simulations: int = SIMULATIONS,
) -> int:
    """The move with the best mean round margin over `simulations` determinizations."""
    if len(legal_actions) == 1:
        return legal_actions[0]
    seat = obs.seat
    before = obs.totals
    values = [0.0] * len(legal_actions)
    for done in range(simulations):
        if deadline is not None and done > 0 and time.monotonic() > deadline:
            break
        sampled = sample_state(obs, rng)
        for i, action in enumerate(legal_actions):
            state = sampled.clone()
            state.apply_action(seat, action)
            rollout(state, rng)
            values[i] += margin(before, state.scores(), seat)
    best = max(range(len(legal_actions)), key=lambda i: (values[i], -i))
    return legal_actions[best]


class BalloonStrongBot(PolicyBot):
    name = "balloon-strong"
    game = "balloon"
    # Pure-Python search: one move at a time uses the core fully; more threads would only
    # share it and slow every move.
    max_concurrent = 1

    policy = staticmethod(choose)


if __name__ == "__main__":
    run(BalloonStrongBot())
