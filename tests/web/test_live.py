"""Pages that follow a real ladder without being reloaded, through the event streams
(arena/web/live.py), and nothing in those streams that the pages may not show yet.

`arena ladder run` plays Balloon for 3 among three launched bots that hold each match until the
test lets it go (tests/bots/gated_bot.py); the web app serves the same database in this
process. The ladder page, opened once, must show each match completing, the matches being
played, and head to head only once the first set is finished; the streams of a match whose set
is still played carry no hand, no action in words and no seed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from arena.store import Store, UnknownLadder
from arena.web.factory import create_app
from tests.service.serving import wait_until
from tests.timing import scaled
from tests.web.support import MatchIndexes, ServerThread, gate_dirs, start_gated_ladder

BOTS = ("h1", "h2", "h3")
LADDER = "held"


class Ladder:
    def __init__(self, tmp: Path):
        self.db, self.runs = tmp / "arena.db", tmp / "runs"
        self.gates = gate_dirs(self.runs, LADDER, BOTS)
        self.log = tmp / "ladder.log"
        with open(self.log, "w") as log:  # the child keeps its own descriptor
            self.proc = start_gated_ladder(self.db, self.runs, LADDER, BOTS, 9, 1, log)
        self.indexes = MatchIndexes(self.db, self.gates).start()

    def alive(self) -> None:
        if self.proc.poll() is not None:
            raise AssertionError(
                f"arena ladder run exited ({self.proc.returncode}):\n{self.log.read_text()[-3000:]}"
            )

    def statuses(self) -> dict[int, str]:
        try:
            with Store(self.db, readonly=True) as store:
                return {m.index: m.status for m in store.matches(LADDER)}
        except UnknownLadder:
            return {}

    def held(self, index: int) -> bool:
        """Match `index` running, frozen by its bots."""
        self.alive()
        return self.statuses().get(index) == "running" and any(
            (g / f"waiting-{index}").exists() for g in self.gates
        )

    def release(self, name: str) -> None:
        self.indexes.open(name)

    def stop(self) -> None:
        self.release("all")
        try:
            self.proc.wait(scaled(60))
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        finally:
            self.indexes.stop()


@pytest.fixture(scope="module")
def held_ladder(tmp_path_factory):
    ladder = Ladder(tmp_path_factory.mktemp("live"))
    server = None
    try:
        wait_until(lambda: ladder.held(0), "match 0 held by its bots")
        server = ServerThread(create_app(ladder.db, live_interval=0.2)).start()
        yield ladder, server
    finally:
        if server is not None:
            server.stop()
        ladder.stop()


def _first_event(url: str, name: str) -> dict:
    """The first `name` event of the stream at `url`, parsed."""
    with httpx.stream("GET", url, timeout=scaled(30)) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        event = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == name:
                return json.loads(line[6:])
    raise AssertionError(f"{url} ended without a {name} event")


def test_the_ladder_page_follows_the_ladder_without_reloading(held_ladder, browser):
    ladder, server = held_ladder
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    total = len(ladder.statuses())
    page.goto(f"{server.url}/ladders/{LADDER}")
    page.evaluate("window.openedOnce = true")  # gone if the page reloads
    facts = page.locator("#ladder-live .facts").first
    expect(facts).to_contain_text(f"0 of {total} matches completed")
    with Store(ladder.db, readonly=True) as store:
        seats = store.get_match(LADDER, 0).seats
    expect(page.locator(".running li")).to_have_text([f"match 0: {', '.join(seats)}"])

    ladder.release("0")
    wait_until(lambda: ladder.held(1), "match 0 completed, match 1 held")
    expect(facts).to_contain_text(f"1 of {total} matches completed", timeout=scaled(15000))
    expect(page.locator(".running li a")).to_have_text(["match 1"], timeout=scaled(15000))
    # Match 0 completed, its set not: head to head counts nothing yet.
    expect(page.locator("#matrix")).to_have_count(0)
    assert page.evaluate("window.openedOnce") is True

    ladder.release("1")
    wait_until(lambda: ladder.held(2), "match 1 completed, match 2 held")
    ladder.release("2")
    wait_until(lambda: ladder.held(3), "the first set finished, match 3 held")
    expect(facts).to_contain_text(f"3 of {total} matches completed", timeout=scaled(15000))
    expect(page.locator("#matrix")).to_have_count(1, timeout=scaled(15000))
    h2h = httpx.get(f"{server.url}/api/ladders/{LADDER}/head-to-head").json()
    assert sum(h["matches"] for h in h2h) == 3 * 6  # three matches, six ordered pairs each
    for h in h2h:
        cell = page.locator(
            f'#matrix tr[data-bot="{h["bot"]}"] td[data-opponent="{h["opponent"]}"]'
        )
        expect(cell).to_have_text(f"{h['ahead']}–{h['level']}–{h['behind']}")
    assert page.evaluate("window.openedOnce") is True
    assert errors == []
    context.close()


def test_streams_carry_nothing_of_a_set_still_played(held_ladder):
    ladder, server = held_ladder
    # The first set (matches 0 to 2) played out, here when the browser test above has not done it
    # (it is skipped by scripts/test --quick).
    for index in range(3):
        if ladder.statuses().get(index) != "completed":
            wait_until(lambda i=index: ladder.held(i), f"match {index} held")
            ladder.release(str(index))
    wait_until(lambda: ladder.held(3), "match 3 held")  # the second set: 3 running, 4, 5 not
    with Store(ladder.db, readonly=True) as store:
        second = [m for m in store.matches(LADDER) if m.index in (3, 4, 5)]
        first = [m for m in store.matches(LADDER) if m.index in (0, 1, 2)]
    assert {m.set_index for m in second} != {m.set_index for m in first}
    seeds = {str(m.seed) for m in second}
    for m in second:
        event = _first_event(
            f"{server.url}/api/ladders/{LADDER}/matches/{m.index}/events", "frames"
        )
        assert event["status"] == m.status and event["done"] is False
        text = json.dumps(event)
        assert '"hands"' not in text and not any(seed in text for seed in seeds)
        assert all(f["move"] is None or "text" not in f["move"] for f in event["frames"])
    html = _first_event(f"{server.url}/api/ladders/{LADDER}/events", "ladder")["html"]
    assert "match 3" in html and not any(seed in html for seed in seeds)
    # A finished set's match: its stream is the public frames and ends at once, done.
    done = _first_event(f"{server.url}/api/ladders/{LADDER}/matches/0/events", "frames")
    assert done["done"] is True and done["frames"] and '"hands"' not in json.dumps(done)


def test_unknown_streams_are_404s(held_ladder):
    _, server = held_ladder
    r = httpx.get(f"{server.url}/api/ladders/nope/events")
    assert r.status_code == 404 and "no ladder called 'nope'" in r.json()["error"]["message"]
    r = httpx.get(f"{server.url}/api/ladders/{LADDER}/matches/999/events")
    assert r.status_code == 404 and "has no match 999" in r.json()["error"]["message"]
