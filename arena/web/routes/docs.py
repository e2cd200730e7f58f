"""The API's documentation (Swagger UI, its files served from a package, not a CDN: the docs
work without internet) and the favicon."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from .. import site
from .common import Web

SWAGGER_ASSETS = "/api/docs/assets"  # where Swagger UI's own files are served (create_app)


def router(web: Web) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/favicon.ico")
    def favicon() -> FileResponse:
        # Browsers ask for it on a first visit whatever the page links to.
        return FileResponse(site.STATIC / "favicon.svg", media_type="image/svg+xml")

    @router.get("/api/docs", response_class=HTMLResponse)
    def api_docs(request: Request) -> HTMLResponse:
        app = request.app
        root = web.urls(request).root
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title}: documentation",
            swagger_js_url=f"{root}{SWAGGER_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{SWAGGER_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}/static/favicon.svg",
        )

    return router
