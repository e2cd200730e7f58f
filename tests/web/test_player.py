"""The replay player in a real browser: autoplay at a chosen speed, the move list that jumps to
any move, keyboard steps, the address (#move:view) followed on an open page, Boom's guard card
and Balloon's balloon drawn from the frames, and no action in words for a set still played."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from arena.store import Store
from arena.web.frames import build_frames
from tests.web.support import completed_in_open_set


def _finished(db: Path, ladder: str) -> tuple[int, list[dict], list[str]]:
    """A match of a finished set: its index, its full frames and its seats' names."""
    with Store(db, readonly=True) as store:
        matches = store.matches(ladder)
        open_sets = {m.set_index for m in matches if m.status != "completed"}
        match = next(m for m in matches if m.status == "completed" and m.set_index not in open_sets)
        doc = store.replay(ladder, match.index)
    return match.index, build_frames(doc), list(match.seats)


def _position(page) -> int:
    text = page.locator("#position").inner_text()
    return 0 if text.startswith("the deal") else int(text.split()[1])


def test_autoplay_advances_at_its_speed_and_pauses(server, page, web_db):
    index, frames, _ = _finished(web_db, "balloon3")
    total = len(frames) - 1
    page.goto(f"{server.url}/ladders/balloon3/matches/{index}")
    page.locator("#speed").select_option("10")
    page.locator("#play").click()
    expect(page.locator("#play")).to_have_attribute("aria-pressed", "true")
    page.wait_for_function(
        "() => !document.getElementById('position').textContent"
        ".startsWith('the deal') && Number(document.getElementById("
        "'position').textContent.split(' ')[1]) >= 5"
    )
    page.locator("#play").click()
    expect(page.locator("#play")).to_have_attribute("aria-pressed", "false")
    held = _position(page)
    page.wait_for_timeout(500)  # five moves' time at 10x: nothing moves while paused
    assert _position(page) == held
    assert page.evaluate("location.hash") == f"#{held}:-2"  # a finished set: every hand
    # Played to the end it stops there by itself.
    page.locator("#last").click()
    page.keyboard.press("Home")
    page.locator("#speed").select_option("10")
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.locator("body").press(" ")
    expect(page.locator("#position")).to_have_text(f"move {total} of {total}")
    expect(page.locator("#play")).to_have_attribute("aria-pressed", "false")


def test_the_move_list_jumps_to_any_move_and_names_the_actions_once_public(server, page, web_db):
    index, frames, names = _finished(web_db, "boom4")
    total = len(frames) - 1
    page.goto(f"{server.url}/ladders/boom4/matches/{index}")
    items = page.locator("#move-list button.jump")
    expect(items).to_have_count(total + 1)
    target = total // 2
    items.nth(target).click()
    expect(page.locator("#position")).to_have_text(f"move {target} of {total}")
    expect(items.nth(target)).to_have_attribute("aria-current", "step")
    expect(page.locator("#move-list [aria-current]")).to_have_count(1)
    # The set is finished: everything is public, and every view names each action in words.
    expected = ["the deal"] + [
        f"{names[f['move']['seat']]}: {f['move']['text']}"
        + (" (by the referee)" if f["move"]["default"] else "")
        for f in frames[1:]
    ]
    for view in ("-2", "-1", "2"):
        page.locator("#view").select_option(view)
        assert items.all_inner_texts() == expected, view
    page.keyboard.press("Home")
    expect(page.locator("#position")).to_have_text(f"the deal (0 of {total})")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#position")).to_have_text(f"move 2 of {total}")
    expect(items.nth(2)).to_have_attribute("aria-current", "step")


def test_a_changed_address_moves_the_open_page(server, page, web_db):
    index, frames, names = _finished(web_db, "balloon3")
    total = len(frames) - 1
    page.goto(f"{server.url}/ladders/balloon3/matches/{index}#3:-1")
    expect(page.locator("#position")).to_have_text(f"move 3 of {total}")
    page.evaluate("location.hash = '#7:1'")
    expect(page.locator("#position")).to_have_text(f"move 7 of {total}")
    expect(page.locator("#view")).to_have_value("1")
    hand = page.locator('.seat-box[data-seat="1"] .hand .card')
    expect(hand).to_have_count(len(frames[7]["hands"][1]))
    page.go_back()  # the address before: the public view at move 3
    expect(page.locator("#position")).to_have_text(f"move 3 of {total}")
    expect(page.locator(".hand")).to_have_count(0)


