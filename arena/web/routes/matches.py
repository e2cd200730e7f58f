"""Matches: the match list (its page, with filters, and its API), one match (API), and
`full_match`, a match with nothing withheld, for the admin API (arena/service)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse

from .. import models, site
from ..disclosure import Disclosure, MatchView
from ..frames import card_legend
from ..owners import (
    Credential,
    credential_headers_hint,
    may_read_logs,
)
from ..paths import PLACES
from .common import (
    BAD_INPUT,
    BEFORE,
    BOT_NAME_MAX,
    FAULTED,
    INDEX,
    LADDER,
    LIMIT,
    NOT_FOUND,
    Web,
    api,
    check_opponent,
    plain,
    status_filter,
)


def router(web: Web) -> APIRouter:
    router = APIRouter(tags=["matches"])

    @router.get(PLACES["matches"].server, response_class=HTMLResponse, include_in_schema=False)
    def matches_html(
        request: Request,
        ladder: str | None = Query(None, max_length=64),
        bot: str | None = Query(None, max_length=BOT_NAME_MAX),
        opponent: str | None = Query(None, max_length=BOT_NAME_MAX),
        status: str | None = Query(None, max_length=32),
        faulted: bool = FAULTED,
        before: int | None = BEFORE,
        limit: int = LIMIT,
    ) -> HTMLResponse:
        # The filter form sends empty strings for "any".
        status_value = status_filter(status)
        check_opponent(bot or None, opponent or None, status_value, faulted)
        return web.render(
            request,
            site.matches_page(
                web.view(request),
                ladder=ladder or None,
                bot=bot or None,
                status=status_value,
                before=before,
                limit=limit,
                opponent=opponent or None,
                faulted=faulted,
            ),
        )

    @api(router, "/api/matches", models.MatchListOut)
    def api_matches(
        ladder: str | None = Query(None, max_length=64, description="only this ladder's matches"),
        bot: str | None = Query(
            None, max_length=BOT_NAME_MAX, description="only matches this bot plays in"
        ),
        opponent: str | None = Query(
            None,
            max_length=BOT_NAME_MAX,
            description="with `bot`: only the completed matches where this bot sat too",
        ),
        status: models.MatchStatus | None = Query(None),
        faulted: bool = FAULTED,
        before: int | None = BEFORE,
        limit: int = LIMIT,
    ) -> Any:
        """Matches newest first (schedule order), filtered, a page at a time."""
        status_value = status.value if status else None
        check_opponent(bot, opponent, status_value, faulted)
        if opponent is not None or faulted:
            page = web.queries().matches_against(
                bot or "", opponent, ladder=ladder, before=before, limit=limit, faulted=faulted
            )
        else:
            page = web.queries().match_list(
                ladder=ladder, bot=bot, status=status_value, before=before, limit=limit
            )
        return {"matches": [plain(m) for m in page.matches], "next": page.next}

    @api(router, "/api/ladders/{ladder}/matches/{index}", models.MatchOut)
    def api_match(
        ladder: str = LADDER,
        index: int = INDEX,
        frames: bool = Query(False, description="include the replay's frames"),
    ) -> Any:
        """One match: seats, results, faults and, with frames=true, the replay's frames.
        Until the match's duplicate set is finished, its seed and fault details are null and
        its frames public (no hands, no actions): `withheld` says so (docs/web.md)."""
        view = web.public.match(web.queries().match(ladder, index), frames=frames, live=web.live)
        # Everything is plain JSON already: skip re-validating hundreds of frames.
        return JSONResponse(match_out(view))

    @router.get(
        PLACES["match_replay"].server,
        tags=["matches"],
        responses={
            200: {
                "description": "the replay file (arena.replay's format): `arena replay FILE`",
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["format", "config", "seed", "seat_names", "moves"],
                        }
                    }
                },
            },
            409: {"model": models.ErrorOut, "description": "its set is not finished yet"},
            **NOT_FOUND,
            **BAD_INPUT,
        },
    )
    def api_match_replay(ladder: str = LADDER, index: int = INDEX) -> Any:
        """A completed match's replay file, once its duplicate set is finished (before, the
        seed and hands it holds are not public): `arena replay FILE` re-runs and checks it."""
        view = web.public.match(web.queries().match(ladder, index))
        replay = view.detail.replay
        if view.withheld is not None or replay is None:
            why = view.withheld or f"the match is {view.detail.match.status}, with no replay"
            raise HTTPException(409, f"no replay of {ladder} match {index} to give yet: {why}")
        name = f"{view.detail.match.ladder}-{index}.json"
        return JSONResponse(
            replay, headers={"Content-Disposition": f'attachment; filename="{name}"'}
        )

    @api(
        router,
        PLACES["match_logs"].server,
        models.MatchLogsOut,
        responses={
            401: {"model": models.ErrorOut, "description": "no key given"},
            403: {"model": models.ErrorOut, "description": "the key opens no seat's log"},
            **NOT_FOUND,
            **BAD_INPUT,
        },
    )
    def api_match_logs(
        response: Response,
        ladder: str = LADDER,
        index: int = INDEX,
        x_bot_key: str | None = Header(None, max_length=512, description="a bot's play token"),
        x_admin_key: str | None = Header(
            None, max_length=512, description="the server's admin key (arena serve)"
        ),
        x_owner_key: str | None = Header(
            None, max_length=512, description="a bot's owner key (docs/submit.md)"
        ),
    ) -> Any:
        """What each launched bot wrote during the match, split by its moves, for the seats
        whose bots the key opens: a bot's owner key (every version), its token (that
        version) or the admin key (every seat). Never public; kept as long as the organiser's
        rotation keeps it (docs/web.md#match-logs)."""
        q = web.queries()
        detail = q.match(ladder, index, with_replay=False)
        credential = Credential(bot_key=x_bot_key, admin_key=x_admin_key, owner_key=x_owner_key)
        if not credential.given:
            raise HTTPException(
                401,
                f"the bots' output in {ladder} match {index} is for their owners: "
                + credential_headers_hint(),
            )
        bots = {s.bot for s in detail.match.seats}
        opens = {b: may_read_logs(q, b, credential, web.admin_key) for b in sorted(bots)}
        if not any(opens.values()):
            raise HTTPException(
                403,
                f"this key opens the output of none of the bots of {ladder} match {index} "
                f"({', '.join(sorted(bots))}): " + credential_headers_hint(),
            )
        response.headers["Cache-Control"] = "no-store"  # private: no shared cache keeps it
        logs = q.match_logs(ladder, index)
        seats = [
            {"seat": seat, "bot": log.bot, **log.log}
            for seat, log in logs.items()
            if opens.get(detail.match.seats[seat].bot)
        ]
        closed = [s.seat for s in detail.match.seats if not opens[s.bot]]
        return {"ladder": detail.match.ladder, "index": index, "seats": seats, "closed": closed}

    return router


def full_match(app: FastAPI, ladder: str, index: int, frames: bool) -> JSONResponse:
    """A match with nothing withheld (seed, fault details, frames with hands), whether or not
    its set is finished: for the admin API, which checks its key before calling this. Raises
    UnknownLadder or UnknownMatch, which `app` answers with a 404."""
    web: Web = app.state.web
    view = Disclosure(full=True).match(
        web.queries().match(ladder, index), frames=frames, live=web.live
    )
    return JSONResponse(match_out(view))


def match_out(view: MatchView) -> dict[str, Any]:
    """A match as the API gives it (models.MatchOut), from what `view` may show."""
    out = plain(view.detail)
    del out["replay"]
    out.update(
        moves=view.moves,
        set_finished=view.detail.set_finished,
        withheld=view.withheld,
        frames=view.frames,
        replay_error=view.replay_error,
        legend=(
            {str(k): v for k, v in card_legend(view.detail.game).items()}
            if view.frames is not None
            else None
        ),
    )
    return out
