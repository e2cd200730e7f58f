"""Fixtures of the web tests: one database of real matches per session, the app on it, a
server in a thread, and a headless chromium driven by Playwright."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.web.factory import create_app
from tests.web.support import (
    ADMIN_KEY,
    CHROMIUM,
    CHROMIUM_ARGS,
    FakeLive,
    LaunchedLadder,
    ServerThread,
    build_db,
    run_launched_ladder,
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that drives the browser is a `browser` test (scripts/test --quick skips those)."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def web_db(tmp_path_factory) -> Path:
    return build_db(tmp_path_factory.mktemp("web") / "arena.db")


@pytest.fixture(scope="session")
def launched_ladder(tmp_path_factory) -> LaunchedLadder:
    """One real ladder run of launched bots, shared by the tests of what they leave to their
    owners (fault excerpts, match logs)."""
    return run_launched_ladder(tmp_path_factory.mktemp("launched"))


@pytest.fixture(scope="session")
def app(web_db):
    return create_app(web_db, admin_key=ADMIN_KEY)


@pytest.fixture(scope="session")
def client(app):
    from fastapi.testclient import TestClient

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="session")
def live(web_db) -> FakeLive:
    return FakeLive(web_db, "balloon3")


@pytest.fixture(scope="session")
def server(web_db, live):
    srv = ServerThread(create_app(web_db, live=live)).start()
    yield srv
    srv.stop()


# Package scope: Playwright's sync API holds a running event loop on this thread until it
# stops, and asyncio.run() refuses to start under it; so it stops before other packages' tests.
@pytest.fixture(scope="package")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"the browser tests need Debian's chromium at {CHROMIUM}; install it with "
            "scripts/setup --browser (scripts/test does that)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    yield pg
    context.close()
