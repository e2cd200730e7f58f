"""A Boom: Runaway bot that decides by Monte Carlo simulation over sampled hidden hands.

The idea: the heuristic bot (boom_heuristic) ranks every legal action by a one-round estimate;
this bot keeps its `CANDIDATES` best and lets simulation pick among them. It draws
`simulations` determinizations consistent with what the seat has seen (the engine's
`sample_state`: the other hands, the face-down discards, face-down choices already made and the
guard deck order), and in each one plays every candidate: the other seats that still have to
choose in this step choose with the heuristic from their own view of the sampled state, and the
round is played on with the heuristic for every seat to its end (`HORIZON_ROUNDS` more rounds
can be added), so that the other seats' answers, the resolution and the take-backs are played
out exactly instead of estimated. A candidate's value is its mean score margin over that
horizon: this seat's gain minus the mean of the other seats' gains. The same determinizations
serve every candidate (common random numbers), so the comparison is far less noisy than the
values.

Deterministic given the match's rng (the search: _simulation.best_by_simulation).

Run by the launcher (ARENA_ADDRESS and ARENA_TOKEN set), or by hand:
    python example_bots/boom_strong.py --address HOST:PORT --token TOKEN
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import boom_heuristic
from _engine_view import policy_bot
from _simulation import best_by_simulation

from arena.games import Game
from arena.games.boom import BoomObservation, BoomState, sample_state
from arena_sdk import run

# Determinizations per move; each plays every candidate out to the horizon. Measured on the
# development machine (CPU time per move, tests/strength/harness.py): 2 players 26 ms on average,
# 67 ms at most; 5 players 25 ms on average, 49 ms at most.
SIMULATIONS = 16
# Actions the heuristic ranks best, among which the simulations choose.
CANDIDATES = 8
# Rounds played out after the current one before a candidate is scored. Measured over 20 seeds
# in duplicate against the heuristic: one more round cost half as much time again and gained nothing
# clear (2 players +6.4 points a match against +6.6; 4 players +9.2 against +9.1).
HORIZON_ROUNDS = 0


def rollout(game: Game, state: BoomState, me: int, rng: random.Random, rounds: int) -> None:
    """Play `state` on with the heuristic for every seat until `rounds` more rounds have
    started and finished after the current one (or the match is over)."""
    choose = boom_heuristic.choose
    obs = state.observation(me)
    key = (obs.game_number, obs.round)
    stop_after = rounds
    while not state.is_over():
        seats = state.seats_to_act()
        obs = state.observation(seats[0])
        now = (obs.game_number, obs.round)
        if now != key:
            if stop_after == 0:
                return
            stop_after -= 1
            key = now
        chosen = [
            (s, choose(game, state.observation(s), state.legal_actions(s), rng)) for s in seats
        ]
        for s, action in chosen:
            state.apply_action(s, action)


def choose(
    game: Game,
    obs: BoomObservation,
    legal_actions: Sequence[tuple[int, ...]],
    rng: random.Random,
    deadline: float | None = None,
    simulations: int = SIMULATIONS,
) -> tuple[int, ...]:
    """The candidate with the best mean margin over `simulations` determinizations."""
    if len(legal_actions) == 1:
        return legal_actions[0]
    ranked = boom_heuristic.action_values(obs, legal_actions)
    order = sorted(range(len(legal_actions)), key=lambda i: (-ranked[i], i))
    candidates = [legal_actions[i] for i in order[:CANDIDATES]]
    me = obs.seat
    return best_by_simulation(
        candidates,
        me,
        simulations,
        deadline,
        sample=lambda: sample_state(obs, rng, game=game),
        play_out=lambda state: rollout(game, state, me, rng, HORIZON_ROUNDS),
    )


# Pure-Python search: one move at a time uses the core fully; more threads would only share it
# and slow every move.
BOT = policy_bot(choose, name="boom-strong", game="boom", max_concurrent=1)


if __name__ == "__main__":
    run(BOT)
