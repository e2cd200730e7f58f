"""The web app: HTML pages and a JSON API over the store, read-only, built by `create_app`.

`create_app(store_path, live=...)` returns a FastAPI app; `arena web` serves it with uvicorn and
`arena serve` mounts it beside the referee, passing a LiveSource for matches in progress (see
site.LiveSource and docs/web.md). Nothing here writes to the store. Handlers are plain `def`
functions, so FastAPI runs them on its worker threads and SQLite never blocks the event loop;
each worker thread has its own read-only connection (queries.Reader).

Errors: an unknown ladder, bot or match is a 404 (an HTML page, or a JSON {"error": ...} under
/api/), a bad query parameter a 400 page or a 422 JSON error naming the parameter; nothing
shows a stack trace.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections import OrderedDict
from http import HTTPStatus
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi import FastAPI, Header, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from swagger_ui_bundle import swagger_ui_path

from arena import replay as replay_mod
from arena.store import (
    FINISHED,
    StoreError,
    UnknownBot,
    UnknownLadder,
    describe_error,
)
from arena.store.browse import MatchDetail, Queries, UnknownMatch

from . import models, site
from .disclosure import Disclosure, MatchView
from .frames import build_frames, card_legend
from .live import Feed, Feeds, Snapshot
from .owners import ADMIN_KEY_HEADER, BOT_KEY_HEADER, OWNER_KEY_HEADER, Credential, may_read_logs
from .queries import Reader

log = logging.getLogger("arena.web")

LADDER = PathParam(description="ladder name", max_length=64)
BOT_NAME_MAX = 72  # a name of 64 and a version's "@N"
BOT = PathParam(description="bot name (a version: NAME@N)", max_length=BOT_NAME_MAX)
INDEX = PathParam(description="the match's index in its ladder's schedule", ge=0, le=2**53)
LIMIT = Query(50, ge=1, le=200, description="matches per page")
BEFORE = Query(None, ge=1, le=2**62, description="the `next` of the previous page")

# FastAPI's `responses`: extra answers a route documents in /openapi.json.
Responses = dict[int | str, dict[str, Any]]
NOT_FOUND: Responses = {
    404: {"model": models.ErrorOut, "description": "no such ladder, bot or match"}
}
SWAGGER_ASSETS = "/api/docs/assets"  # where Swagger UI's own files are served
BAD_INPUT: Responses = {422: {"model": models.ErrorOut, "description": "a parameter is not valid"}}


class FramesCache:
    """The frames of completed matches, most recently used kept: a completed match's replay
    never changes, and a page that many people open at once is rebuilt only once."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[tuple[str, int], list[dict]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, detail: MatchDetail) -> list[dict]:
        key = (detail.match.ladder, detail.match.index)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        assert detail.replay is not None
        frames = build_frames(detail.replay)
        if self.size:
            with self._lock:
                self._items[key] = frames
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return frames


