"""A bot's versions on the web: the bot page lists them with each one's ratings, a version has
its own page at /bots/NAME@N, the JSON API gives the versions, and the static report links
them."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from arena.store import Store
from arena.web.factory import create_app
from arena.web.sample import play_ladder
from tests.store.helpers import RANDOM


@pytest.fixture(scope="module")
def versions_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("versions") / "arena.db"
    with Store(db) as store:
        for name in ("a", "b", "c"):
            store.add_bot(name, RANDOM)
        store.update_bot("a", RANDOM, note="faster <search> & more")
        store.create_ladder("first", "balloon", 3, ["a", "b", "c"], seed=1, rounds=1)
        store.create_ladder("second", "balloon", 3, ["a@2", "b", "c"], seed=2, rounds=1)
        for ladder in ("first", "second"):
            play_ladder(store, ladder, seed=3, fault_rate=0.0)
    return db


@pytest.fixture(scope="module")
def client(versions_db):
    from fastapi.testclient import TestClient

    with TestClient(create_app(versions_db), raise_server_exceptions=False) as c:
        yield c


def standing(db: Path, ladder: str, bot: str):
    with Store(db, readonly=True) as store:
        return next(s for s in store.rankings(ladder).standings if s.bot == bot)


def test_the_bot_page_lists_the_versions_with_their_ratings(client, versions_db):
    page = client.get("/bots/a")
    assert page.status_code == 200
    html = page.text
    assert '<table class="data" id="versions">' in html
    assert f'<a href="/bots/{quote("a@2")}">2 (a@2)</a>' in html
    assert "faster &lt;search&gt; &amp; more" in html  # the note, escaped
    rows = html.split('<tr data-version="')[1:]
    assert rows[0].startswith('1" class="current"') and 'href="/ladders/first"' in rows[0]
    assert 'href="/ladders/second"' not in rows[0]
    second = standing(versions_db, "second", "a@2")
    assert 'href="/ladders/second"' in rows[1] and f"{second.matches}</td>" in rows[1]
    # The page of version 2, by the URL the link gives.
    v2 = client.get(f"/bots/{quote('a@2')}")
    assert v2.status_code == 200 and "<h1>Bot a@2</h1>" in v2.text
    assert "this page is version 2&#39;s" in v2.text or "this page is version 2's" in v2.text
    assert '<a href="/bots/a">1 (a)</a>' in v2.text
    # A bot of one version has no versions table.
    assert 'id="versions"' not in client.get("/bots/b").text


def test_the_api_gives_every_version_and_its_ratings(client, versions_db):
    doc = client.get("/api/bots/a@2").json()
    assert (doc["bot"]["name"], doc["bot"]["family"], doc["bot"]["version"]) == ("a@2", "a", 2)
    versions = {v["bot"]["name"]: v for v in doc["versions"]}
    assert list(versions) == ["a", "a@2"]
    assert versions["a@2"]["bot"]["note"] == "faster <search> & more"
    for name, ladder in (("a", "first"), ("a@2", "second")):
        [rated] = versions[name]["ladders"]
        expected = standing(versions_db, ladder, name)
        assert (rated["ladder"], rated["mu"], rated["sigma"], rated["matches"]) == (
            ladder,
            expected.mu,
            expected.sigma,
            expected.matches,
        )
    assert [b["name"] for b in client.get("/api/bots").json()] == ["a", "a@2", "b", "c"]


def test_the_static_report_has_a_page_per_version_linked_from_the_bot(versions_db, tmp_path):
    from arena.web.report import write_report

    out = tmp_path / "report"
    write_report(versions_db, out)
    assert (out / "bots" / "a@2.html").is_file()
    assert 'href="../bots/a@2.html"' in (out / "bots" / "a.html").read_text()
