"""A Balloon Challenge bot that decides by Monte Carlo simulation over sampled hidden hands.

The idea: for each move, draw `simulations` determinizations of the hidden cards consistent
with what the seat has seen (the engine's `sample_state`), and in every one of them try each
legal action and play the rest of the round out with the heuristic bot's policy for every seat.
An action's value is its average round score margin: this seat's round points minus the mean of
the other seats' round points (later rounds do not depend on this round's moves, so the round
end is the horizon). The same determinizations are used for every action (common random
numbers), so the comparison between actions is far less noisy than the values themselves.

Deterministic given the match's rng (the search: _simulation.best_by_simulation).

Run by the launcher (ARENA_ADDRESS and ARENA_TOKEN set), or by hand:
    python example_bots/balloon_strong.py --address HOST:PORT --token TOKEN
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import balloon_heuristic
from _engine_view import policy_bot
from _simulation import best_by_simulation

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
    return best_by_simulation(
        legal_actions,
        obs.seat,
        simulations,
        deadline,
        sample=lambda: sample_state(obs, rng),
        play_out=lambda state: rollout(state, rng),
        before=obs.totals,  # the round's points: the margin counts this round's alone
    )


# Pure-Python search: one move at a time uses the core fully; more threads would only share it
# and slow every move.
BOT = policy_bot(choose, name="balloon-strong", game="balloon", max_concurrent=1)


if __name__ == "__main__":
    run(BOT)
