"""The ladders' JSON API: every ladder, a ladder's standings, its head to head."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from .. import models
from .common import BOT_NAME_MAX, LADDER, Web, api, plain


def router(web: Web) -> APIRouter:
    router = APIRouter(tags=["ladders"])

    @api(router, "/api/ladders", list[models.LadderOut], responses={})
    def api_ladders() -> Any:
        """Every ladder, newest first."""
        return [plain(r) for r in web.queries().ladders()]

    @api(router, "/api/ladders/{ladder}", models.RankingsOut)
    def api_rankings(ladder: str = LADDER) -> Any:
        """A ladder and its standings, best first by the conservative rating mu - 3 sigma."""
        info, standings = web.queries().standings(ladder)
        return {"ladder": plain(info), "standings": [plain(s) for s in standings]}

    @api(router, "/api/ladders/{ladder}/head-to-head", list[models.HeadToHeadOut])
    def api_head_to_head(
        ladder: str = LADDER,
        bot: str | None = Query(None, max_length=BOT_NAME_MAX, description="only this bot's rows"),
    ) -> Any:
        """For each bot and opponent, how the bot placed against the opponent in their common
        completed matches; only matches of finished sets count (docs/web.md)."""
        return [plain(h) for h in web.queries().head_to_head(ladder=ladder, bot=bot)]

    return router
