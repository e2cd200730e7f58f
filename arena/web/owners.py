"""Who may read a bot's private parts: the log excerpts kept when its launched process faulted.

One function, `may_read_logs`, decides, from the credential a request presents: the organiser's
admin key (`arena serve` with a key), the bot's owner key (docs/submit.md: the person who
submits its code; it opens every version's logs), or the bot's own play token (that
version's). A new kind of credential is one more field of `Credential` and one more test here.
Secrets are compared in constant time (hmac.compare_digest), the keys through their hashes, as
the referee and the admin API do, so timing tells nothing about a real key; the owner key by the
store's one check of it (Store.owner_key_matches), as the owners' API does.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from arena.store.browse import BrowseQueries
from arena.tokens import hash_token

# The request headers that carry a credential (the API's and the bot page's script's).
BOT_KEY_HEADER = "X-Bot-Key"
ADMIN_KEY_HEADER = "X-Admin-Key"
OWNER_KEY_HEADER = "X-Owner-Key"  # as the owners' API (arena/service/owners.py)


@dataclass(frozen=True, slots=True)
class Credential:
    """What a request presented (None: not presented)."""

    bot_key: str | None = None  # the bot's play token
    admin_key: str | None = None
    owner_key: str | None = None  # the owner key of the bot's family

    @property
    def given(self) -> bool:
        return bool(self.bot_key or self.admin_key or self.owner_key)


def credential_headers_hint() -> str:
    """How to give a key, for the errors of the owners' routes."""
    return (
        "give the bot's owner key (it opens every version), its token (that version only) or "
        f"the organiser's admin key; the API takes them in the {OWNER_KEY_HEADER}, "
        f"{BOT_KEY_HEADER} or {ADMIN_KEY_HEADER} header"
    )


def may_read_logs(
    q: BrowseQueries, bot: str, credential: Credential, admin_key: str | None
) -> bool:
    """Whether `credential` opens bot `bot`'s log excerpts: the server's admin key (`admin_key`,
    None when it has none), the owner key of the bot's family (every version), or the play
    token of that very bot row (a version's token opens that version's logs only; a removed bot
    has no token). Raises UnknownBot for no such bot."""
    token_hash = q.bot_key_hash(bot)  # raises UnknownBot first, whatever was presented
    if credential.admin_key and admin_key:
        if hmac.compare_digest(credential.admin_key.encode(), admin_key.encode()):
            return True
    if credential.bot_key and token_hash is not None:
        if hmac.compare_digest(hash_token(credential.bot_key), token_hash):
            return True
    if credential.owner_key:
        return q.owner_key_matches(bot, credential.owner_key)
    return False