def test_the_guard_card_and_the_balloon_are_drawn_from_the_frame(server, page, web_db):
    index, frames, _ = _finished(web_db, "boom4")
    page.goto(f"{server.url}/ladders/boom4/matches/{index}#4:-1")
    guard = next(r for r in frames[4]["table"] if r["kind"] == "guard")
    expect(page.locator(".guard-card .guard-number")).to_have_text(f"guard #{guard['value']}")
    limits = page.locator(".guard-card .limit")
    assert limits.all_inner_texts() == [c[0].split()[-1] for c in guard["cards"]]
    assert [limits.nth(i).get_attribute("title") for i in range(5)] == [
        c[0] for c in guard["cards"]
    ]

    index, frames, _ = _finished(web_db, "balloon3")
    for n in (0, 5, 9):
        page.goto(f"{server.url}/ladders/balloon3/matches/{index}#{n}:-1")
        size = next(r["value"] for r in frames[n]["table"] if r["kind"] == "balloon")
        expect(page.locator(".balloon-size")).to_have_text(str(size))
        # The size is the cards on the table (face-up ones included), as the rulebook says.
        assert page.locator("#table .row .card").count() == size


def test_a_set_still_played_lists_its_moves_without_actions(server, page, web_db):
    done = completed_in_open_set(web_db, "balloon3")
    page.goto(f"{server.url}/ladders/balloon3/matches/{done.index}")
    for view in ("-1", "0", "1", "2"):
        page.locator("#view").select_option(view)
        texts = page.locator("#move-list button.jump").all_inner_texts()
        assert len(texts) > 1 and all(":" not in t for t in texts), (view, texts[:5])


# How many Tab stops come before the move list's current move, in document order.
TAB_STOPS_BEFORE_THE_LIST = """() => {
  const stops = Array.from(document.querySelectorAll("a[href], button, select, input, summary"))
    .filter((e) => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length > 0
                   && !e.closest("details:not([open]) > :not(summary)"));
  return stops.indexOf(document.querySelector("#move-list [tabindex='0']"));
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_a_keyboard_only_walk_through_a_replay(server, browser, web_db, width):
    """Issue 33, item 3: the move list is one Tab stop moved with the arrow keys, the shortcut
    help opens with "?", the stepping controls stay in sight (40 px tall on a phone), the
    replay downloads and the command to deal it again is given, with no mouse at all."""
    index, frames, names = _finished(web_db, "boom4")
    total = len(frames) - 1
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    try:
        page.goto(f"{server.url}/ladders/boom4/matches/{index}")
        # Tab to the move list: its current move (the deal) is its one stop, after the page's
        # other stops (links, the controls but the disabled ones: First and Back at the deal).
        stops = page.evaluate(TAB_STOPS_BEFORE_THE_LIST)
        for _ in range(stops + 1):
            page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.dataset.n") == "0"
        tab_stops = page.locator("#move-list button.jump[tabindex='0']")
        expect(tab_stops).to_have_count(1)
        for _ in range(3):
            page.keyboard.press("ArrowDown")
        expect(page.locator("#position")).to_have_text(f"move 3 of {total}")
        page.keyboard.press("ArrowUp")
        expect(page.locator("#position")).to_have_text(f"move 2 of {total}")
        # The focus went with the current move, and the list is still one stop.
        assert page.evaluate("document.activeElement.dataset.n") == "2"
        expect(tab_stops).to_have_count(1)
        # The set is finished: every hand, and the move in words.
        move = frames[2]["move"]
        expect(page.locator("#move")).to_contain_text(f"{names[move['seat']]}: {move['text']}")
        expect(page.locator(".seat-box .hand")).to_have_count(len(names))
        # One Tab more leaves the list (it is one stop, not a stop a move).
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.closest('#move-list') === null")
        page.keyboard.press("Shift+Tab")
        assert page.evaluate("document.activeElement.dataset.n") == "2"
        page.keyboard.press("End")
        expect(page.locator("#position")).to_have_text(f"move {total} of {total}")
        page.keyboard.press("Home")
        expect(page.locator("#position")).to_have_text(f"the deal (0 of {total})")
        # The shortcut help.
        expect(page.locator("#shortcuts")).to_be_hidden()
        page.keyboard.press("?")
        expect(page.locator("#shortcuts")).to_be_visible()
        expect(page.locator("#shortcuts")).to_contain_text("the next move")
        page.keyboard.press("Escape")
        expect(page.locator("#shortcuts")).to_be_hidden()
        # The controls stay in sight while the table scrolls by.
        page.evaluate("document.getElementById('seats').scrollIntoView()")
        top = page.evaluate("document.getElementById('controls').getBoundingClientRect().top")
        assert abs(top) < 1, top
        if width < 600:
            for button in ("play", "first", "prev", "next", "last"):
                box = page.locator(f"#{button}").bounding_box()
                assert box is not None and box["height"] >= 40, (button, box)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # The replay file, and the command that deals it again.
        href = page.locator("#download").get_attribute("href")
        assert href is not None
        doc = page.request.get(server.url + href).json()
        assert doc["seat_names"] == names and len(doc["moves"]) == total
        expect(page.locator("#replay-command")).to_contain_text(
            f"arena match boom --seed {doc['seed']} BOT1 BOT2 BOT3 BOT4"
        )
        assert problems == []
    finally:
        context.close()
