"""Matches and ladders as they are played: a match's public frames polled (/live), and the
server-sent event streams of a match's frames and of a ladder page's changing part, fed by
arena/web/live.py's Feeds (one reader per watched match or ladder, whatever the watchers)."""

from __future__ import annotations

import logging
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse

from arena import replay as replay_mod
from arena.store import FINISHED

from .. import models, site
from ..live import Feed, Snapshot
from ..paths import PLACES, ServerUrls
from .common import INDEX, LADDER, Web, api, shortened

log = logging.getLogger("arena.web")

MAX_FRAMES = 10**7  # the most frames a stream resumes from (`since`, Last-Event-ID)


def router(web: Web) -> APIRouter:
    router = APIRouter(tags=["matches"])
    public, live = web.public, web.live

    @api(router, PLACES["live"].server, models.LiveOut)
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
        q = web.queries()
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

    def read_match(ladder: str, index: int) -> Any:
        def read(last: Snapshot) -> Snapshot | None:
            # The public live feed, as /live gives it: through the public's Disclosure.
            q = web.queries()
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
        server = ServerUrls(root=root)

        def read(last: Snapshot) -> Snapshot | None:
            name, context = site.ladder_live(web.queries(), ladder, web.h2h, web.movement)
            html = web.env.get_template(name).render(url=server, **context)
            return None if html == last.html else Snapshot(html=html)

        return read

    @router.get(PLACES["match_events"].server, include_in_schema=False)
    async def match_events(
        request: Request,
        ladder: str = LADDER,
        index: int = INDEX,
        since: int = Query(0, ge=0, le=MAX_FRAMES),
    ) -> StreamingResponse:
        """Server-sent events: `frames` events ({status, done, since, frames}) with the public
        frames from `since` on, then new ones as the match is played (docs/web.md)."""
        # An unknown ladder or match is a 404 now (on a worker thread: its own connection).
        await anyio.to_thread.run_sync(lambda: web.queries().match_status(ladder, index))
        have = max(since, resumed_from(request.headers.get("last-event-id")))
        return _event_stream(
            web.feeds.stream(
                ("match", ladder, index), read_match(ladder, index), _match_frames, have
            )
        )

    @router.get(PLACES["ladder_events"].server, include_in_schema=False)
    async def ladder_events(request: Request, ladder: str = LADDER) -> StreamingResponse:
        """Server-sent events: a `ladder` event ({html}) with the ladder page's changing part
        (`_ladder_live.html`) at once and whenever it changes."""
        await anyio.to_thread.run_sync(lambda: web.queries().ladder(ladder))
        root = web.urls(request).root
        return _event_stream(
            web.feeds.stream(("ladder", ladder, root), read_ladder(ladder, root), _ladder_event)
        )

    return router


def _match_frames(feed: Feed, have: int) -> tuple[str, int]:
    return feed.frames_event(have), max(have, len(feed.snapshot.frames))


def _ladder_event(feed: Feed, have: int) -> tuple[str, int]:
    return feed.html_event(), have


def _event_stream(events: Any) -> StreamingResponse:
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


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
            f"the Last-Event-ID header is {shortened(last_event_id, 40)!r}; it is the id of "
            f"the last event this server sent, a count of frames (0 to {MAX_FRAMES}): send it "
            "back as received, or leave it out to start from `since`",
        )
    return int(last_event_id)
