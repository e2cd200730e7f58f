"""Every page in a real browser (Debian's chromium through Playwright), at a desktop's width and
a phone's (390 px): no sideways scroll, the header band across the whole width, each column's
header aligned like its numbers, no console error and no failed request (the favicon included),
the API documentation drawn with the network outside the server blocked, and the leaderboard's
rating intervals where the ratings put them."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from arena.store import Store
from tests.web.support import screenshot_path

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def _pages(db: Path) -> list[str]:
    """A page of every kind: each ladder, bot and list, a completed and a running match of
    each ladder, a filtered list, an error page, the API documentation."""
    with Store(db, readonly=True) as store:
        bots = [b.name for b in store.list_bots()]
        matches = [
            f"/ladders/{name}/matches/{store.matches(name, (status,))[0].index}"
            for name in ("balloon3", "boom4")
            for status in ("completed", "running")
        ]
    return [
        "/",
        "/ladders/balloon3",
        "/ladders/boom4",
        "/bots",
        *(f"/bots/{b}" for b in bots),
        "/matches",
        "/matches?ladder=boom4&status=completed",
        "/matches?bot=frank&faulted=true",
        "/admin",
        *matches,
        "/ladders/nosuch",
        "/api/docs",
    ]


def _stream_left(request) -> bool:
    """An event stream that the browser cut off on leaving its page: not a failure."""
    return "/events" in request.url and request.failure == "net::ERR_ABORTED"


def _open(browser, viewport: dict):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(
        "requestfailed",
        lambda r: (
            None if _stream_left(r) else problems.append(f"request failed: {r.url} ({r.failure})")
        ),
    )
    return context, page, problems


@pytest.fixture(params=[DESKTOP, PHONE], ids=["desktop", "phone"])
def viewed(request, browser):
    context, page, problems = _open(browser, request.param)
    yield request.param, page, problems
    context.close()


def test_every_page_fits_its_width_with_no_error(server, web_db, viewed):
    viewport, page, problems = viewed
    bad_status: list[str] = []
    page.on(
        "response",
        lambda r: (
            bad_status.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/ladders/nosuch")
            else None
        ),
    )
    for path in _pages(web_db):
        before = len(problems)
        page.goto(server.url + path)
        page.wait_for_load_state("networkidle")
        if path == "/ladders/nosuch":  # the 404 page itself, which the browser logs once
            assert [p for p in problems[before:] if "404" not in p] == [], problems[before:]
            del problems[before:]
        if path == "/api/docs":
            expect(page.locator(".swagger-ui .info .title")).to_contain_text("Arena API")
        widths = page.evaluate("""() => ({
            doc: document.documentElement.scrollWidth, view: window.innerWidth,
            header: document.querySelector('header.top')?.getBoundingClientRect().width ?? null
        })""")
        assert widths["doc"] <= widths["view"] == viewport["width"], (path, widths)
        if path != "/api/docs":  # Swagger UI's own page has no header of ours
            assert widths["header"] == widths["view"], (path, widths)
    assert problems == [] and bad_status == [], problems + bad_status


def test_column_headers_are_aligned_like_their_cells(server, web_db, page):
    checked = 0
    for path in _pages(web_db):
        if path == "/api/docs":
            continue
        page.goto(server.url + path)
        mismatches = page.evaluate("""() => {
            const out = []; let cells = 0;
            for (const table of document.querySelectorAll('table.data')) {
                const heads = [...table.querySelectorAll('thead th')];
                for (const row of table.querySelectorAll('tbody tr')) {
                    const tds = [...row.children];
                    if (tds.length !== heads.length) {
                        out.push(table.id + ': row width'); continue;
                    }
                    tds.forEach((td, i) => {
                        cells++;
                        const a = getComputedStyle(heads[i]).textAlign;
                        const b = getComputedStyle(td).textAlign;
                        const column = `${table.id} column ${heads[i].textContent}`;
                        if (a !== b) out.push(`${column}: ${a} over ${b}`);
                    });
                }
            }
            return {out: [...new Set(out)], cells};
        }""")
        assert mismatches["out"] == [], (path, mismatches["out"])
        checked += mismatches["cells"]
    assert checked > 100
    # The case the issue names: a match's score under "Score", right-aligned like it.
    with Store(web_db, readonly=True) as store:
        done = store.matches("boom4", ("completed",))[0]
    page.goto(f"{server.url}/ladders/boom4/matches/{done.index}")
    head = page.locator("#result thead th", has_text="Score").bounding_box()
    cell = page.locator("#result tbody tr").first.locator("td").nth(2).bounding_box()
    assert abs((head["x"] + head["width"]) - (cell["x"] + cell["width"])) < 1


def test_api_docs_render_with_the_network_blocked(server, browser):
    context = browser.new_context(viewport=DESKTOP)
    blocked: list[str] = []

    def only_the_server(route):
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_server)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server.url}/api/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Arena API")
    ladders = page.locator(".opblock-summary-path", has_text="/api/ladders/{ladder}").first
    expect(ladders).to_be_visible()
    ladders.click()
    expect(page.locator(".opblock-body").first).to_contain_text("ladder name")
    assert blocked == [] and errors == []
    context.close()


def test_favicon_is_served(client):
    r = client.get("/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert b"<svg" in r.content
    assert 'rel="icon"' in client.get("/").text


def test_leaderboard_draws_each_rating_interval_on_one_scale(server, page, web_db):
    with Store(web_db, readonly=True) as store:
        standings = store.rankings("boom4").standings
    page.goto(f"{server.url}/ladders/boom4")
    rows = page.locator("#leaderboard tbody tr")
    expect(rows).to_have_count(len(standings))
    lo = min(s.mu - 3 * s.sigma for s in standings)
    hi = max(s.mu + 3 * s.sigma for s in standings)
    for i, s in enumerate(standings):
        cell = rows.nth(i).locator("td.interval")
        expect(cell.locator(".settled-text")).to_have_text(
            "settled" if s.settled else "not settled"
        )
        expect(cell).to_have_attribute(
            "title",
            f"μ − 3σ {s.mu - 3 * s.sigma:.2f} to μ + 3σ "
            f"{s.mu + 3 * s.sigma:.2f}; rank " + ("settled" if s.settled else "not settled yet"),
        )
        bar = cell.locator(".bar").bounding_box()
        rng = cell.locator(".range").bounding_box()
        mu = cell.locator(".mu").bounding_box()

        def x(value: float, bar: dict = bar) -> float:
            return bar["x"] + (value - lo) / (hi - lo) * bar["width"]

        assert abs(rng["x"] - x(s.mu - 3 * s.sigma)) < 1.5
        assert abs(rng["x"] + rng["width"] - x(s.mu + 3 * s.sigma)) < 1.5
        assert abs(mu["x"] + mu["width"] / 2 - x(s.mu)) < 1.5


def test_phone_screenshots(server, browser, web_db):
    """docs/img/*-phone.png, beside the desktop ones test_browser.py takes: the leaderboard and
    a replay with every hand (its set is finished), at 390 px."""
    with Store(web_db, readonly=True) as store:
        done = store.matches("boom4", ("completed",))[0]
    context, page, problems = _open(browser, PHONE)
    page.goto(f"{server.url}/ladders/balloon3")
    expect(page.locator("#leaderboard td.interval").first).to_be_visible()
    page.screenshot(path=screenshot_path("leaderboard-phone.png"), full_page=True)
    page.goto(f"{server.url}/ladders/boom4/matches/{done.index}#6:-2")
    expect(page.locator(".guard-card")).to_be_visible()
    page.screenshot(path=screenshot_path("replay-phone.png"), full_page=True)
    context.close()
    assert problems == []
