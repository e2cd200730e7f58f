"""A bot's log excerpts for its owner: the API answers them only to the bot's owner key, its own
token or the admin key (401 without a key, 403 with any other), no public page, API route or
report shows them, and the bot page shows them in a real browser once the token is typed in."""

from __future__ import annotations

import dataclasses
import io
import json
import random
from pathlib import Path

import jsonschema
import pyarrow.parquet as pq
import pytest
from playwright.sync_api import expect

from arena.results import CRASH, Fault, demote_faulted
from arena.store import Store
from arena.web.factory import create_app
from arena.web.report import write_report
from arena.web.sample import random_result
from tests.support.crashing_bot import LAST_WORDS
from tests.web.support import ServerThread, screenshot_path

ROOT = Path(__file__).resolve().parents[2]

RANDOM = "python example_bots/random_bot.py"
ADMIN_KEY = "organiser-key-for-the-tests"
SECRET = "plan-7f3a91"  # in every excerpt, and nowhere public


@dataclasses.dataclass
class LogsDb:
    path: Path
    tokens: dict[str, str]
    owner_keys: dict[str, str]
    excerpts: dict[tuple[int, int], str]  # (match index, seat) -> excerpt kept


@pytest.fixture(scope="module")
def logs_db(tmp_path_factory) -> LogsDb:
    """Two launched bots (ann, ben) and a remote one (cal) on a Balloon ladder of 3: ann and cal
    fault in every match, ann's seats with their log excerpts (HTML in them)."""
    path = tmp_path_factory.mktemp("logs") / "arena.db"
    rng = random.Random(3)
    excerpts = {}
    with Store(path) as store:
        tokens = {
            "ann": store.add_bot("ann", RANDOM, cwd=ROOT),
            "ben": store.add_bot("ben", RANDOM, cwd=ROOT),
            "cal": store.add_bot("cal", remote=True),
        }
        owner_keys = {name: store.new_owner_key(name) for name in ("ann", "ben")}
        store.create_ladder("bal", "balloon", 3, list(tokens), seed=7, rounds=1)
        config = store.get_ladder("bal").config
        for m in store.matches("bal"):
            result = random_result(config, m.seed, m.seats, rng)
            # ann (launched) and cal (remote) crash in every match; ben never faults.
            faulted = [seat for seat, name in enumerate(m.seats) if name in ("ann", "cal")]
            faults = tuple(Fault(s, CRASH, 1, 3.0, "the bot process exited") for s in faulted)
            logs = {
                seat: (
                    "".join(f"ann: earlier line {i}\n" for i in range(150))  # a long log
                    + f"ann: match {m.index}, thinking\n"
                    "Traceback (most recent call last):\n"
                    '  File "bot.py", line 42, in choose\n'
                    f"    return plan[7]  # <b>{SECRET}</b>\n"
                    "IndexError: list index out of range\n"
                )
                for seat in faulted
                if m.seats[seat] == "ann"
            }
            result = dataclasses.replace(
                result,
                faults=faults,
                ranks=demote_faulted(result.scores, set(faulted)),
                log_excerpts=logs,
            )
            store.record_result("bal", m.index, result)
            excerpts.update({(m.index, seat): text for seat, text in logs.items()})
    assert len(excerpts) == 3  # one a match
    return LogsDb(path, tokens, owner_keys, excerpts)


@pytest.fixture(scope="module")
def logs_client(logs_db):
    from fastapi.testclient import TestClient

    with TestClient(create_app(logs_db.path, admin_key=ADMIN_KEY)) as c:
        yield c


def _faulted(db: LogsDb, bot: str) -> dict[tuple[str, int, int], str]:
    with Store(db.path, readonly=True) as store:
        return {
            ("bal", m.index, seat): db.excerpts.get((m.index, seat))
            for m in store.matches("bal")
            for seat, name in enumerate(m.seats)
            if name == bot and (m.index, seat) in db.excerpts
        }


