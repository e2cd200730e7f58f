"""Who may act as a bot's owner: the one check of an owner key (the X-Owner-Key header), used by
every route that submits a bot's code or shows what only its owner may see (the verdicts' log
excerpts). A bot's owner key is not its play token (docs/submit.md#owners-and-keys)."""

from __future__ import annotations

from fastapi import HTTPException

from arena.store import AsyncStore, Store, parse_bot_spec

from .backends import StoreBackend

OWNER_HEADER = "X-Owner-Key"


def owner_refusal(store: Store, bot: str, key: str | None) -> str | None:
    """Why whoever presented `key` may not act as the owner of `bot` (NAME or NAME@N: the key is
    the bot's, whichever version), or None if they may. A read-only Store does (the web's), and
    so does `await astore.run(owner_refusal, bot, key)`. The same answer for a bot without an
    owner key as for a wrong key, so that it tells nothing of which bots have one."""
    family = parse_bot_spec(bot)[0]
    if key and store.owner_key_matches(family, key):
        return None
    where = f"(the page keeps it in this tab; the API takes it in the {OWNER_HEADER} header)"
    if not key:
        return (
            f"only the owner of bot {family!r} may do this: give its owner key, the one the "
            f"organiser gave you {where}"
        )
    return (
        f"that is not the owner key of bot {family!r}: check that it was copied whole; a "
        f"key the organiser rotated no longer works, ask them for the new one {where}"
    )


def require_owner(store: Store, bot: str, key: str | None) -> None:
    """owner_refusal as an HTTP 401, for a route."""
    refusal = owner_refusal(store, bot, key)
    if refusal is not None:
        raise HTTPException(401, refusal)


def running_store(service: StoreBackend) -> AsyncStore:
    """The service's store for a route, or 503 while it starts or stops."""
    if service.store is None:
        raise HTTPException(503, "the server is starting or stopping; try again shortly")
    return service.store


async def owned(service: StoreBackend, name: str, key: str | None) -> str:
    """The bot's name (NAME, whichever version `name` is), once `key` is checked as its
    owner's (require_owner: 401 otherwise)."""
    await running_store(service).run(require_owner, name, key)
    return parse_bot_spec(name)[0]
