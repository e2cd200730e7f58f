"""The web app's factory: `create_app` builds the FastAPI app of HTML pages and a JSON API over
the store (read-only connections; arena serve adds the owners' and organiser's writes), from
the routers of arena/web/routes/ (one module a concern), the error answers of errors.py and the
API's description of apidoc.py.

`create_app(store_path, live=...)` returns the app; `arena web` serves it with uvicorn and
`arena serve` mounts it beside the referee (arena/service/webserver.py), passing a LiveSource
for matches in progress (see site.LiveSource and docs/web.md). Nothing here writes to the
store. Handlers are plain `def` functions, so FastAPI runs them on its worker threads and SQLite
never blocks the event loop; each worker thread has its own read-only connection
(reader.Reader).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from arena.store.browse import MatchDetail

from . import apidoc, errors, site
from .disclosure import Disclosure
from .frames import build_frames
from .live import Feeds
from .reader import Reader
from .routes import MODULES, docs
from .routes.common import Web


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
    web = Web(
        reader=reader,
        env=env,
        public=Disclosure(frames_cache=FramesCache(frames_cache)),
        h2h=site.HeadToHeadCache(),
        movement=site.MovementCache(),
        feeds=Feeds(interval=live_interval),
        live=live,
        admin_key=admin_key,
    )
    app = FastAPI(
        title=f"{title} API",
        version="1",
        description=apidoc.DESCRIPTION,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.web = web  # full_match (the admin API) reads through it
    app.state.reader = reader  # reader.close() lets the connections go (docs/web.md)
    app.state.owners_api = False  # arena serve adds the owners' API (arena/service/submissions.py)
    app.state.feeds = web.feeds  # close() ends every stream
    app.mount("/static", StaticFiles(directory=str(site.STATIC)), name="static")
    # Swagger UI's files come from a package, not a CDN: the docs work without internet.
    app.mount(docs.SWAGGER_ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="swagger-ui")
    errors.install(app, env, store_path)
    apidoc.install(app)
    for routes in MODULES:
        app.include_router(routes.router(web))
    return app