def test_the_owner_key_the_bots_token_and_the_admin_key_open_its_excerpts(logs_client, logs_db):
    spec = logs_client.get("/openapi.json").json()
    schema = spec["paths"]["/api/bots/{bot}/faults"]["get"]["responses"]["200"]["content"]
    schema = {**schema["application/json"]["schema"], "components": spec["components"]}
    expected = _faulted(logs_db, "ann")
    for headers in (
        {"X-Owner-Key": logs_db.owner_keys["ann"]},
        {"X-Bot-Key": logs_db.tokens["ann"]},
        {"X-Admin-Key": ADMIN_KEY},
    ):
        r = logs_client.get("/api/bots/ann/faults?limit=200", headers=headers)
        assert r.status_code == 200, r.text
        assert r.headers["cache-control"] == "no-store"
        jsonschema.validate(r.json(), schema, cls=jsonschema.Draft202012Validator)
        body = r.json()
        assert body["bot"] == "ann" and body["remote"] is False
        got = {(f["ladder"], f["index"], f["seat"]): f["excerpt"] for f in body["faults"]}
        assert got == expected and len(expected) == 3
    # A remote bot's owner gets its faults, and no excerpt: the server has none.
    r = logs_client.get("/api/bots/cal/faults", headers={"X-Bot-Key": logs_db.tokens["cal"]})
    assert r.status_code == 200 and r.json()["remote"] is True
    assert r.json()["faults"] and all(f["excerpt"] is None for f in r.json()["faults"])


def test_no_key_a_wrong_key_or_another_bots_token_is_refused(logs_client, logs_db):
    refused = [
        ({}, 401, "give its owner key or the bot's token"),
        ({"X-Bot-Key": "arena_not-a-token"}, 403, "does not open the log excerpts of bot ann"),
        ({"X-Bot-Key": logs_db.tokens["ben"]}, 403, "that bot's own token only that version"),
        ({"X-Admin-Key": "guess"}, 403, "admin key"),
        ({"X-Admin-Key": logs_db.tokens["ann"]}, 403, "X-Bot-Key"),  # a token is not the key
        ({"X-Owner-Key": logs_db.owner_keys["ben"]}, 403, "its owner key opens every version"),
        ({"X-Owner-Key": logs_db.tokens["ann"]}, 403, "X-Owner-Key"),  # nor an owner key
    ]
    for headers, status, words in refused:
        r = logs_client.get("/api/bots/ann/faults", headers=headers)
        assert r.status_code == status, (headers, r.text)
        assert words in r.json()["error"]["message"], r.json()
        assert SECRET not in r.text
    assert logs_client.get("/api/bots/nobody/faults").status_code == 404


def test_without_an_admin_key_the_server_takes_none(logs_db):
    from fastapi.testclient import TestClient

    with TestClient(create_app(logs_db.path)) as c:  # arena web: no admin key
        for key in ("", "None", ADMIN_KEY):
            r = c.get("/api/bots/ann/faults", headers={"X-Admin-Key": key})
            assert r.status_code in (401, 403) and SECRET not in r.text


def test_no_public_page_api_route_or_report_shows_an_excerpt(logs_client, logs_db, tmp_path):
    spec = logs_client.get("/openapi.json").json()
    public = ["/", "/bots", "/ladders/bal", "/matches?ladder=bal", "/openapi.json", "/api/docs"]
    public += ["/api/ladders", "/api/ladders/bal", "/api/bots", "/api/ladders/bal/export.jsonl"]
    public += ["/api/ladders/bal/export.parquet"]
    public += ["/api/competitions"]
    for bot in logs_db.tokens:
        public += [f"/bots/{bot}", f"/api/bots/{bot}?recent=200", f"/api/bots/{bot}/history"]
        public += [f"/api/matches?bot={bot}", f"/api/ladders/bal/head-to-head?bot={bot}"]
    for index, _ in logs_db.excerpts:
        public += [f"/ladders/bal/matches/{index}", f"/api/ladders/bal/matches/{index}?frames=true"]
        public += [f"/api/ladders/bal/matches/{index}/live"]
        public += [f"/api/ladders/bal/matches/{index}/replay"]
    private = {
        "/api/bots/{bot}/faults",
        "/api/ladders/{ladder}/matches/{index}/logs",
        "/api/organiser/bots",  # the admin key's (tests/web/test_dashboard.py)
    }
    refused = logs_client.get("/api/organiser/bots")
    assert refused.status_code in (401, 403) and SECRET not in refused.text
    templates = {p for p in spec["paths"] if p not in private}
    covered = {p for p in templates if any(_matches(p, url) for url in public)}
    assert covered == templates, "every public route is read here"
    for url in public:
        r = logs_client.get(url)
        assert r.status_code == 200, url
        text = r.text
        if url.endswith(".parquet"):  # compressed: its rows, as text
            text = json.dumps(pq.read_table(io.BytesIO(r.content)).to_pylist(), default=str)
            assert text != "[]", "the export has matches to look in"
        assert SECRET not in text, url
    # The bot page has the form, and none of the excerpts.
    page = logs_client.get("/bots/ann").text
    assert 'id="logs-form"' in page and SECRET not in page
    assert 'id="logs-remote"' in logs_client.get("/bots/cal").text
    out = tmp_path / "site"
    write_report(logs_db.path, out)
    for file in out.rglob("*.html"):
        text = file.read_text()
        assert SECRET not in text and "logs-form" not in text, file


