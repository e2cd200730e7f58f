"""Bot tokens and owner keys: how one is made, and the hash it is kept as (a token itself is
shown once, to the bot's owner, and never stored).

hashlib and secrets are imported where they are used: loading them (OpenSSL's hashes) is ~10 ms
of a command that only reads, such as `arena rankings`.
"""

from __future__ import annotations

# Every token starts with this. It makes a token easy to recognise (in a leaked log, or by a
# secret scanner), and it keeps a token from starting with "-": a bare URL-safe token does one
# time in 64, and then `--token TOKEN` on a command line reads as a missing value.
TOKEN_PREFIX = "arena_"
# An owner key (it lets a person submit versions of a bot and read their logs, not play): told
# apart from a play token at a glance.
OWNER_KEY_PREFIX = "arena_owner_"


def new_token() -> str:
    """A fresh bot token: the prefix and 256 random bits, URL-safe."""
    import secrets

    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_owner_key() -> str:
    """A fresh owner key: its prefix and 256 random bits, URL-safe; kept as hash_token's."""
    import secrets

    return OWNER_KEY_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """What a token is kept as: its SHA-256, in hex."""
    import hashlib

    return hashlib.sha256(token.encode("utf-8")).hexdigest()
