"""A hostile bot for the fair-play tests (issue 28): it tries to learn every hand of its match.

The referee once gave a bot `bot_seed = (seed * 1_000_003 + seat * 7919 + 12345) mod 2^63`: a bot
inverted it, dealt the match again with the public engines (arena.games, which bots may import)
and knew every hand. This bot does exactly that at its first move of each match, and checks
whether the hand it dealt itself is the hand it was dealt. It plays random legal moves (from its
bot seed), so beside it honest bots play as usual.

One line per match goes to stderr (the bot's log), `SEEN ` and a JSON object: what MatchStart
told it (match id, seat, seat names, game, options, limits, bot seed), the match seed it
recovered, its hand at its first move, the hand it dealt itself, and whether they are the same.
The fair-play tests (tests/reliability/test_fair_play.py) read these lines; they also import
`invert_old_bot_seed` and `old_bot_seed` to show that the attack works on the old formula.
"""

from __future__ import annotations

import json
import sys
import threading

from arena_sdk import Bot, run

MODULUS = 1 << 63
PREFIX = "SEEN "


def old_bot_seed(match_seed: int, seat: int) -> int:
    """The referee's bot seed before issue 28: an invertible affine map."""
    return (match_seed * 1_000_003 + seat * 7919 + 12345) % MODULUS


def invert_old_bot_seed(bot_seed: int, seat: int) -> int:
    """The match seed that old_bot_seed maps to `bot_seed` in `seat`."""
    return ((bot_seed - seat * 7919 - 12345) * pow(1_000_003, -1, MODULUS)) % MODULUS


def redealt_hand(game: str, num_players: int, options, match_seed: int, seat: int) -> list[int]:
    """The seat's hand (card ids) in the match the public engine deals from `match_seed`."""
    from arena.games import make_game

    state = make_game(game, num_players, **dict(options)).new_match(match_seed)
    return sorted(state.observation(seat).hand)


class SeedInverter(Bot):
    name = "seed-inverter"

    def __init__(self) -> None:
        self._tried: set[str] = set()
        self._lock = threading.Lock()

    def act(self, observation, legal_actions, match):
        with self._lock:
            first = match.match_id not in self._tried
            self._tried.add(match.match_id)
        if first:
            self._try(observation, match)
        return match.rng.choice(legal_actions)

    def on_match_end(self, match, result):
        with self._lock:
            self._tried.discard(match.match_id)

    def _try(self, observation, match) -> None:
        guess = invert_old_bot_seed(match.bot_seed, match.seat)
        hand = sorted(c.id for c in observation.hand)
        dealt = redealt_hand(match.game, match.num_players, match.options, guess, match.seat)
        seen = {
            "match_id": match.match_id,
            "seat": match.seat,
            "seat_names": list(match.seat_names),
            "game": match.game,
            "num_players": match.num_players,
            "options": dict(match.options),
            "limits": [match.limits.move_ms, match.limits.time_bank_ms],
            "bot_seed": match.bot_seed,
            "recovered_seed": guess,
            "hand": hand,
            "redealt_hand": dealt,
            "recovered": dealt == hand,
        }
        line = PREFIX + json.dumps(seen) + "\n"
        with self._lock:  # act() runs in several threads at once: one whole line at a time
            sys.stderr.write(line)
            sys.stderr.flush()


if __name__ == "__main__":
    run(SeedInverter())
