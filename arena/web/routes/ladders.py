"""The ladders' JSON API: every ladder, a ladder's standings, its head to head."""

from __future__ import annotations

import io
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request, Response

from .. import export, models, site
from ..paths import PLACES
from .common import BAD_INPUT, BOT_NAME_MAX, LADDER, NOT_FOUND, Web, api, plain

EXPORT_PAGE = 1000  # matches per page of the export, by default (at most 5,000)
PARQUET_TYPE = "application/vnd.apache.parquet"


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

    @router.get(PLACES["ladder_chart"].server, include_in_schema=False)
    def ladder_chart(ladder: str = LADDER) -> Response:
        # The ladder page's chart: an image of its own, so the leaderboard never waits for it.
        q = web.queries()
        _, standings = q.standings(ladder)
        leaders = [s.bot for s in standings[: site.CHART_BOTS]]
        return Response(
            site.ladder_chart(q.ladder_history(ladder, leaders)),
            media_type="image/svg+xml",
            headers={"Cache-Control": "max-age=30"},
        )

    def export_page(
        request: Request, since: str | None, until: str | None
    ) -> tuple[float | None, float | None, dict[str, Any]]:
        """An export page's (since, until) as times, and its query, for the next page's link."""
        try:
            start, end = (export.day(v) if v else None for v in (since, until))
        except ValueError as err:
            raise HTTPException(422, f"since/until: {err}") from None
        return start, end, dict(request.query_params)

    def next_page(request: Request, query: dict[str, Any], last: int) -> dict[str, str]:
        query["after"] = str(last)
        return {"Link": f'<{request.url.replace_query_params(**query)}>; rel="next"'}

    SINCE = Query(None, max_length=40, description="finished on or after")
    UNTIL = Query(None, max_length=40, description="finished before")
    AFTER = Query(-1, ge=-1, le=2**53, description="only matches of index above this")
    LIMIT = Query(EXPORT_PAGE, ge=1, le=5000, description="matches per page")

    @router.get(
        PLACES["export"].server,
        response_class=Response,
        responses={
            200: {
                "description": "JSON Lines, one match a line (arena/web/export.py SCHEMA); a "
                '`Link: <...>; rel="next"` header gives the next page',
                "content": {"application/jsonl": {}},
            },
            **NOT_FOUND,
            **BAD_INPUT,
        },
    )
    def api_export(
        request: Request,
        ladder: str = LADDER,
        since: str | None = SINCE,
        until: str | None = UNTIL,
        after: int = AFTER,
        limit: int = LIMIT,
    ) -> Response:
        """The completed matches of the ladder's finished sets (only they are public), one
        JSON line each with its replay, in schedule order, a page at a time; `since` and
        `until` are dates (YYYY-MM-DD, UTC) or ISO 8601 times (docs/web.md#the-public-export)."""
        start, end, query = export_page(request, since, until)
        rows = list(export.lines(web.queries(), ladder, start, end, after=after, limit=limit))
        headers = next_page(request, query, rows[-1][0]) if len(rows) == limit else {}
        return Response(
            "".join(text for _, text in rows), media_type="application/jsonl", headers=headers
        )

    @router.get(
        PLACES["export_parquet"].server,
        response_class=Response,
        responses={
            200: {
                "description": "The same page of matches as export.jsonl, as a Parquet file, "
                "one match a row (arena/web/export.py PARQUET_COLUMNS); a "
                '`Link: <...>; rel="next"` header gives the next page',
                "content": {PARQUET_TYPE: {}},
            },
            **NOT_FOUND,
            **BAD_INPUT,
            501: {"model": models.ErrorOut, "description": "pyarrow is not installed"},
        },
    )
    def api_export_parquet(
        request: Request,
        ladder: str = LADDER,
        since: str | None = SINCE,
        until: str | None = UNTIL,
        after: int = AFTER,
        limit: int = LIMIT,
    ) -> Response:
        """export.jsonl's page as Parquet (docs/web.md#the-public-export), where the server
        has pyarrow (Arena's `export` extra); 501 where it has not."""
        start, end, query = export_page(request, since, until)
        out = io.BytesIO()
        try:
            n, last = export.write_parquet(
                web.queries(), ladder, out, start, end, after=after, limit=limit
            )
        except export.ParquetUnavailable as err:
            raise HTTPException(501, str(err)) from None
        headers = next_page(request, query, last) if n == limit else {}
        return Response(out.getvalue(), media_type=PARQUET_TYPE, headers=headers)

    return router
