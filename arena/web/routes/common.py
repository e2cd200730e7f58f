"""What the web app's routes share: `Web` (the reader, templates, disclosure and feeds that
create_app builds once), the declarations of their parameters and documented errors, and
records as plain data for the response models."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import jinja2
from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse

from arena.store.browse import BrowseQueries

from .. import models, site
from ..disclosure import Disclosure
from ..live import Feeds
from ..paths import ServerUrls
from ..reader import Reader

LADDER = PathParam(description="ladder name", max_length=64)
BOT_NAME_MAX = 72  # a name of 64 and a version's "@N"
BOT = PathParam(description="bot name (a version: NAME@N)", max_length=BOT_NAME_MAX)
INDEX = PathParam(description="the match's index in its ladder's schedule", ge=0, le=2**53)
COMPETITION = PathParam(description="competition name", max_length=48)
LIMIT = Query(50, ge=1, le=200, description="matches per page")
FAULTED = Query(False, description="with `bot`: only the completed matches where that bot faulted")
BEFORE = Query(None, ge=1, le=2**62, description="the `next` of the previous page")
# A page's path parameters (paths.PLACES), as the routes declare them: (type, declaration).
PATH_PARAMS: dict[str, tuple[type, Any]] = {
    "ladder": (str, LADDER),
    "bot": (str, BOT),
    "index": (int, INDEX),
    "competition": (str, COMPETITION),
}

# FastAPI's `responses`: extra answers a route documents in /openapi.json.
Responses = dict[int | str, dict[str, Any]]
NOT_FOUND: Responses = {
    404: {"model": models.ErrorOut, "description": "no such ladder, bot or match"}
}
BAD_INPUT: Responses = {422: {"model": models.ErrorOut, "description": "a parameter is not valid"}}


def api(router: APIRouter, path: str, model: Any, responses: Responses | None = None) -> Any:
    """A JSON API route: what it returns and the errors it documents (by default an unknown
    ladder, bot or match, and a parameter not valid); its group in the docs is its router's."""
    if responses is None:
        responses = {**NOT_FOUND, **BAD_INPUT}
    return router.get(path, response_model=model, responses=responses)


@dataclass(frozen=True, slots=True)
class Web:
    """What every route of one app uses, built once by create_app: read-only queries per
    worker thread, the templates, the public's Disclosure (every public view shows matches
    through it), the head-to-head cache, the event streams, matches in progress (`live`) and
    the admin key (arena serve's, which opens every bot's log excerpts)."""

    reader: Reader
    env: jinja2.Environment
    public: Disclosure
    h2h: site.HeadToHeadCache
    feeds: Feeds
    movement: site.MovementCache | None = None
    live: site.LiveSource | None = None
    admin_key: str | None = None

    def queries(self) -> BrowseQueries:
        return self.reader.queries()

    def urls(self, request: Request) -> ServerUrls:
        return ServerUrls(root=request.scope.get("root_path", "").rstrip("/"))

    def view(self, request: Request) -> site.View:
        """What a page is built with, for this request (the owners' API: arena serve sets
        app.state.owners_api)."""
        return site.View(
            q=self.queries(),
            urls=self.urls(request),
            live=self.live,
            disclosure=self.public,
            h2h=self.h2h,
            movement=self.movement,
            owners_api=request.app.state.owners_api,
        )

    def render(self, request: Request, page: site.Page, status: int = 200) -> HTMLResponse:
        template, context = page
        html = self.env.get_template(template).render(url=self.urls(request), **context)
        return HTMLResponse(html, status_code=status)


def plain(obj: Any) -> Any:
    """A dataclass record (slots) as plain data for the response models."""
    if dataclasses.is_dataclass(obj):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, list):
        return [plain(x) for x in obj]
    return obj


def shortened(text: str, limit: int = 200) -> str:
    """A bad value is echoed in the error, but not a megabyte of it."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def status_filter(value: Any) -> str | None:
    """The match list page's status filter: empty is any, else one of the statuses."""
    if value in (None, ""):
        return None
    text = str(value)
    if text not in {s.value for s in models.MatchStatus}:
        raise RequestValidationError(
            [
                {
                    "loc": ("query", "status"),
                    "input": text,
                    "msg": "must be one of " + ", ".join(s.value for s in models.MatchStatus),
                }
            ]
        )
    return text


def check_opponent(
    bot: str | None, opponent: str | None, status: str | None, faulted: bool = False
) -> None:
    """`opponent` and `faulted` filter a bot's completed matches: they need `bot`, and no
    other status."""
    if opponent is None and not faulted:
        return
    name, value = ("opponent", opponent) if opponent is not None else ("faulted", faulted)
    if bot is None:
        raise RequestValidationError(
            [
                {
                    "loc": ("query", name),
                    "input": value,
                    "msg": "needs a bot too: the matches of that bot"
                    + (" against opponent" if name == "opponent" else " where it faulted"),
                }
            ]
        )
    if status not in (None, "completed"):
        raise RequestValidationError(
            [
                {
                    "loc": ("query", "status"),
                    "input": status,
                    "msg": f"with {'an opponent' if name == 'opponent' else 'faulted'}, only "
                    "completed matches are listed: leave status empty or give completed",
                }
            ]
        )
