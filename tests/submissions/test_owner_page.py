"""The bot owner's section of the bot page (_owner.html, static/owner.js) in headless chromium,
over the app `arena serve` serves (the owners' API in process, served by uvicorn in a thread;
no ladder, and verification collected rather than run, as in test_submit_api.py): the key
typed, refused, kept in the tab and forgotten; each version's status and the failed one's log
excerpt shown as text; an upload through the page's form."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from arena.service.service import ArenaService, ServiceSettings
from arena.service.webserver import WebServer
from arena.store import AsyncStore, Store
from arena.submissions.archive import content_digest, pack_directory
from tests.support.uploads import ADMIN, bot_dir
from tests.web.support import CHROMIUM, CHROMIUM_ARGS, ServerThread

REPLAY = {
    "seed": 7,
    "seat_names": ["mine@2", "thinker"],
    "scores": [0, 12],
    "ranks": [1, 0],
    "faults": [
        {"seat": 0, "kind": "crash", "move": -1, "elapsed_ms": 3.0, "detail": "exited with 1"}
    ],
    "moves": [],
}
VERDICT = "failed: crash: the bot's process exited before it connected"
EXCERPT = "Traceback (most recent call last):\n<b>not bold</b> & <i>raw</i>\nValueError: boom\n"


def two_versions(db: Path, inputs: Path) -> str:
    """The bot `mine` with an owner key (returned): version 1 passed (no match kept), version 2
    failed with a log excerpt that holds markup and its verification match's replay."""
    with Store(db) as store:
        key = store.new_owner_key("mine")
        for marker, passed in (("1", True), ("2", False)):
            src = bot_dir(inputs / f"src-{marker}", marker)
            bot, _ = store.update_bot(
                "mine", directory=src, status="verifying", digest=content_digest(src)
            )
            if passed:
                store.record_verification(bot.name, True, "passed")
            else:
                store.record_verification(bot.name, False, VERDICT, EXCERPT, (), REPLAY)
    return key


