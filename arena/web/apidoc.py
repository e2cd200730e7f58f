"""The API's description in /openapi.json as a reader wants it: each operation summarised by
the first sentence of its handler's docstring (hand-written, not FastAPI's "Api Ladders" made
from the function's name), and the keys it takes declared as security schemes, so that the
interactive docs (/api/docs) have an Authorize button that sends them."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from .owners import ADMIN_KEY_HEADER, BOT_KEY_HEADER, OWNER_KEY_HEADER

DESCRIPTION = (
    "JSON API over Arena's ladders, ratings, bots and matches: reading is open to anyone "
    "(what is public follows the disclosure rule: no card or seed of an unfinished set); "
    "under `arena serve`, a bot's owner uploads versions and reads its logs with the owner "
    "key, and the organiser uses the admin key (Authorize, above). "
    'Errors are {"error": {"status", "message"}}. The pages: [/](/).'
)

# scheme name -> (header, what it is)
KEYS: dict[str, tuple[str, str]] = {
    "ownerKey": (OWNER_KEY_HEADER, "a bot's owner key (docs/submit.md): its versions and logs"),
    "botKey": (BOT_KEY_HEADER, "a bot's play token: that bot's own logs"),
    "adminKey": (ADMIN_KEY_HEADER, "the server's admin key (arena serve --admin-key)"),
}


def summary(doc: str | None) -> str | None:
    """The first clause of a docstring's first sentence, on one line (None without one)."""
    if not doc:
        return None
    text = " ".join(doc.split())
    end = text.find(". ")
    first = text if end < 0 else text[: end + 1]
    for stop in ("; ", " ("):  # a summary is a line: its first clause
        cut = first.find(stop)
        if cut >= 20:
            first = first[:cut]
    first = first.rstrip(".:,")
    return first[:1].upper() + first[1:] if first else None


def install(app: FastAPI) -> None:
    """Serve /openapi.json with hand-written summaries and the key schemes; built on first
    request, after every router is in (arena serve adds its own after create_app)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
            tags=app.openapi_tags,
        )
        schema.setdefault("components", {})["securitySchemes"] = {
            name: {"type": "apiKey", "in": "header", "name": header, "description": what}
            for name, (header, what) in KEYS.items()
        }
        by_header = {header.lower(): name for name, (header, _) in KEYS.items()}
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                # FastAPI's own summary is the function's name ("Api Ladders"); the
                # description is the handler's docstring.
                written = summary(operation.get("description"))
                if written:
                    operation["summary"] = written
                schemes = [
                    by_header[p["name"].lower()]
                    for p in operation.get("parameters", [])
                    if p.get("in") == "header" and p["name"].lower() in by_header
                ]
                if schemes:  # any one of them opens it
                    operation["security"] = [{name: []} for name in schemes]
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
