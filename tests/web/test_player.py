"""The replay player in a real browser: autoplay at a chosen speed, the move list that jumps to
any move, keyboard steps, the address (#move:view) followed on an open page, Boom's guard card
and Balloon's balloon drawn from the frames, and no action in words for a set still played."""

from __future__ import annotations

from pathlib import Path

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
    assert page.evaluate("location.hash") == f"#{held}:-1"
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


def test_the_move_list_jumps_to_any_move_and_names_a_seats_own_actions(server, page, web_db):
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
    # The public view names who moved; a seat's view adds that seat's own actions in words.
    public = items.all_inner_texts()
    assert public[0] == "the deal"
    assert public[1:] == [
        names[f["move"]["seat"]] + (" (by the referee)" if f["move"]["default"] else "")
        for f in frames[1:]
    ]
    page.locator("#view").select_option("2")
    own = items.all_inner_texts()
    for f, text in zip(frames[1:], own[1:]):
        if f["move"]["seat"] == 2:
            assert text.startswith(f"{names[2]}: {f['move']['text']}")
        else:
            assert ":" not in text
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
