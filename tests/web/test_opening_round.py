"""A ladder's opening round on its page (headless chromium) and in the JSON API: how many of its
single matches are completed while it lasts (with a progress bar), then "done" and the duplicate
sets' progress; a ladder without one shows nothing of it. The ladders are stored by the store
and their matches recorded by its own recording (arena.web.sample.play_ladder: random legal
moves), served by the app in a thread; the page is read again as the ladder goes on."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from arena.schedule import make_schedule
from arena.store import Store
from arena.web.factory import create_app
from arena.web.sample import play_ladder
from tests.web.support import ServerThread, screenshot_path

BOTS = ["b1", "b2", "b3", "b4", "b5", "b6", "b7"]


@pytest.fixture
def ladders(tmp_path):
    """Ladder "op" (Balloon for 3 among BOTS, with an opening round) and "plain" (none), 12
    matches of each played, served."""
    db = tmp_path / "arena.db"
    with Store(db) as store:
        for bot in BOTS:
            store.add_bot(bot, remote=True)
        store.create_ladder("op", "balloon", 3, BOTS, seed=5, opening_round=True)
        store.create_ladder("plain", "balloon", 3, BOTS, seed=5)
        for name in ("op", "plain"):
            play_ladder(store, name, store.matches(name, ("pending",))[:12], seed=1)
    server = ServerThread(create_app(db)).start()
    yield db, server
    server.stop()


def test_the_ladder_page_shows_the_opening_round_then_the_sets(ladders, page):
    db, server = ladders
    opening = len(make_schedule(BOTS, 3, 1, 5, opening_round=True)) - len(
        make_schedule(BOTS, 3, 1, 5)
    )
    sets = opening  # each table of the round once, then each as a set of 3
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)

    page.goto(f"{server.url}/ladders/op")
    shown = page.locator("#opening-round")
    expect(shown).to_have_text(
        f"Opening round: 12 of {opening} single matches completed; then {sets} duplicate sets "
        f"({3 * sets} matches): 0 completed."
    )
    bar = shown.locator("progress")
    expect(bar).to_have_attribute("max", str(opening))
    expect(bar).to_have_attribute("value", "12")
    page.screenshot(path=screenshot_path("ladder-opening-round.png"), full_page=True)
    page.goto(f"{server.url}/ladders/plain")
    expect(page.locator("#leaderboard")).to_be_visible()
    expect(page.locator("#opening-round")).to_have_count(0)

    api = httpx.get(f"{server.url}/api/ladders/op", timeout=10).json()["ladder"]
    assert (api["opening"], api["opening_completed"]) == (opening, 12)
    listed = {r["name"]: r for r in httpx.get(f"{server.url}/api/ladders", timeout=10).json()}
    assert (listed["plain"]["opening"], listed["plain"]["opening_completed"]) == (0, 0)

    # The rest of the opening round and two sets: done, and the sets' progress.
    with Store(db) as store:
        pending = store.matches("op", ("pending",))
        play_ladder(store, "op", pending[: opening - 12 + 6], seed=2)
    page.goto(f"{server.url}/ladders/op")
    expect(shown).to_have_text(
        f"Opening round: {opening} of {opening} single matches completed (done); then {sets} "
        f"duplicate sets ({3 * sets} matches): 6 completed."
    )
    expect(shown.locator("progress")).to_have_count(0)
    assert problems == []


def test_the_opening_round_line_fits_a_phone(ladders, browser):
    _, server = ladders
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{server.url}/ladders/op")
        expect(page.locator("#opening-round progress")).to_be_visible()
        widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], widths
        page.screenshot(path=screenshot_path("ladder-opening-round-phone.png"), full_page=True)
    finally:
        context.close()
