"""The HTML pages of site.PAGES, each served at its address (paths.PLACES) by one route made
here from its path's parameters (common.PATH_PARAMS), left out of the API's schema. Handlers
are plain functions: FastAPI runs them on its worker threads, so SQLite never blocks the event
loop."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from .. import site
from ..paths import PLACES
from .common import PATH_PARAMS, Web


def router(web: Web) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    for kind in site.PAGES:
        place = PLACES[kind.place]
        router.add_api_route(
            place.server,
            _endpoint(web, kind, place.params),
            methods=["GET"],
            response_class=HTMLResponse,
            name=f"{kind.place}_page",
        )
    return router


def _endpoint(web: Web, kind: site.PageKind, params: tuple[str, ...]) -> Callable[..., Any]:
    def page(request: Request, **values: Any) -> HTMLResponse:
        return web.render(request, kind.build(web.view(request), **values))

    # FastAPI reads a route's parameters from its signature: the request, then the path's.
    page.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request)]
        + [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=PATH_PARAMS[name][0],
                default=PATH_PARAMS[name][1],
            )
            for name in params
        ]
    )
    return page
