"""How the web app answers what goes wrong: an unknown ladder, bot or match is a 404 (an HTML
page, or a JSON {"error": {"status", "message"}} under /api/), a bad query parameter a 400 page
or a 422 JSON error naming the parameter, a database that cannot be read a 503; nothing shows
a stack trace."""

from __future__ import annotations

import logging
import sqlite3
from http import HTTPStatus
from pathlib import Path

import jinja2
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from arena.store import StoreError, UnknownBot, UnknownCompetition, UnknownLadder, describe_error
from arena.store.browse import UnknownMatch

from .paths import ServerUrls
from .routes.common import shortened

log = logging.getLogger("arena.web")

TITLES = {400: "Bad request", 404: "Not found", 503: "Unavailable"}


def install(app: FastAPI, env: jinja2.Environment, store_path: str | Path) -> None:
    """Answer errors on `app` with error pages (templates from `env`) or JSON errors."""

    def error_page(request: Request, status: int, message: str) -> Response:
        root = request.scope.get("root_path", "")
        if request.url.path.startswith(f"{root}/api/") or request.url.path.startswith("/api/"):
            return JSONResponse(
                {"error": {"status": status, "message": message}}, status_code=status
            )
        html = env.get_template("error.html").render(
            url=ServerUrls(root=root.rstrip("/")),
            title=TITLES.get(status, "Error"),
            status=status,
            message=message,
        )
        return HTMLResponse(html, status_code=status)

    @app.exception_handler(UnknownLadder)
    @app.exception_handler(UnknownBot)
    @app.exception_handler(UnknownMatch)
    @app.exception_handler(UnknownCompetition)
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
                    f" (got {shortened(repr(e['input']))})"
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
