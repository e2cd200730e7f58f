"""Logs of every match for its owner (issue 33, item 1): what a launched bot wrote while
deciding each move is kept per match (real bots in real sandboxes, `arena ladder run`), opened by
its owner key, its token or the admin key and never by anyone else (API and page), and shown
beside each of its moves in the replay, in a real browser."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from arena.store import Store
from arena.web.factory import create_app
from tests.web.support import ADMIN_KEY, LaunchedLadder, ServerThread, screenshot_path

SECRET = "chatty-secret"  # what tests/bots/chatty_bot.py writes while deciding


@pytest.fixture(scope="module")
def logs_client(launched_ladder):
    from fastapi.testclient import TestClient

    with TestClient(create_app(launched_ladder.path, admin_key=ADMIN_KEY)) as c:
        yield c


def _chatty_seats(db: LaunchedLadder) -> list[tuple[int, int, list]]:
    """(match index, chatty's seat, the match's moves) of each match."""
    with Store(db.path, readonly=True) as store:
        out = []
        for m in store.matches(db.ladder):
            replay = json.loads(
                store.db.execute(
                    "SELECT replay FROM matches WHERE idx = ? AND status = 'completed'", (m.index,)
                ).fetchone()[0]
            )
            out.append((m.index, m.seats.index("chatty"), replay["moves"]))
    return out


def test_each_move_has_the_lines_the_bot_wrote_while_deciding_it(logs_client, launched_ladder):
    headers = {"X-Owner-Key": launched_ladder.owner_keys["chatty"]}
    matches = _chatty_seats(launched_ladder)
    assert len(matches) == 3
    for index, seat, moves in matches:
        r = logs_client.get(f"/api/ladders/l/matches/{index}/logs", headers=headers)
        assert r.status_code == 200, r.text
        assert r.headers["cache-control"] == "no-store"
        body = r.json()
        assert [s["seat"] for s in body["seats"]] == [seat]  # its own seat only
        assert sorted(body["closed"]) == sorted({0, 1, 2} - {seat})
        log = body["seats"][0]
        assert log["bot"] == "chatty" and log["dropped"] == 0
        own = [i for i, move in enumerate(moves) if move[0] == seat]
        said = dict(log["moves"])
        assert sorted(said) == own  # it wrote something for every move it decided
        for k, i in enumerate(own, start=1):
            # Its k-th decision's lines, and no other decision's, are beside its k-th move.
            assert f"chatty decision {k} of " in said[i], (k, said[i])
            assert f"{SECRET}</b> {k}\n" in said[i]
            assert f"decision {k + 1} " not in said[i]
            assert "\x1b" not in said[i]  # cleaned as excerpts are


def test_the_token_and_admin_key_open_it_and_nobody_else_does(logs_client, launched_ladder):
    index = 0
    path = f"/api/ladders/l/matches/{index}/logs"
    for headers in (
        {"X-Bot-Key": launched_ladder.tokens["chatty"]},
        {"X-Admin-Key": ADMIN_KEY},
    ):
        r = logs_client.get(path, headers=headers)
        assert r.status_code == 200 and SECRET in r.text, r.text
    admin = logs_client.get(path, headers={"X-Admin-Key": ADMIN_KEY}).json()
    assert len(admin["seats"]) == 3 and admin["closed"] == []  # every launched seat
    # Another bot's owner sees that bot's seat, and nothing of chatty's.
    r = logs_client.get(path, headers={"X-Owner-Key": launched_ladder.owner_keys["r1"]})
    assert r.status_code == 200 and [s["bot"] for s in r.json()["seats"]] == ["r1"]
    assert SECRET not in r.text and "chatty decision" not in r.text
    refused = [
        ({}, 401, "for their owners"),
        ({"X-Owner-Key": "not-a-key"}, 403, "opens the output of none"),
        ({"X-Bot-Key": launched_ladder.owner_keys["chatty"]}, 403, "X-Owner-Key"),
        ({"X-Admin-Key": "guess"}, 403, "admin key"),
    ]
    for headers, status, words in refused:
        r = logs_client.get(path, headers=headers)
        assert r.status_code == status, (headers, r.text)
        assert words in r.json()["error"]["message"] and SECRET not in r.text
    # Nothing public has it: the match's page, its API, its feed.
    for url in (f"/ladders/l/matches/{index}", f"/api/ladders/l/matches/{index}?frames=true"):
        r = logs_client.get(url)
        assert r.status_code == 200 and SECRET not in r.text and "chatty decision" not in r.text
    assert logs_client.get("/api/ladders/l/matches/99/logs", headers=headers).status_code == 404


def test_the_owner_sees_the_output_beside_its_moves_and_a_stranger_does_not(
    launched_ladder, browser
):
    index, seat, moves = _chatty_seats(launched_ladder)[0]
    first = next(i for i, move in enumerate(moves) if move[0] == seat)
    server = ServerThread(create_app(launched_ladder.path, admin_key=ADMIN_KEY)).start()
    context = browser.new_context(viewport={"width": 390, "height": 800})
    try:
        page = context.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        url = f"{server.url}/ladders/l/matches/{index}#{first + 1}:-1"
        page.goto(url)
        expect(page.locator("#position")).to_contain_text(f"move {first + 1} of")
        expect(page.locator("#bot-output")).to_be_hidden()  # a stranger: nothing
        assert SECRET not in page.content()
        # A stranger's key (another bot's owner's) opens nothing of chatty's.
        page.click("#match-logs summary")
        page.select_option("#mlogs-seat", "r1")
        page.fill("#mlogs-key", launched_ladder.owner_keys["r1"])
        page.click("#mlogs-form button[type=submit]")
        expect(page.locator("#mlogs-status")).to_contain_text("Showing the output of r1")
        expect(page.locator("#bot-output")).to_be_hidden()
        assert SECRET not in page.content()
        page.click("#mlogs-forget")
        # The owner types chatty's owner key: its first move's lines are beside it.
        page.select_option("#mlogs-seat", "chatty")
        page.fill("#mlogs-key", launched_ladder.owner_keys["chatty"])
        page.click("#mlogs-form button[type=submit]")
        expect(page.locator("#bot-output")).to_be_visible()
        expect(page.locator("#bot-output-text")).to_contain_text("chatty decision 1 of")
        expect(page.locator("#bot-output-text")).to_contain_text(f"<b>{SECRET}</b> 1")
        assert page.locator("#bot-output b").count() == 0  # shown as text
        # Its next move: its second decision.
        second = next(i for i, move in enumerate(moves) if move[0] == seat and i > first)
        page.goto(f"{server.url}/ladders/l/matches/{index}#{second + 1}:-1")
        page.reload()  # the key is kept in this tab
        expect(page.locator("#bot-output-text")).to_contain_text("chatty decision 2 of")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.evaluate("document.getElementById('move-list').scrollIntoView()")
        page.screenshot(path=screenshot_path("replay-owner-phone.png"))  # the controls stuck on top
        assert launched_ladder.owner_keys["chatty"] not in page.url
        assert problems == []
    finally:
        context.close()
        server.stop()