def create_app(
    store_path: str | Path,
    *,
    live: site.LiveSource | None = None,
    frames_cache: int = 32,
    title: str = "Arena",
    live_interval: float = 1.0,
    admin_key: str | None = None,
) -> FastAPI:
    """The web app over the database at `store_path` (opened read-only; raises StoreError,
    SchemaTooNew included, at once if it cannot be read). `live` shows matches in progress;
    `frames_cache` is how many completed matches' frames to keep in memory; `live_interval`
    how often (seconds) a watched match or ladder is read again for its event stream;
    `admin_key` (arena serve's) opens every bot's log excerpts (owners.may_read_logs)."""
    reader = Reader(store_path)
    reader.store()  # fail now, with the store's message, rather than on the first request
    env = site.make_env()
    env.globals["site_title"] = title
    cache = FramesCache(frames_cache)
    public = Disclosure(frames_cache=cache)  # every view below shows matches through it
    h2h = site.HeadToHeadCache()
    app = FastAPI(
        title=f"{title} API",
        version="1",
        description="Read-only JSON API over Arena's ladders, ratings, bots and matches. "
        'Errors are {"error": {"status", "message"}}.',
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.reader = reader
    app.state.owners_api = False  # arena serve adds the owners' API (arena/service/submissions.py)
    app.state.live = live
    feeds = app.state.feeds = Feeds(interval=live_interval)  # close() ends every stream
    app.mount("/static", StaticFiles(directory=str(site.STATIC)), name="static")
    # Swagger UI's files come from a package, not a CDN: the docs work without internet.
    app.mount(SWAGGER_ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="swagger-ui")

    def queries() -> Queries:
        return reader.queries()

    def urls(request: Request) -> site.ServerUrls:
        return site.ServerUrls(root=request.scope.get("root_path", "").rstrip("/"))

    def render(request: Request, page: site.Page, status: int = 200) -> HTMLResponse:
        template, context = page
        html = env.get_template(template).render(url=urls(request), **context)
        return HTMLResponse(html, status_code=status)

    def error_page(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith(
            f"{request.scope.get('root_path', '')}/api/"
        ) or request.url.path.startswith("/api/"):
            return JSONResponse(
                {"error": {"status": status, "message": message}}, status_code=status
            )
        titles = {400: "Bad request", 404: "Not found", 503: "Unavailable"}
        html = env.get_template("error.html").render(
            url=urls(request), title=titles.get(status, "Error"), status=status, message=message
        )
        return HTMLResponse(html, status_code=status)

    # ------------------------------------------------------------------------ error handlers

    @app.exception_handler(UnknownLadder)
    @app.exception_handler(UnknownBot)
    @app.exception_handler(UnknownMatch)
    async def not_found(request: Request, exc: Exception) -> Response:
        return error_page(request, 404, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # A route's own 404 (the admin API's "there is no bot called ...") keeps its message;
        # only a path that matches no route gets the generic one.
        message = (
            f"there is no page at {request.url.path}"
            if exc.status_code == 404 and exc.detail == HTTPStatus.NOT_FOUND.phrase
            else str(exc.detail)
        )
        page = error_page(request, exc.status_code, message)
        page.headers.update(exc.headers or {})  # a 429's Retry-After, a 401's WWW-Authenticate
        return page

    @app.exception_handler(RequestValidationError)
    async def bad_input(request: Request, exc: RequestValidationError) -> Response:
        problems = []
        for e in exc.errors():
            where = ".".join(str(p) for p in e.get("loc", ()) if p not in ("query", "path"))
            problems.append(
                f"{where or 'request'}: {e.get('msg', 'not valid')}"
                + (
                    f" (got {_shortened(repr(e['input']))})"
                    if "input" in e and not isinstance(e["input"], dict)
                    else ""
                )
            )
        message = "; ".join(problems)
        api = request.url.path.startswith(f"{request.scope.get('root_path', '')}/api/")
        return error_page(request, 422 if api else 400, message)

    @app.exception_handler(StoreError)
    async def store_error(request: Request, exc: StoreError) -> Response:
        return error_page(request, 503, str(exc))

    @app.exception_handler(sqlite3.Error)  # a damaged page met mid-query, say
    async def sqlite_error(request: Request, exc: sqlite3.Error) -> Response:
        return error_page(request, 503, str(describe_error(str(store_path), exc)))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> Response:
        log.exception("error serving %s", request.url.path)
        return error_page(
            request, 500, "the server failed to build this page; the error is in the server's log"
        )

    # ---------------------------------------------------------------------------- pages

    def page(path: str):
        """An HTML page's route (left out of the API's schema)."""
        return app.get(path, response_class=HTMLResponse, include_in_schema=False)

    def api(path: str, model: Any, tag: str, responses: Responses | None = None):
        """A JSON API route: what it returns, its group in the docs, and the errors it
        documents (by default an unknown ladder, bot or match, and a parameter not valid)."""
        if responses is None:
            responses = {**NOT_FOUND, **BAD_INPUT}
        return app.get(path, response_model=model, tags=[tag], responses=responses)

    @page("/")
    def index_html(request: Request) -> HTMLResponse:
        return render(request, site.index_page(queries()))

    @page("/ladders/{ladder}")
    def ladder_html(request: Request, ladder: str = LADDER) -> HTMLResponse:
        return render(request, site.ladder_page(queries(), ladder, h2h))

    @page("/comparisons/{ladder}")
    def comparison_html(request: Request, ladder: str = LADDER) -> HTMLResponse:
        return render(request, site.comparison_page(queries(), ladder))

    @page("/bots")
    def bots_html(request: Request) -> HTMLResponse:
        return render(request, site.bots_page(queries()))

    @page("/bots/{bot}")
    def bot_html(request: Request, bot: str = BOT) -> HTMLResponse:
        template, context = site.bot_page(queries(), bot)
        # The owner's part (_owner.html) where the owners' API is served (arena serve).
        return render(request, (template, {**context, "owners_api": app.state.owners_api}))

    @page("/matches")
    def matches_html(
        request: Request,
        ladder: str | None = Query(None, max_length=64),
        bot: str | None = Query(None, max_length=BOT_NAME_MAX),
        opponent: str | None = Query(None, max_length=BOT_NAME_MAX),
        status: str | None = Query(None, max_length=32),
        before: int | None = BEFORE,
        limit: int = LIMIT,
    ) -> HTMLResponse:
        # The filter form sends empty strings for "any".
        status_value = _status(status)
        _check_opponent(bot or None, opponent or None, status_value)
        return render(
            request,
            site.matches_page(
                queries(),
                ladder=ladder or None,
                bot=bot or None,
                status=status_value,
                before=before,
                limit=limit,
                urls=urls(request),
                opponent=opponent or None,
            ),
        )

    @page("/ladders/{ladder}/matches/{index}")
    def match_html(request: Request, ladder: str = LADDER, index: int = INDEX) -> HTMLResponse:
        return render(
            request, site.match_page(queries(), ladder, index, live, urls(request), public)
        )

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        # Browsers ask for it on a first visit whatever the page links to.
        return FileResponse(site.STATIC / "favicon.svg", media_type="image/svg+xml")

    @page("/api/docs")
    def api_docs(request: Request) -> HTMLResponse:
        root = urls(request).root
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title}: documentation",
            swagger_js_url=f"{root}{SWAGGER_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{SWAGGER_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}/static/favicon.svg",
        )

    # ------------------------------------------------------------------------------ API

    @api("/api/ladders", list[models.LadderOut], "ladders", responses={})
    def api_ladders() -> Any:
        """Every ladder, newest first."""
        return [_plain(r) for r in queries().ladders()]

    @api("/api/ladders/{ladder}", models.RankingsOut, "ladders")
    def api_rankings(ladder: str = LADDER) -> Any:
        """A ladder and its standings, best first by the conservative rating mu - 3 sigma."""
        info, standings = queries().standings(ladder)
        return {"ladder": _plain(info), "standings": [_plain(s) for s in standings]}

    @api("/api/ladders/{ladder}/head-to-head", list[models.HeadToHeadOut], "ladders")
    def api_head_to_head(
        ladder: str = LADDER,
        bot: str | None = Query(None, max_length=BOT_NAME_MAX, description="only this bot's rows"),
    ) -> Any:
        """For each bot and opponent, how the bot placed against the opponent in their common
        completed matches; only matches of finished sets count (docs/web.md)."""
        return [_plain(h) for h in queries().head_to_head(ladder=ladder, bot=bot)]

    @api("/api/bots", list[models.BotOut], "bots", responses={})
    def api_bots() -> Any:
        """Every registered bot (removed ones included, marked), by name."""
        return [_plain(b) for b in queries().bots()]

    @api("/api/bots/{bot}", models.BotDetailOut, "bots")
    def api_bot(
        bot: str = BOT,
        recent: int = Query(20, ge=1, le=200, description="how many recent matches and faults"),
    ) -> Any:
        """A bot: its standing in each ladder, its recent completed matches and faults."""
        q = queries()
        info = q.bot(bot)
        return {
            "bot": _plain(info),
            "ladders": [_plain(r) for r in q.bot_ladders(bot)],
            "versions": [_plain(v) for v in q.versions(bot)],
            "recent_matches": [_plain(m) for m in q.recent_matches(bot, recent)],
            "recent_faults": [_plain(f) for f in public.faults(q.bot_faults(bot, recent))],
        }

    @api(
        "/api/bots/{bot}/faults",
        models.BotFaultLogsOut,
        "bots",
        responses={
            401: {"model": models.ErrorOut, "description": "no key given"},
            403: {"model": models.ErrorOut, "description": "the key does not open these logs"},
            **NOT_FOUND,
            **BAD_INPUT,
        },
    )
    def api_bot_faults(
        response: Response,
        bot: str = BOT,
        limit: int = Query(20, ge=1, le=200, description="how many recent faulted matches"),
        x_bot_key: str | None = Header(
            None, max_length=512, description="the bot's play token (its owner's)"
        ),
        x_admin_key: str | None = Header(
            None, max_length=512, description="the server's admin key (arena serve)"
        ),
        x_owner_key: str | None = Header(
            None, max_length=512, description="the bot's owner key (docs/submit.md)"
        ),
    ) -> Any:
        """The bot's recent faults with the end of its log as each match ended, for its owner
        (the owner key in X-Owner-Key, or the bot's token in X-Bot-Key) or the organiser
        (X-Admin-Key). Fault details follow
        the public rule (withheld until the set is finished); the excerpt is the bot's own
        output."""
        q = queries()
        info = q.bot(bot)
        credential = Credential(bot_key=x_bot_key, admin_key=x_admin_key, owner_key=x_owner_key)
        if not credential.given:
            raise HTTPException(
                401,
                f"the log excerpts of bot {bot} are for its owner: give the owner key in the "
                f"{OWNER_KEY_HEADER} header or the bot's token in {BOT_KEY_HEADER} (or the "
                f"admin key in {ADMIN_KEY_HEADER})",
            )
        if not may_read_logs(q, info.name, credential, admin_key):
            raise HTTPException(
                403,
                f"this key does not open the log excerpts of bot {bot}: give its owner key in "
                f"{OWNER_KEY_HEADER}, that bot's own token in {BOT_KEY_HEADER} (a version's "
                f"token opens that version only), or the server's admin key in {ADMIN_KEY_HEADER}",
            )
        response.headers["Cache-Control"] = "no-store"  # private: no shared cache keeps it
        excerpts = q.bot_fault_logs(info.name, limit)
        faults = [
            {**_plain(f), "excerpt": excerpts.get((f.ladder, f.index, f.seat))}
            for f in public.faults(q.bot_faults(info.name, limit))
        ]
        return {"bot": info.name, "remote": info.remote, "faults": faults}

    @api("/api/bots/{bot}/history", list[models.HistoryOut], "bots")
    def api_history(
        bot: str = BOT,
        ladder: str | None = Query(None, max_length=64, description="only this ladder"),
    ) -> Any:
        """The bot's rating after each rated match, per ladder."""
        history = queries().rating_history(bot, ladder)
        return [
            {
                "ladder": name,
                "bot": bot,
                "points": [
                    {
                        "index": p.index,
                        "mu": p.mu,
                        "sigma": p.sigma,
                        "conservative": p.mu - 3 * p.sigma,
                    }
                    for p in points
                ],
            }
            for name, points in history.items()
        ]

    @api("/api/matches", models.MatchListOut, "matches")
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
        before: int | None = BEFORE,
        limit: int = LIMIT,
    ) -> Any:
        """Matches newest first (schedule order), filtered, a page at a time."""
        status_value = status.value if status else None
        _check_opponent(bot, opponent, status_value)
        if opponent is not None:
            page = queries().matches_against(
                bot or "", opponent, ladder=ladder, before=before, limit=limit
            )
        else:
            page = queries().match_list(
                ladder=ladder, bot=bot, status=status_value, before=before, limit=limit
            )
        return {"matches": [_plain(m) for m in page.matches], "next": page.next}

    @api("/api/ladders/{ladder}/matches/{index}", models.MatchOut, "matches")
    def api_match(
        ladder: str = LADDER,
        index: int = INDEX,
        frames: bool = Query(False, description="include the replay's frames"),
    ) -> Any:
        """One match: seats, results, faults and, with frames=true, the replay's frames.
        Until the match's duplicate set is finished, its seed and fault details are null and
        its frames public (no hands, no actions): `withheld` says so (docs/web.md)."""
        view = public.match(queries().match(ladder, index), frames=frames, live=live)
        # Everything is plain JSON already: skip re-validating hundreds of frames.
        return JSONResponse(match_out(view))

    @api("/api/ladders/{ladder}/matches/{index}/live", models.LiveOut, "matches")
    def api_live(
        ladder: str = LADDER,
        index: int = INDEX,
        since: int = Query(
            0, ge=0, le=10**7, description="frames already held: send from this one"
        ),
    ) -> Any:
        """A match as it is being played: its public frames from `since` on (no hands, no
        actions: what a spectator may see). Poll about once a second; when `done`, the match
        is over and its full replay is on the match page."""
        q = queries()
        status = q.match_status(ladder, index)
        frames: list[dict] = []
        source = "store"
        try:
            frames, source = public.live_frames(
                status, lambda: q.match(ladder, index), live, ladder, index, since
            )
        except replay_mod.ReplayError as err:
            log.warning("live frames of %s %s: %s", ladder, index, err)
        return JSONResponse(
            {
                "ladder": ladder,
                "index": index,
                "status": status,
                "since": since,
                "frames": frames,
                "source": source,
                "done": status in FINISHED,
            }
        )

    # ------------------------------------------------------------ live event streams

    def read_match(ladder: str, index: int) -> Any:
        def read(last: Snapshot) -> Snapshot | None:
            # The public live feed, as /live gives it: through the public's Disclosure.
            q = queries()
            status = q.match_status(ladder, index)
            have = len(last.frames)
            frames, _ = public.live_frames(
                status, lambda: q.match(ladder, index), live, ladder, index, have
            )
            new = [f for f in frames if f["n"] >= have]
            if not new and status == last.status:
                return None
            return Snapshot(status=status, done=status in FINISHED, frames=last.frames + new)

        return read

    def read_ladder(ladder: str, root: str) -> Any:
        server = site.ServerUrls(root=root)

        def read(last: Snapshot) -> Snapshot | None:
            name, context = site.ladder_live(queries(), ladder, h2h)
            html = env.get_template(name).render(url=server, **context)
            return None if html == last.html else Snapshot(html=html)

        return read

    def match_frames(feed: Feed, have: int) -> tuple[str, int]:
        return feed.frames_event(have), max(have, len(feed.snapshot.frames))

    def ladder_event(feed: Feed, have: int) -> tuple[str, int]:
        return feed.html_event(), have

    def event_stream(events: Any) -> StreamingResponse:
        return StreamingResponse(
            events,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.get("/api/ladders/{ladder}/matches/{index}/events", include_in_schema=False)
    async def match_events(
        request: Request,
        ladder: str = LADDER,
        index: int = INDEX,
        since: int = Query(0, ge=0, le=MAX_FRAMES),
    ) -> StreamingResponse:
        """Server-sent events: `frames` events ({status, done, since, frames}) with the public
        frames from `since` on, then new ones as the match is played (docs/web.md)."""
        # An unknown ladder or match is a 404 now (on a worker thread: its own connection).
        await anyio.to_thread.run_sync(lambda: queries().match_status(ladder, index))
        have = max(since, resumed_from(request.headers.get("last-event-id")))
        return event_stream(
            feeds.stream(("match", ladder, index), read_match(ladder, index), match_frames, have)
        )

    @app.get("/api/ladders/{ladder}/events", include_in_schema=False)
    async def ladder_events(request: Request, ladder: str = LADDER) -> StreamingResponse:
        """Server-sent events: a `ladder` event ({html}) with the ladder page's changing part
        (`_ladder_live.html`) at once and whenever it changes."""
        await anyio.to_thread.run_sync(lambda: queries().ladder(ladder))
        root = urls(request).root
        return event_stream(
            feeds.stream(("ladder", ladder, root), read_ladder(ladder, root), ladder_event)
        )

    return app


def full_match(app: FastAPI, ladder: str, index: int, frames: bool) -> JSONResponse:
    """A match with nothing withheld (seed, fault details, frames with hands), whether or not
    its set is finished: for the admin API, which checks its key before calling this. Raises
    UnknownLadder or UnknownMatch, which `app` answers with a 404."""
    view = Disclosure(full=True).match(
        app.state.reader.queries().match(ladder, index), frames=frames, live=app.state.live
    )
    return JSONResponse(match_out(view))


def match_out(view: MatchView) -> dict[str, Any]:
    """A match as the API gives it (models.MatchOut), from what `view` may show."""
    out = _plain(view.detail)
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


MAX_FRAMES = 10**7  # the most frames a stream resumes from (`since`, Last-Event-ID)


def resumed_from(last_event_id: str | None) -> int:
    """The frame a reconnecting match stream resumes from: its Last-Event-ID, which the browser
    sends back as the id this server gave its last event (a count of frames, ASCII digits).
    Absent or empty: 0. Anything else is no id this server sent: refused with a 400 (HTTPException)
    rather than guessed at."""
    if not last_event_id:
        return 0
    if (
        len(last_event_id) > len(str(MAX_FRAMES))
        or not last_event_id.isascii()
        or not last_event_id.isdigit()
        or int(last_event_id) > MAX_FRAMES
    ):
        raise HTTPException(
            400,
            f"the Last-Event-ID header is {_shortened(last_event_id, 40)!r}; it is the id of "
            f"the last event this server sent, a count of frames (0 to {MAX_FRAMES}): send it "
            "back as received, or leave it out to start from `since`",
        )
    return int(last_event_id)


def _shortened(text: str, limit: int = 200) -> str:
    # A bad value is echoed in the error, but not a megabyte of it.
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _status(value: Any) -> str | None:
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


def _check_opponent(bot: str | None, opponent: str | None, status: str | None) -> None:
    """`opponent` filters a bot's completed matches: it needs `bot`, and no other status."""
    if opponent is None:
        return
    if bot is None:
        raise RequestValidationError(
            [
                {
                    "loc": ("query", "opponent"),
                    "input": opponent,
                    "msg": "needs a bot too: the matches of bot against opponent",
                }
            ]
        )
    if status not in (None, "completed"):
        raise RequestValidationError(
            [
                {
                    "loc": ("query", "status"),
                    "input": status,
                    "msg": "with an opponent, only completed matches are listed: leave status "
                    "empty or give completed",
                }
            ]
        )


def _plain(obj: Any) -> Any:
    """A dataclass record (slots) as plain data for the response models."""
    import dataclasses

    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, list):
        return [_plain(x) for x in obj]
    return obj