@pytest.mark.browser
def test_the_owner_sees_their_versions_and_uploads_one_through_the_page(tmp_path):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"the browser tests need Debian's chromium at {CHROMIUM}: scripts/setup --browser"
        )
    from playwright.sync_api import expect, sync_playwright

    db, inputs = tmp_path / "arena.db", tmp_path / "inputs"
    key = two_versions(db, inputs)
    upload = pack_directory(bot_dir(inputs / "src-3", "3"), inputs / "bot-3.tar.gz")
    service = ArenaService(ServiceSettings(db=db, ladders=(), admin_key=ADMIN))
    verified: list[str] = []
    service.verify_later = verified.append  # type: ignore[method-assign]
    # Before Playwright: its sync API holds an event loop on this thread.
    service.store = store = asyncio.run(AsyncStore.open(db))
    server = ServerThread(WebServer(service).app).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            problems: list[str] = []
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            rows = page.locator("#owner-versions tbody tr")
            message = page.locator("#owner-message")

            page.goto(f"{server.url}/bots/mine")
            expect(page.locator("#owner-key-form")).to_be_visible()
            expect(page.locator("#owner-view")).to_be_hidden()
            assert rows.count() == 0 and "ValueError: boom" not in page.content()

            page.fill("#owner-key", "arena_owner_wrong")
            page.click("#owner-key-form button[type=submit]")
            expect(message).to_contain_text("that is not the owner key of bot 'mine'")
            expect(page.locator("#owner-view")).to_be_hidden()
            expect(page.locator("#owner-forget")).to_be_hidden()
            assert rows.count() == 0
            assert page.evaluate("sessionStorage.length") == 0
            # The browser logs the refused request itself; nothing else may be an error.
            assert [m for m in problems if "status of 401" not in m] == []
            problems.clear()

            page.fill("#owner-key", key)
            page.click("#owner-key-form button[type=submit]")
            expect(rows).to_have_count(2)
            expect(message).to_have_text("")
            expect(rows.nth(0).locator("td").nth(1)).to_have_text("active")
            expect(rows.nth(1).locator("td").nth(1)).to_have_text("failed")
            expect(rows.nth(1).locator("pre.log-excerpt")).to_have_text(EXCERPT)
            assert rows.nth(0).locator("pre").count() == 0  # it passed: no excerpt
            assert rows.nth(0).locator("button").count() == 0  # and no match was kept
            # One form of the owner key: it shows the log excerpts too, with no reload.
            expect(page.locator("#logs-status")).to_have_text("No faults: no log excerpts.")
            expect(page.locator("#logs-form")).to_be_hidden()  # the other keys' form, folded
            # A short verdict, what it says further one click away.
            expect(rows.nth(1).locator("strong.verdict")).to_have_text("failed: crash")
            expect(rows.nth(1).locator(".verdict-detail")).to_contain_text("before it connected")
            # The verification match read for a person, its replay file a download.
            rows.nth(1).get_by_role("button", name="its verification match").click()
            shown = rows.nth(1).locator(".verification")
            expect(shown).to_contain_text("seat 2: thinker, score 12, place 1 of 2")
            expect(shown).to_contain_text("mine@2 faulted (crash) before its first move")
            with page.expect_download() as download:
                shown.get_by_role("link", name="Download its replay file").click()
            assert json.loads(Path(download.value.path()).read_text()) == REPLAY
            assert page.locator("#owner b, #owner i").count() == 0  # shown as text
            assert key not in page.url and page.input_value("#owner-key") == ""

            page.reload()  # the key stays in this tab, for the log excerpts' section too
            expect(rows.nth(1).locator("pre.log-excerpt")).to_have_text(EXCERPT)
            expect(page.locator("#logs-status")).to_have_text("No faults: no log excerpts.")

            page.set_input_files("#upload-file", str(upload))
            page.fill("#upload-note", "third try")
            page.click("#upload-form button[type=submit]")
            expect(message).to_have_text("uploaded as version 3; verifying…")
            expect(rows).to_have_count(3)
            expect(rows.nth(2).locator("td").nth(0)).to_have_text("3 (mine@3): third try")
            expect(rows.nth(2).locator("td").nth(1)).to_have_text("verifying")
            assert verified == ["mine@3"]
            assert page.input_value("#upload-note") == ""  # the form is emptied
            assert page.evaluate("document.getElementById('upload-file').files.length") == 0
            # While a version is verifying the page looks again: its verdict comes in.
            store.submit(Store.record_verification, "mine@3", True, "passed").result()
            expect(rows.nth(2).locator("td").nth(1)).to_have_text("active")
            expect(rows.nth(0).locator("td").nth(1)).to_have_text("retired")
            rows.nth(0).get_by_role("button", name="Play this version again").click()
            expect(message).to_have_text("version 1 plays again")
            expect(rows.nth(0).locator("td").nth(1)).to_have_text("active")

            page.click("#owner-forget")
            expect(message).to_have_text("the key is forgotten in this tab")
            expect(page.locator("#owner-view")).to_be_hidden()
            assert rows.count() == 0 and page.evaluate("sessionStorage.length") == 0
            expect(page.locator("#logs-status")).to_have_text("The key is forgotten.")
            # And the log excerpts' section forgets it for the owner's section too.
            page.fill("#owner-key", key)
            page.click("#owner-key-form button[type=submit]")
            expect(rows).to_have_count(3)
            page.click("#logs-forget")
            expect(page.locator("#owner-view")).to_be_hidden()
            assert rows.count() == 0 and page.evaluate("sessionStorage.length") == 0
            page.reload()
            expect(page.locator("#owner-key-form")).to_be_visible()
            assert rows.count() == 0 and "ValueError: boom" not in page.content()
            assert problems == []
            browser.close()
    finally:
        server.stop()
        asyncio.run(store.close())
    with Store(db, readonly=True) as check:
        assert check.resolve_bot("mine").name == "mine"
