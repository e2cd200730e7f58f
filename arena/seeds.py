"""The seeds and ids a bot is given, made so that they reveal nothing (docs/protocol.md, "What a
bot may know").

A bot's seed (`MatchStart.bot_seed`, for its own randomness) is HMAC-SHA256(key, match seed and
seat) cut to 63 bits. The engines are public and deterministic, so a match seed is the whole
deal: a seed a bot could invert would give it every hand. Without the key an HMAC output says
nothing of its input, and one bot seed says nothing of another match's. The key is the store's
private secret (arena.store keeps it in a table no query shows); where there is no store
(`arena match`, a verification match) a referee draws a key of its own per run. Fixed by (key,
match seed, seat): a replay records the seeds it gave, and `arena compare` gives an opponent
the same seed in NEW's and BASE's matches of a deal (same store, same key).

A match attempt's id (`MatchStart.match_id`, on every message of the match) is random: it says
nothing of a ladder, a duplicate set, a rotation or an index. The store maps it to its match.
"""

from __future__ import annotations

import hashlib
import hmac
import os

KEY_BYTES = 32
_SEED_BITS = 63


def new_key() -> bytes:
    """A fresh secret key for bot seeds."""
    return os.urandom(KEY_BYTES)


def bot_seed(key: bytes, match_seed: int, seat: int) -> int:
    """The seed the bot in `seat` gets in the match dealt from `match_seed`."""
    if len(key) < 16:
        raise ValueError("a bot-seed key needs at least 16 bytes")
    message = f"arena-bot-seed:{match_seed}:{seat}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - _SEED_BITS)


def bot_seeds(key: bytes, match_seed: int, num_seats: int) -> tuple[int, ...]:
    """Every seat's bot seed for one match, by seat."""
    return tuple(bot_seed(key, match_seed, seat) for seat in range(num_seats))


def new_match_id() -> str:
    """An opaque id for one match attempt: 16 hex digits, random."""
    return os.urandom(8).hex()
