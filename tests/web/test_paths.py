"""The site's addresses (arena/web/paths.py) and its list of pages (site.PAGES): one table
that the server's routes, the templates' links and the static report all read."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from arena.web import site
from arena.web.factory import create_app
from arena.web.paths import PLACES, Place, ReportUrls, ServerUrls
from arena.web.report import write_report
from tests.web.support import ADMIN_KEY


def test_server_links_are_quoted_paths_under_the_root_with_filters_in_the_query():
    urls = ServerUrls(root="/arena")
    assert urls.home() == "/arena/"
    assert urls.bot("alice@2") == "/arena/bots/alice%402"
    assert urls.match("boom 4", 7) == "/arena/ladders/boom%204/matches/7"
    assert urls.match(ladder="l", index=3) == urls.match("l", 3)
    assert urls.matches() == "/arena/matches"
    assert (
        urls.matches(ladder="l", bot="", opponent=None, status="completed", before=9)
        == "/arena/matches?ladder=l&status=completed&before=9"
    )
    assert urls.static("arena.css") == "/arena/static/arena.css"
    assert urls.live("l", 3) == "/arena/api/ladders/l/matches/3/live"


def test_report_links_are_relative_files_or_none_where_the_report_has_no_such_page():
    urls = ReportUrls(depth=2)
    assert urls.home() == "../../index.html"
    assert urls.ladder("balloon3") == "../../ladders/balloon3.html"
    assert urls.match("balloon3", 4) == "../../matches/balloon3/4.html"
    assert urls.matches(ladder="balloon3", bot="alice") == "../../matches/balloon3/list-1.html"
    assert urls.matches(ladder="balloon3", page=3) == "../../matches/balloon3/list-3.html"
    assert urls.matches(bot="alice") is None  # no list without a ladder
    assert urls.comparison("c") is None
    assert urls.live("l", 1) is None and urls.bot_faults("alice") is None
    assert ReportUrls().static("chart.js") == "static/chart.js"


def test_a_place_that_is_not_in_the_table_is_a_clear_error():
    with pytest.raises(AttributeError, match="no page or feed called 'ladderz'"):
        ServerUrls().ladderz("x")
    with pytest.raises(TypeError, match="takes 1 parameters, got 2"):
        ServerUrls().bot("a", "b")


def test_every_page_and_feed_is_served_at_its_address(client):
    """Each link the table makes (but the event streams') reaches a route: a route's own 404
    (a ladder that is not a comparison) says so; an address with no route says "there is no
    page at"."""
    urls = ServerUrls()
    params = {"ladder": "balloon3", "bot": "alice", "index": 0, "path": "arena.css"}
    params["competition"] = "cup"
    for name, place in PLACES.items():
        if name.endswith("events"):
            continue  # event streams do not end: tests/web/test_live.py reads them
        link = getattr(urls, name)(**{p: params[p] for p in place.params})
        answer = client.get(link, headers={"X-Admin-Key": ADMIN_KEY})
        assert "there is no page at" not in answer.text, (name, link)
        assert answer.status_code in (200, 404), (name, link, answer.status_code)


def test_a_page_is_added_in_one_place_and_both_the_app_and_the_report_show_it(
    web_db, tmp_path, monkeypatch
):
    """One line in site.PAGES and its address in paths.PLACES (here with an existing
    template): the app serves it and `arena report` writes it, with nothing else edited."""

    def roll_call(v: site.View, ladder: str) -> site.Page:
        info = v.q.ladder(ladder)
        return "index.html", {"title": f"Roll call {ladder}", "ladders": [info]}

    place = Place("/roll-call/{ladder}", "roll-call/{ladder}.html")
    monkeypatch.setitem(PLACES, "roll_call", place)
    kind = site.PageKind(
        "roll_call", roll_call, lambda q: [{"ladder": r.name} for r in q.ladders()]
    )
    monkeypatch.setattr(site, "PAGES", (*site.PAGES, kind))

    with TestClient(create_app(web_db)) as client:
        page = client.get("/roll-call/balloon3")
        assert page.status_code == 200 and "Roll call balloon3" in page.text
        missing = client.get("/roll-call/nope")
        assert missing.status_code == 404 and "nope" in missing.text
        too_long = client.get("/roll-call/" + "x" * 65)
        assert too_long.status_code == 400  # the ladder parameter's own declaration
    write_report(web_db, tmp_path / "site")
    written = (tmp_path / "site" / "roll-call" / "balloon3.html").read_text()
    assert "Roll call balloon3" in written and 'href="../static/arena.css"' in written


def test_the_pages_do_not_import_the_comparison_runner():
    """The comparison page needs the verdict's maths (compare/verdict.py), not the module that
    plays comparisons (compare/runner.py) and what it imports (executors)."""
    code = (
        "import sys, arena.web.site, arena.web.factory; "
        "print(sorted(m for m in sys.modules if m.startswith(('arena.compare', 'arena.ladder'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "arena.compare.verdict" in out
    assert "arena.compare.runner" not in out and "arena.ladder.executors" not in out
