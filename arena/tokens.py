"""Bot tokens: how a token is made, and the hash it is kept as (a token itself is shown once,
to the bot's owner, and never stored).

hashlib and secrets are imported where they are used: loading them (OpenSSL's hashes) is ~10 ms
of a command that only reads, such as `arena rankings`.
"""

from __future__ import annotations

# Every token starts with this. It makes a token easy to recognise (in a leaked log, or by a
# secret scanner), and it keeps a token from starting with "-": a bare URL-safe token does one
# time in 64, and then `--token TOKEN` on a command line reads as a missing value.
TOKEN_PREFIX = "arena_"


def new_token() -> str:
    """A fresh bot token: the prefix and 256 random bits, URL-safe."""
    import secrets

    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """What a token is kept as: its SHA-256, in hex."""
    import hashlib

    return hashlib.sha256(token.encode("utf-8")).hexdigest()
