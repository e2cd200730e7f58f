"""A Boom: Runaway bot that plays by a one-round estimate (no search).

The idea: a colour's cards escape only if that colour's total over all seats stays within the
guard's limit once the highest players have taken theirs back, and only the top player's
escape face up (1 point a card plus its value; face down, 1 point a card). So the bot scores
every legal action by resolving the current round's colours as it can see them: its own cards
(those revealed in the first escape plus the action), the other seats' revealed cards, and for
every card another seat has still to play this round an expected share of a card's value in
every colour. It plays the action with the best expected gain, preferring, among equals, to
keep its high cards. A ruse card counts as a card that adds nothing.

Run by the launcher (ARENA_ADDRESS and ARENA_TOKEN set), or by hand:
    python example_bots/boom_heuristic.py --address HOST:PORT --token TOKEN
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from _engine_view import policy_bot

from arena.games import Game
from arena.games.boom import NUM_COLOURS, RUSE, STEP_CARDS, VALUES, BoomObservation
from arena_sdk import run

# What another seat adds to each colour's total per card it has still to play this round: a
# card's mean value spread over the five colours, times a factor for players bunching their
# cards in the colours they hold most of (measured against random and against itself).
OTHERS_PER_CARD = sum(VALUES) / len(VALUES) / NUM_COLOURS * 1.5

_VALUE = tuple(VALUES[c % 10] for c in range(50)) + (0,)
_COLOUR = tuple(c // 10 for c in range(50)) + (-1,)


def cards_to_come(obs: BoomObservation, seat: int) -> int:
    """Bomb cards `seat` may still play this round (beyond what it has revealed)."""
    first, second = STEP_CARDS[obs.num_players]
    hand = obs.hand_sizes[seat]
    if obs.step == 1:
        return min(hand, first + second)
    if obs.acted[seat]:
        return 0
    return min(hand, second)


def colour_gain(limit: int, mine: int, count: int, others: Sequence[float]) -> float:
    """This seat's points from one colour: `mine` (its total in the colour, `count` cards)
    against the other seats' expected totals `others`, resolved as the rules do."""
    if not count:
        return 0.0
    rows = [float(mine), *others]
    total = sum(rows)
    while total > limit:
        top = max(rows)
        if rows[0] == top:
            return 0.0  # taken back
        for i, r in enumerate(rows):
            if r == top:
                rows[i] = 0.0
                total -= top
    return count + (mine if mine >= max(rows[1:], default=0.0) else 0)


def action_values(obs: BoomObservation, legal_actions: Sequence[tuple[int, ...]]) -> list[float]:
    """The heuristic value of each legal action (expected points this round, with a small
    preference for spending low cards)."""
    n = obs.num_players
    me = obs.seat
    limits = obs.guard_limits
    mine = [0] * NUM_COLOURS
    mine_count = [0] * NUM_COLOURS
    for c in obs.revealed[me]:
        if c != RUSE:
            mine[_COLOUR[c]] += _VALUE[c]
            mine_count[_COLOUR[c]] += 1
    others: list[list[float]] = [[] for _ in range(NUM_COLOURS)]
    for s in range(n):
        if s == me:
            continue
        row = [cards_to_come(obs, s) * OTHERS_PER_CARD] * NUM_COLOURS
        for c in obs.revealed[s]:
            if c != RUSE:
                row[_COLOUR[c]] += _VALUE[c]
        for col in range(NUM_COLOURS):
            others[col].append(row[col])

    cache: dict[tuple[int, int, int], float] = {}

    def gain(col: int, total: int, count: int) -> float:
        key = (col, total, count)
        g = cache.get(key)
        if g is None:
            g = cache[key] = colour_gain(limits[col], total, count, others[col])
        return g

    base = [gain(col, mine[col], mine_count[col]) for col in range(NUM_COLOURS)]
    values = []
    for action in legal_actions:
        add: dict[int, tuple[int, int]] = {}
        spent = 0
        for c in action:
            if c == RUSE:
                continue
            col = _COLOUR[c]
            v, k = add.get(col, (0, 0))
            add[col] = (v + _VALUE[c], k + 1)
            spent += _VALUE[c]
        value = 0.0
        for col, (v, k) in add.items():
            value += gain(col, mine[col] + v, mine_count[col] + k) - base[col]
        values.append(value - 0.01 * spent)
    return values


def choose(
    game: Game,
    obs: BoomObservation,
    legal_actions: Sequence[tuple[int, ...]],
    rng: random.Random,
    deadline: float | None = None,
) -> tuple[int, ...]:
    """The heuristic's move (engine terms). Deterministic: ties go to the first legal action;
    `game`, `rng` and `deadline` keep the policy signature every example bot shares."""
    if len(legal_actions) == 1:
        return legal_actions[0]
    values = action_values(obs, legal_actions)
    best = max(range(len(values)), key=lambda i: (values[i], -i))
    return legal_actions[best]


# Well under a millisecond a move (docs/bots.md): quick, no thread hop.
BOT = policy_bot(choose, name="boom-heuristic", game="boom", quick=True)


if __name__ == "__main__":
    run(BOT)
