"""Competitions' JSON API, and a published competition's results archive (docs/competitions.md):
the archive exists only once the finals are over, so nothing of an unfinished set is in it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

from ..paths import PLACES
from .common import COMPETITION, Web


def router(web: Web) -> APIRouter:
    router = APIRouter(tags=["competitions"])

    @router.get("/api/competitions")
    def api_competitions() -> list[dict[str, Any]]:
        """Every competition: its phase, times, entrants and, once published, its standings."""
        return [c.summary() for c in web.queries().store.list_competitions()]

    # A download, as the pages are: left out of the API's schema.
    @router.get(
        PLACES["competition_archive"].server, response_class=Response, include_in_schema=False
    )
    def archive(competition: str = COMPETITION) -> Response:
        """The results archive of a published competition (a zip: arena competition verify)."""
        store = web.queries().store
        data = store.competition_archive(competition)
        if data is None:
            phase = store.get_competition(competition).phase
            raise HTTPException(
                404, f"competition {competition!r} is {phase}: its archive comes once published"
            )
        return Response(
            data,
            media_type="application/zip",
            headers={"Content-Disposition": f'attachment; filename="{competition}-results.zip"'},
        )

    return router
