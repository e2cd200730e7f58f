"""The pages issue 33 asked for, in headless chromium at 1280 and 390 px over the session's
demo database and server: the home page as a dashboard, the ladder page's rank movement,
recent results and ratings chart (its Bot column in sight when the table scrolls sideways),
the bot page's result filters and rating changes, the organiser's view with the admin key,
the API docs linked from every page with hand-written summaries and the keys' schemes, and a
comparison's page. No console error, and the page itself never scrolls sideways."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from arena.store import Store
from arena.web.factory import create_app
from arena.web.sample import play_comparison
from tests.web.support import ADMIN_KEY, ServerThread, screenshot_path

VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(params=list(VIEWPORTS), ids=list(VIEWPORTS))
def viewed(request, browser):
    context = browser.new_context(viewport=VIEWPORTS[request.param])
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    yield request.param, page, problems
    context.close()


@pytest.fixture(scope="module")
def comparison_server(tmp_path_factory):
    """A comparison of 15 deals, 90 matches, stored as `arena compare` stores one and played
    in-process by random legal moves (arena.web.sample.play_comparison: a fraction of a second,
    where a real run of its bots takes about 17), served."""
    db = tmp_path_factory.mktemp("comparison") / "arena.db"
    with Store(db) as store:
        for bot in ("v2", "v1", "o1", "o2"):
            store.add_bot(bot, remote=True)
        play_comparison(store, "c1", "v2", "v1", ("o1", "o2"), deals=15)
    srv = ServerThread(create_app(db)).start()
    yield srv
    srv.stop()


def _fits(page) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], (page.url, widths)


def test_home_ladder_and_bot_pages(server, web_db, viewed):
    name, page, problems = viewed
    with Store(web_db, readonly=True) as store:
        running = {(m.ladder, m.index) for m in store.matches("balloon3", ("running",))}
        running |= {(m.ladder, m.index) for m in store.matches("boom4", ("running",))}

    # Home: what is being played now, each ladder's progress and time left.
    page.goto(server.url + "/")
    playing = page.locator("#playing li")
    expect(playing).to_have_count(len(running))
    for ladder, index in running:
        link = page.locator(f'#playing a[href="/ladders/{ladder}/matches/{index}"]')
        expect(link).to_be_visible()
    expect(page.locator("#ladders progress")).to_have_count(2)
    expect(page.locator("#ladders td.time-left").first).to_have_text("about a minute")
    expect(page.locator("#api-docs-link")).to_have_attribute("href", "/api/docs")
    _fits(page)
    suffix = "-phone" if name == "phone" else ""
    page.screenshot(path=screenshot_path(f"home{suffix}.png"), full_page=True)

    # Ladder: rank movement, recent results, the chart of its leaders.
    page.goto(server.url + "/ladders/balloon3")
    moves = page.locator("#leaderboard td.move")
    expect(moves).to_have_count(6)
    assert {t.strip()[:1] for t in moves.all_inner_texts()} <= {"▲", "▼", "=", "n"}
    expect(page.locator("#ladder-recent tbody tr")).to_have_count(10)
    chart = page.locator("#ladder-chart")
    chart.scroll_into_view_if_needed()
    page.wait_for_function("document.getElementById('ladder-chart').naturalWidth > 0")
    # μ ± σ on one line, and on a phone the Bot column stays in sight as the table scrolls.
    cell = page.locator("#leaderboard td.mu-sigma").first
    line = page.evaluate("parseFloat(getComputedStyle(document.body).lineHeight) || 20")
    assert cell.bounding_box()["height"] < 2 * line
    box = page.locator("#leaderboard").locator("xpath=..")
    bot = page.locator("#leaderboard td.bot-col").first
    x_before = bot.bounding_box()["x"]
    box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
    scrolled = box.evaluate("b => b.scrollLeft")
    if name == "phone":
        assert scrolled > 0  # the table is wider than the phone: it scrolls in its box
        assert bot.bounding_box()["x"] >= box.bounding_box()["x"] - 1
        assert bot.is_visible()
    else:
        assert abs(bot.bounding_box()["x"] - x_before) < 1 or scrolled > 0
    _fits(page)

    # Bot: each result's rating change, and its results filtered by its faults.
    page.goto(server.url + "/bots/frank")
    changes = page.locator("#recent td.change")
    assert any(t.strip().startswith(("+", "-")) for t in changes.all_inner_texts())
    page.check('#result-filters input[name="faulted"]')
    page.click("#result-filters button[type=submit]")
    expect(page).to_have_url(f"{server.url}/matches?bot=frank&ladder=&opponent=&faulted=true")
    rows = page.locator("#matches tbody tr")
    expect(rows.first).to_be_visible()
    for i in range(rows.count()):
        expect(rows.nth(i).locator(".seat.faulted", has_text="frank")).to_have_count(1)
    _fits(page)
    assert problems == []


def test_the_organisers_view_and_the_api_docs(web_db, browser):
    """/admin with the admin key (a server of the session's database that has one), and the
    API docs: linked from the pages, summaries written by hand, the keys' schemes."""
    server = ServerThread(create_app(web_db, admin_key=ADMIN_KEY)).start()
    try:
        for name, viewport in VIEWPORTS.items():
            context = browser.new_context(viewport=viewport)
            page = context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda e, seen=problems: seen.append(str(e)))
            page.goto(server.url + "/")
            page.click("#admin-link")
            page.fill("#admin-key", "a-guess")
            page.click("#admin-form button[type=submit]")
            expect(page.locator("#admin-status")).to_contain_text("not this server's admin key")
            expect(page.locator("#bot-health")).to_be_hidden()
            page.fill("#admin-key", ADMIN_KEY)
            page.click("#admin-form button[type=submit]")
            rows = page.locator("#bot-health tbody tr")
            expect(rows).to_have_count(6)
            # The suspended bot first, with its reason.
            expect(rows.first).to_have_attribute("data-bot", "frank")
            expect(rows.first.locator("td").nth(1)).to_contain_text("suspended: crashed")
            expect(page.locator("#admin-status")).to_have_text("6 bots, 1 suspended.")
            _fits(page)
            page.screenshot(path=screenshot_path(f"admin{'-phone' if name == 'phone' else ''}.png"))
            page.click("#admin-forget")
            expect(page.locator("#bot-health")).to_be_hidden()
            assert page.evaluate("sessionStorage.length") == 0
            # Only the refused key's request is an error in the browser's console.
            assert problems == []
            context.close()
        doc = httpx.get(server.url + "/openapi.json").json()
        summaries = [op["summary"] for ops in doc["paths"].values() for op in ops.values()]
        assert summaries and not [s for s in summaries if s.startswith("Api ")], summaries
        assert "read-only" not in doc["info"]["description"].lower()
        schemes = doc["components"]["securitySchemes"]
        assert {s["name"] for s in schemes.values()} == {"X-Owner-Key", "X-Bot-Key", "X-Admin-Key"}
        logs = doc["paths"]["/api/ladders/{ladder}/matches/{index}/logs"]["get"]
        assert {next(iter(s)) for s in logs["security"]} == set(schemes)
    finally:
        server.stop()


