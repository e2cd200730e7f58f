"""Competitions on the web, in a real browser: the home page's banner for a competition open or
in its finals, a competition's page in each phase (what comes next, the entrants, the finals'
progress, the final standings with their intervals and P(better than the next), the
crosstable) and the results archive downloaded from it, which verify accepts."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from arena.competitions import archive, lifecycle
from arena.competitions.config import parse
from arena.store import Store
from arena.web.factory import create_app
from tests.cli import ROOT
from tests.support.competitions import config_text, play_pending
from tests.web.support import ServerThread

RANDOM = "python example_bots/random_bot.py"
BOTS = 'bots = ["a", "b", "c", "d"]'


@pytest.fixture(scope="module")
def competitions_server(tmp_path_factory):
    """Three competitions: spring open, summer in its finals (one set played), autumn
    published."""
    db = tmp_path_factory.mktemp("competitions") / "arena.db"
    with Store(db) as store:
        for name in "abcd":
            store.add_bot(name, RANDOM, cwd=ROOT)
        for name in ("spring", "summer", "autumn"):
            lifecycle.create(store, parse(config_text(name, top=BOTS)), time.time())
        for name in ("summer", "autumn"):
            lifecycle.advance(store, name)
            lifecycle.advance(store, name)
        while store.get_competition("autumn").phase == "finals":
            play_pending(store, "autumn.finals")
            lifecycle.finals_round_over(store, store.get_competition("autumn"))
        standings = store.get_competition("autumn").standings
    srv = ServerThread(create_app(db)).start()
    yield srv, standings
    srv.stop()


def test_the_banner_leads_to_each_phase_of_a_competition(competitions_server, page):
    srv, standings = competitions_server
    page.goto(srv.url + "/")
    banners = page.locator(".competition-banner")
    expect(banners).to_have_count(2)  # spring (open) and summer (finals); autumn is over
    # The freeze is an hour after the competition was made: "1 h" if the page is read within
    # that second, "59 min" (or fewer on a slow machine) after it.
    expect(banners.nth(0)).to_contain_text(
        re.compile(r"spring is open for uploads: uploads close in (1 h|\d+ min) \(20")
    )
    expect(banners.nth(1)).to_contain_text("summer is in its finals")

    banners.nth(0).get_by_role("link", name="spring").click()
    expect(page.locator("#competition-phase .phase")).to_have_text("open")
    expect(page.locator("#open-ladder a")).to_have_text("spring.open")

    page.goto(srv.url + "/competitions/summer")
    expect(page.locator("#entrants")).to_have_text("a, b, c, d")
    expect(page.locator("#finals-progress")).to_contain_text(
        "0 of 12 matches scheduled so far played; 0 of 3 adjacent pairs settled; "
        "12 matches of the budget left"
    )
    expect(page.locator("#final-standings")).to_have_count(0)  # nothing before it is over
    expect(page.locator("#archive-link")).to_have_count(0)


def test_the_published_standings_and_the_archive(competitions_server, page):
    srv, standings = competitions_server
    page.goto(srv.url + "/competitions/autumn")
    expect(page.locator("#finals-end")).to_contain_text("at their budget of matches")
    rows = page.locator("#final-standings tbody tr")
    expect(rows).to_have_count(4)
    for i, s in enumerate(standings):
        cells = rows.nth(i).locator("td")
        expect(cells.nth(1)).to_have_text(s["bot"])
        expect(cells.nth(3)).to_have_text(f"{s['low']:.2f} to {s['high']:.2f}")
        better = "–" if s["p_better_than_next"] is None else f"{s['p_better_than_next']:.2f}"
        expect(cells.nth(4)).to_have_text(better)
    expect(page.locator("#crosstable tbody tr")).to_have_count(4)
    with page.expect_download() as download:
        page.locator("#archive-link").click()
    data = open(download.value.path(), "rb").read()
    assert download.value.suggested_filename == "autumn-results.zip"
    checked = archive.verify(data)
    assert checked.accepted and checked.matches == 24, checked.problems
