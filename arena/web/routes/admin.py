"""The organiser's view: every bot's suspension and fault rate, for the server's admin key.
The page (/admin) holds none of it: static/admin.js asks the API with the key typed into its
form (kept in this tab's sessionStorage, sent in a header, never in an address)."""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import APIRouter, Header, HTTPException, Request, Response
from fastapi.responses import HTMLResponse

from .. import models
from ..owners import ADMIN_KEY_HEADER
from ..paths import PLACES
from .common import Web, api


def router(web: Web) -> APIRouter:
    router = APIRouter(tags=["organiser"])

    @router.get(PLACES["admin"].server, response_class=HTMLResponse, include_in_schema=False)
    def admin_page(request: Request) -> HTMLResponse:
        return web.render(request, ("admin.html", {"title": "For the organiser"}))

    @api(
        router,
        "/api/organiser/bots",
        list[models.BotHealthOut],
        responses={
            401: {"model": models.ErrorOut, "description": "no admin key given"},
            403: {"model": models.ErrorOut, "description": "not the server's admin key"},
        },
    )
    def api_bot_health(
        response: Response,
        x_admin_key: str | None = Header(
            None, max_length=512, description="the server's admin key (arena serve)"
        ),
    ) -> Any:
        """Every bot's suspension and fault rate, for the organiser: suspended bots first,
        then by the share of their completed matches they faulted in."""
        if not x_admin_key:
            raise HTTPException(
                401,
                f"this view is the organiser's: give the server's admin key ({ADMIN_KEY_HEADER})",
            )
        if web.admin_key is None:
            raise HTTPException(
                403, "this server has no admin key: start it with one (arena serve --admin-key)"
            )
        if not hmac.compare_digest(x_admin_key.encode(), web.admin_key.encode()):
            raise HTTPException(
                403,
                "that is not this server's admin key: check that it was copied whole "
                f"({ADMIN_KEY_HEADER})",
            )
        response.headers["Cache-Control"] = "no-store"
        return [
            {
                "bot": h.bot,
                "suspended": h.suspended,
                "suspended_reason": h.suspended_reason,
                "remote": h.remote,
                "matches": h.matches,
                "faulted": h.faulted,
                "fault_rate": round(h.fault_rate, 4),
                "faults": h.faults,
                "fault_kinds": h.fault_kinds,
                "last_fault": (
                    {"ladder": h.last_fault[0], "index": h.last_fault[1]} if h.last_fault else None
                ),
            }
            for h in web.queries().bot_health()
        ]

    return router