def test_the_comparison_page(comparison_server, viewed):
    """Issue 33: on a phone the comparison page was 11,000 px tall with its 60 match rows, and
    its LLR chart had no values. Now: the chart as wide as the page allows, its values legible;
    the paired table of 15 deals folded under its summary, and in its own scroll box once
    opened; the latest 20 of the 90 matches; nothing scrolls sideways."""
    name, page, problems = viewed
    page.goto(comparison_server.url + "/comparisons/c1")
    width = page.evaluate("window.innerWidth")
    chart = page.locator("#llr-chart")
    expect(chart).to_be_visible()
    expect(page.locator("#llr-line")).to_be_visible()
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    if name == "phone":
        assert box["width"] >= 0.9 * width  # the whole width: no margins around it
    ticks = page.locator("#llr-chart text.y-tick")
    assert ticks.count() >= 2
    assert min(t.bounding_box()["height"] for t in ticks.all()) >= 9  # was 5 px on a phone
    # Folded: 15 deals' rows under the summary, the latest 20 matches of 90.
    expect(page.locator("#paired-deals tbody tr")).to_have_count(15)
    expect(page.locator("#paired-deals")).to_be_hidden()
    expect(page.locator("#matches tbody tr")).to_have_count(20)
    expect(page.locator('a[href="/matches?ladder=c1"]')).to_be_visible()
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 4 * page.viewport_size["height"], height  # 11,000 px on a phone before
    _fits(page)
    suffix = "-phone" if name == "phone" else ""
    page.screenshot(path=screenshot_path(f"comparison{suffix}.png"), full_page=True)
    # Opened: every deal, the table scrolling in its own box where it is wider than a phone.
    page.click("#paired summary")
    table = page.locator("#paired-deals")
    expect(table).to_be_visible()
    page.locator("#paired-deals tbody tr").last.scroll_into_view_if_needed()
    expect(page.locator('#paired-deals tr[data-deal="14"]')).to_be_in_viewport()
    scroller = table.locator("xpath=..")
    assert scroller.bounding_box()["x"] + scroller.bounding_box()["width"] <= width
    _fits(page)
    assert problems == []
