"""The pages in a real browser (Debian's chromium through Playwright): the leaderboard's content,
stepping through a replay forwards and back, switching seat views, watching a live match
advance, and the static report opened from file://."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import expect

from arena import replay
from arena.games import balloon
from arena.store import Store
from arena.web.report import write_report
from tests.web.support import completed_in_open_set, screenshot_path


def _completed(db: Path, ladder: str) -> tuple[int, dict]:
    with Store(db, readonly=True) as store:
        match = store.matches(ladder, ("completed",))[0]
        return match.index, store.replay(ladder, match.index)


def _hand_after(doc: dict, moves: int, seat: int) -> list[str]:
    """The engine's own answer: seat's hand after `moves` moves, as card names."""
    state = None
    for step in replay.rerun(doc):
        if step.index + 1 == moves:
            state = step.state
            break
    return [balloon.card_name(c) for c in state.observation(seat).hand]


def test_leaderboard_shows_the_standings_in_rating_order(server, page, web_db):
    with Store(web_db, readonly=True) as store:
        table = store.rankings("balloon3")
        suspended = {b.name for b in store.list_bots() if b.suspended}
    page.goto(f"{server.url}/ladders/balloon3")
    # Its rating mode, named with its unit (the demo ladder: the default, score margins).
    assert table.rating_mode == "margins"
    expect(page.locator("#rating-mode")).to_have_text("rated by score margins (points a match)")
    rows = page.locator("#leaderboard tbody tr")
    expect(rows).to_have_count(len(table.standings))
    for i, s in enumerate(table.standings):
        cells = rows.nth(i).locator("td")
        expect(cells.nth(0)).to_have_text(f"{s.rank}{'' if s.settled else '?'}")
        # Then its rank movement (td.move), the bot, and the rest.
        expect(cells.nth(1)).to_have_class(re.compile(r"\bmove\b"))
        expect(cells.nth(2)).to_contain_text(s.bot)
        expect(cells.nth(3)).to_have_text(f"{s.conservative:.2f}")
        expect(cells.nth(4)).to_have_text(f"{s.mu:.2f} ± {s.sigma:.2f}")
        better = "-" if s.p_better_than_next is None else f"{s.p_better_than_next:.2f}"
        expect(cells.nth(6)).to_have_text(better)
        expect(cells.nth(7)).to_have_text(str(s.matches))
        expect(cells.nth(10)).to_have_text(str(s.faults))
        if s.bot in suspended:
            expect(cells.nth(2)).to_contain_text("suspended")
    page.screenshot(path=screenshot_path("leaderboard.png"), full_page=True)
    page.get_by_role("link", name=table.standings[0].bot).first.click()
    expect(page.locator("h1")).to_have_text(f"Bot {table.standings[0].bot}")
    figure = page.locator('figure.rating-history[data-ladder="balloon3"]')
    expect(figure.locator('.chart-box[data-axis="matches"] svg')).to_be_visible()
    expect(figure.locator('.chart-box[data-axis="time"] svg')).to_be_hidden()


def test_replay_steps_forwards_and_back_and_switches_seat_views(server, page, web_db):
    index, doc = _completed(web_db, "balloon3")
    total = len(doc["moves"])
    page.goto(f"{server.url}/ladders/balloon3/matches/{index}")
    position = page.locator("#position")
    expect(position).to_have_text(f"the deal (0 of {total})")
    expect(page.locator("#prev")).to_be_disabled()
    for _ in range(3):
        page.locator("#next").click()
    expect(position).to_have_text(f"move 3 of {total}")
    expect(page.locator("#events li").first).to_be_visible()
    page.locator("#prev").click()
    expect(position).to_have_text(f"move 2 of {total}")
    # Its set is finished: the view opens with every hand; "the table only" shows none.
    expect(page.locator("#view")).to_have_value("-2")
    expect(page.locator(".seat-box .hand")).to_have_count(3)
    page.locator("#view").select_option("-1")
    expect(page.locator(".hand")).to_have_count(0)

    page.locator("#view").select_option("0")
    hand0 = page.locator('.seat-box[data-seat="0"] .hand .card')
    expect(hand0).to_have_count(len(_hand_after(doc, 2, 0)))
    shown0 = [t.strip() for t in hand0.all_inner_texts()]
    assert shown0 == _hand_after(doc, 2, 0)

    page.locator("#view").select_option("1")
    expect(page.locator('.seat-box[data-seat="0"] .hand')).to_have_count(0)
    hand1 = page.locator('.seat-box[data-seat="1"] .hand .card')
    expect(hand1).to_have_count(len(_hand_after(doc, 2, 1)))
    shown1 = [t.strip() for t in hand1.all_inner_texts()]
    assert shown1 == _hand_after(doc, 2, 1) and shown1 != shown0

    page.locator("#last").click()
    expect(position).to_have_text(f"move {total} of {total}")
    expect(page.locator("#events")).to_contain_text("match over")
    page.locator("#first").click()
    expect(position).to_have_text(f"the deal (0 of {total})")
    page.keyboard.press("ArrowRight")
    expect(position).to_have_text(f"move 1 of {total}")
    page.locator("#scrub").fill(str(total // 2))
    expect(position).to_have_text(f"move {total // 2} of {total}")
    page.screenshot(path=screenshot_path("replay.png"), full_page=True)


def test_a_live_match_advances_on_its_page(server, page, live):
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(f"{server.url}/ladders/{live.ladder}/matches/{live.index}")
    expect(page.locator("#match-status")).to_have_text("running")
    expect(page.locator("#live-note")).to_be_visible()
    shown = live.advance(0)
    expect(page.locator("#position")).to_have_text(
        f"the deal (0 of {shown})" if shown == 0 else f"move {shown} of {shown}"
    )
    shown = live.advance(4)
    expect(page.locator("#position")).to_have_text(f"move {shown} of {shown}")
    shown = live.advance(3)
    expect(page.locator("#position")).to_have_text(f"move {shown} of {shown}")
    # Spectators of a live match see no hands and no face-down choices.
    page.locator("#view").select_option("0")
    expect(page.locator('.seat-box[data-seat="0"] .hand')).to_contain_text("hidden")
    expect(page.locator("#move")).not_to_contain_text(":")
    # Pushed through the match's event stream (live.py), not polled.
    assert any(f"/matches/{live.index}/events?since=" in u for u in requested)
    assert not any("/live" in u for u in requested)


def test_match_list_filters_by_status(server, page):
    page.goto(f"{server.url}/matches")
    page.locator("select[name=ladder]").select_option("boom4")
    page.locator("select[name=status]").select_option("completed")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"ladder=boom4.*status=completed"))
    statuses = page.locator("#matches tbody tr td:nth-child(2)")
    assert statuses.count() > 0
    assert set(statuses.all_inner_texts()) == {"completed"}


def test_static_report_opens_from_file_with_a_working_replay(tmp_path, page, web_db):
    out = tmp_path / "site"
    write_report(web_db, out)
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((out / "index.html").as_uri())
    page.get_by_role("link", name="balloon3").first.click()
    expect(page.locator("#leaderboard tbody tr").first).to_be_visible()
    page.get_by_role("link", name="All matches").click()
    # A match of a finished set: its hands are public (see test_disclosure.py for the others).
    page.locator("#matches tbody tr.status-completed:not(.set-open) td:first-child a").first.click()
    expect(page).to_have_url(re.compile(r"^file://.*/matches/balloon3/\d+\.html"))
    position = page.locator("#position")
    expect(position).to_contain_text("the deal")
    page.locator("#next").click()
    expect(position).to_contain_text("move 1 of")
    page.locator("#view").select_option("2")
    expect(page.locator('.seat-box[data-seat="2"] .hand .card').first).to_be_visible()
    assert failed == [] and errors == []


def test_a_match_of_a_set_still_being_played_shows_no_hand_and_says_when(server, page, web_db):
    done = completed_in_open_set(web_db, "balloon3")
    page.goto(f"{server.url}/ladders/balloon3/matches/{done.index}")
    expect(page.locator("#withheld")).to_contain_text(
        "the deal is shown when its 3 rotations are finished (2 still to finish)"
    )
    expect(page.locator(".facts").first).not_to_contain_text(str(done.seed))
    expect(page.locator("#set a")).to_have_count(3)
    page.locator("#last").click()
    expect(page.locator("#events")).to_contain_text("match over")  # its public events, to the end
    page.locator("#view").select_option("1")
    expect(page.locator('.seat-box[data-seat="1"] .hand')).to_contain_text(
        "hidden: the deal is shown when its 3 rotations are finished"
    )
    expect(page.locator(".hand .card")).to_have_count(0)
    expect(page.locator("#move")).not_to_contain_text(":")