def _matches(template: str, url: str) -> bool:
    parts, got = template.split("/"), url.split("?")[0].split("/")
    return len(parts) == len(got) and all(p == g or p.startswith("{") for p, g in zip(parts, got))


def test_the_owner_types_the_token_and_sees_the_excerpts(logs_db, browser):
    """And docs/img/bot-logs.png and bot-logs-phone.png: the excerpts on the bot page."""
    server = ServerThread(create_app(logs_db.path, admin_key=ADMIN_KEY)).start()
    context = browser.new_context(viewport={"width": 390, "height": 800})
    try:
        page = context.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(f"{server.url}/bots/ann")
        expect(page.locator("#logs-form")).to_be_visible()
        expect(page.locator("#logs-list pre")).to_have_count(0)  # nothing without the key
        page.select_option("#logs-kind", "bot")
        page.fill("#logs-key", logs_db.tokens["ann"])
        page.click("#logs-form button[type=submit]")
        excerpts = sorted(_faulted(logs_db, "ann").values())
        assert len(excerpts) == 3
        expect(page.locator("#logs-list pre.excerpt")).to_have_count(len(excerpts))
        shown = sorted(page.locator("#logs-list pre.excerpt").all_text_contents())
        assert shown == excerpts  # the HTML in them shown as text, not markup
        assert page.locator("#logs-list b").count() == 0
        # Each box opens at its end, where the fault is, not at the older lines above it.
        at_end = page.evaluate(
            "Array.from(document.querySelectorAll('#logs-list pre.excerpt')).map("
            "(p) => p.scrollHeight > p.clientHeight && "
            "p.scrollTop + p.clientHeight >= p.scrollHeight - 1)"
        )
        assert at_end == [True] * len(excerpts)
        assert logs_db.tokens["ann"] not in page.url
        # The key stays in this tab: a reload shows the excerpts again without asking.
        page.reload()
        expect(page.locator("#logs-list pre.excerpt")).to_have_count(len(excerpts))
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.locator("#fault-logs").screenshot(path=screenshot_path("bot-logs-phone.png"))
        page.set_viewport_size({"width": 1280, "height": 900})
        page.locator("#fault-logs").screenshot(path=screenshot_path("bot-logs.png"))
        page.click("#logs-forget")
        expect(page.locator("#logs-list pre")).to_have_count(0)
        page.reload()
        expect(page.locator("#logs-form")).to_be_visible()
        expect(page.locator("#logs-list pre")).to_have_count(0)
        assert problems == []
    finally:
        context.close()
        server.stop()


def test_a_launched_bot_that_crashes_leaves_its_last_words_for_its_owner(launched_ladder):
    from fastapi.testclient import TestClient

    with TestClient(create_app(launched_ladder.path)) as client:
        r = client.get(
            "/api/bots/crasher/faults", headers={"X-Bot-Key": launched_ladder.tokens["crasher"]}
        )
    assert r.status_code == 200, r.text
    faults = r.json()["faults"]
    assert faults and {f["kind"] for f in faults} == {"crash"}
    for f in faults:
        excerpt = f["excerpt"]
        assert excerpt.endswith(LAST_WORDS), excerpt[-200:]
        assert "\x1b" not in excerpt and len(excerpt.encode()) <= 4096
