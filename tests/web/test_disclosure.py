"""Nothing public shows a deal before its duplicate set is finished (arena/web/disclosure.py).

A real `arena serve` (its own process: referee, continuous ladder, web server with the live
feed, admin API) plays a Balloon ladder of 3 among three remote bots that the test runs itself
(tests/bots/gated_bot.py): each match is held, frozen, after a few moves until the test opens
it. At three moments the test reads every public view — every page, every GET route of the JSON
API (checked against /openapi.json), the live feed, and an `arena report` written then:

  A. the first set's rotation 0 running, rotations 1 and 2 pending;
  B. rotation 0 completed (with an illegal-action fault whose detail lists a hand), 1 running;
  C. the first set finished, the second set's rotation 0 running.

While a set is unfinished no view of any of its matches holds its seed, a hand, an action in
words or a fault detail, and every frame shown is the public part of what the admin API shows
in full; once the set is finished the full replay is public. The seats' own views (what the
bots were sent) hold their hands all along.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.games import game_from_config
from arena.ladder.schedule import rotate
from arena.store import Store
from arena.web.disclosure import WITHHELD_DETAIL
from tests.service.test_serve import ADMIN, ROOT, Server, arena, wait_until

BOTS = ("g1", "g2", "g3")
LADDER = "bal"
GATED = ROOT / "tests" / "bots" / "gated_bot.py"
# Every public GET route of the JSON API; a new one must be added here (and to `views`).
API_ROUTES = {"/api/ladders", "/api/ladders/{ladder}", "/api/bots", "/api/bots/{bot}",
              "/api/bots/{bot}/history", "/api/matches", "/api/ladders/{ladder}/matches/{index}",
              "/api/ladders/{ladder}/matches/{index}/live"}
REPLAY_DATA = re.compile(r'<script type="application/json" id="replay-data">(.*?)</script>', re.S)


@dataclass
class Moment:
    """Everything public at one moment, and what the admin API showed of each match then."""

    name: str
    texts: dict[str, str]  # public URL (or report file) -> body
    api: dict[str, Any]  # public API URL -> parsed JSON
    pages: dict[int, dict]  # match index -> its page's replay-viewer data
    report: dict[str, str]  # report file -> text
    admin: dict[int, dict]  # match index -> the admin API's full answer (frames included)
    rows: dict[int, dict] = field(default_factory=dict)  # match index -> its stored row


@dataclass
class Run:
    db: Path
    gate: Path
    server: Server
    moments: dict[str, Moment]


def _rows(db: Path) -> dict[int, dict]:
    with Store(db, readonly=True) as store:
        return {m.index: {"set": m.set_index, "rotation": m.rotation, "seed": m.seed,
                          "seats": m.seats, "status": m.status}
                for m in store.matches(LADDER)}


def _look(name: str, run_dir: Path, db: Path, web: str) -> Moment:
    rows = _rows(db)
    texts: dict[str, str] = {}
    api: dict[str, Any] = {}
    urls = ["/", f"/ladders/{LADDER}", "/bots", "/matches", f"/matches?ladder={LADDER}",
            *(f"/matches?status={s}" for s in ("pending", "running", "completed")),
            *(f"/bots/{b}" for b in BOTS), *(f"/matches?bot={b}" for b in BOTS),
            *(f"/ladders/{LADDER}/matches/{i}" for i in rows)]
    api_urls = ["/api/ladders", f"/api/ladders/{LADDER}", "/api/bots", "/api/matches",
                f"/api/matches?ladder={LADDER}",
                *(f"/api/matches?status={s}" for s in ("pending", "running", "completed")),
                *(u for b in BOTS for u in (f"/api/bots/{b}", f"/api/bots/{b}/history",
                                            f"/api/matches?bot={b}")),
                *(u for i in rows for u in (f"/api/ladders/{LADDER}/matches/{i}",
                                            f"/api/ladders/{LADDER}/matches/{i}?frames=true",
                                            f"/api/ladders/{LADDER}/matches/{i}/live?since=0"))]
    with httpx.Client(base_url=web, timeout=30) as client:
        for url in urls + api_urls:
            r = client.get(url)
            assert r.status_code == 200, (url, r.status_code, r.text[:300])
            texts[url] = r.text
            if url.startswith("/api/"):
                api[url] = r.json()
        admin = {}
        for i in rows:
            r = client.get(f"/api/admin/ladders/{LADDER}/matches/{i}?frames=true",
                           headers={"X-Admin-Key": ADMIN})
            assert r.status_code == 200, r.text
            admin[i] = r.json()
    pages = {i: json.loads(REPLAY_DATA.search(texts[f"/ladders/{LADDER}/matches/{i}"])[1])
             for i in rows}
    out = run_dir / f"report-{name}"
    arena("report", "--db", str(db), "--out", str(out))
    report = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*.html")}
    return Moment(name=name, texts=texts, api=api, pages=pages, report=report, admin=admin,
                  rows=rows)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    tmp = tmp_path_factory.mktemp("disclosure")
    db, gate = tmp / "arena.db", tmp / "gate"
    gate.mkdir()
    with Store(db) as store:
        tokens = {b: store.add_bot(b, remote=True) for b in BOTS}
    # Moves may wait for the test for a minute; the web server and the live feed are real.
    server = Server(tmp, db, ["--move-ms", "60000", "--grace", "30"])
    bots: list[subprocess.Popen] = []
    try:
        wait_until(server.up, "the web server", server=server)
        for name in BOTS:
            log = open(tmp / f"{name}.log", "w")
            bots.append(subprocess.Popen(
                [sys.executable, str(GATED), "--address", f"127.0.0.1:{server.port}",
                 "--token", tokens[name]], cwd=ROOT, env={**os.environ, "GATE_DIR": str(gate)},
                stdout=subprocess.DEVNULL, stderr=log, start_new_session=True))
            log.close()
        def held(index: int, after: int | None = None):
            # Match `index` is frozen by its bots (and match `after` is completed).
            return lambda: (gate / f"waiting-{index}").exists() and (
                after is None or _rows(db)[after]["status"] == "completed")

        moments = {}
        wait_until(held(0), "match 0 held by its bots", server=server)
        moments["A"] = _look("A", tmp, db, server.web)
        (gate / "open-0").touch()
        wait_until(held(1, after=0), "match 0 completed and match 1 held", server=server)
        moments["B"] = _look("B", tmp, db, server.web)
        (gate / "open-1").touch()
        (gate / "open-2").touch()
        wait_until(held(3, after=2), "the first set finished and match 3 held", server=server)
        moments["C"] = _look("C", tmp, db, server.web)
        (gate / "open-all").touch()  # let the server stop without waiting for its grace
        yield Run(db=db, gate=gate, server=server, moments=moments)
    finally:
        (gate / "open-all").touch()
        code = server.stop()
        for bot in bots:
            bot.terminate()
        for bot in bots:
            bot.wait(20)
    assert code == 0, server.log_tail()


def _unfinished_set(m: Moment) -> list[int]:
    sets: dict[int, list[int]] = {}
    for i, row in m.rows.items():
        sets.setdefault(row["set"], []).append(i)
    return [i for ms in sets.values() if any(m.rows[j]["status"] != "completed" for j in ms)
            for i in ms]


def _public_part(frame: dict) -> dict:
    """What a spectator may see of a full frame: no hands, no action in words."""
    out = {k: v for k, v in frame.items() if k != "hands"}
    if out["move"] is not None:
        out["move"] = {k: v for k, v in out["move"].items() if k != "text"}
    return out


def _shown_cards(frames: list[dict]) -> set[int]:
    """The ids of the cards the frames show on the table and before the seats (a card is an
    id, [id, note] or a literal [text, colour])."""
    shown = set()
    for f in frames:
        for row in [*f["table"], *f["seats"]]:
            for card in row["cards"]:
                if isinstance(card, int):
                    shown.add(card)
                elif isinstance(card[0], int):
                    shown.add(card[0])
    return shown


def _has_key(doc: Any, key: str) -> bool:
    if isinstance(doc, dict):
        return key in doc or any(_has_key(v, key) for v in doc.values())
    if isinstance(doc, list):
        return any(_has_key(v, key) for v in doc)
    return False


@pytest.mark.parametrize("moment", ["A", "B", "C"])
def test_nothing_public_shows_a_match_of_an_unfinished_set(run, moment):
    m = run.moments[moment]
    hidden = _unfinished_set(m)
    assert hidden, "each moment has a set still being played"
    seeds = {str(m.rows[i]["seed"]) for i in hidden}
    everything = {**m.texts, **{f"report/{k}": v for k, v in m.report.items()}}
    for where, text in everything.items():
        for seed in seeds:
            assert seed not in text, f"{where} shows the seed of a set still being played"
    for i in hidden:
        admin = m.admin[i]
        full = admin["frames"]
        public = [f"/api/ladders/{LADDER}/matches/{i}", f"/api/ladders/{LADDER}/matches/{i}"
                  "?frames=true", f"/api/ladders/{LADDER}/matches/{i}/live?since=0"]
        for url in public:
            doc = m.api[url]
            assert not _has_key(doc, "hands") or all(
                f.get("hands") is None for f in doc.get("frames") or []), url
            assert doc.get("seed") is None, url
        api = m.api[public[1]]
        assert api["withheld"] == "the deal is shown when its 3 rotations are finished (" \
            f"{sum(m.rows[j]['status'] != 'completed' for j in hidden)} still to finish)"
        assert all(f["detail"] == WITHHELD_DETAIL for f in api["faults"])
        page = m.pages[i]
        assert page["full"] is False and page["withheld"] == api["withheld"]
        html = m.texts[f"/ladders/{LADDER}/matches/{i}"]
        assert f"{api['withheld']}." in html
        status = m.rows[i]["status"]
        if status == "pending":
            # Nothing of it has been dealt at a table.
            assert page["frames"] == api["frames"] == m.api[public[2]]["frames"] == []
            continue
        # Every frame shown is the public part of the full frame, the same in every view.
        expected = [_public_part(f) for f in full]
        assert page["frames"] == api["frames"] == m.api[public[2]]["frames"] == expected
        assert m.api[public[2]]["source"] == ("live" if status == "running" else "store")
        # No card still held in the match (the admin's last frame) is shown anywhere public.
        held = {card for hand in full[-1]["hands"] for card in hand}
        if status == "running":
            assert held and not held & _shown_cards(page["frames"])
        assert admin["seed"] == m.rows[i]["seed"] and admin["withheld"] is None
        # The report, written then, says it is a snapshot and shows no hand either.
        report = m.report[f"matches/{LADDER}/{i}.html"]
        assert "A snapshot: this report was written" in report
        data = json.loads(REPLAY_DATA.search(report)[1])
        assert data["full"] is False and data["frames"] == expected[:1 if status == "running"
                                                                  else None]
    # The illegal-action fault's detail lists a hand: only the admin sees it before the end.
    if m.rows[0]["status"] == "completed" and 0 in hidden:
        assert "your hand is" in m.admin[0]["faults"][0]["detail"]
        assert not any("your hand is" in t for t in everything.values())


def test_once_the_set_is_finished_its_full_replay_is_public(run):
    m = run.moments["C"]
    first = [i for i, row in m.rows.items() if row["set"] == m.rows[0]["set"]]
    assert len(first) == 3 and all(m.rows[i]["status"] == "completed" for i in first)
    for i in first:
        api = m.api[f"/api/ladders/{LADDER}/matches/{i}?frames=true"]
        assert api["seed"] == m.rows[i]["seed"] and api["withheld"] is None
        assert api["set_finished"] is True
        assert api["frames"] == m.admin[i]["frames"] and api["frames"][0]["hands"]
        assert all(f["move"] is None or f["move"]["text"] for f in api["frames"])
        assert m.pages[i]["frames"] == api["frames"] and m.pages[i]["full"] is True
        assert f"seed {m.rows[i]['seed']}" in m.texts[f"/ladders/{LADDER}/matches/{i}"]
        report = m.report[f"matches/{LADDER}/{i}.html"]
        assert f"seed {m.rows[i]['seed']}" in report and "A snapshot" not in report
        # The hands shown are the engine's.
        game = game_from_config({"game": "balloon", "num_players": 3, "options": {}})
        deal = game.new_match(m.rows[i]["seed"])
        assert api["frames"][0]["hands"] == [list(deal.observation(s).hand) for s in range(3)]
    assert "your hand is" in m.texts[f"/ladders/{LADDER}/matches/0"]
    assert "your hand is" in m.api[f"/api/ladders/{LADDER}/matches/0"]["faults"][0]["detail"]


def test_every_public_api_route_was_looked_at(run):
    spec = httpx.get(f"{run.server.web}/openapi.json").json()
    routes = {p for p, ops in spec["paths"].items() if "get" in ops
              and not p.startswith("/api/admin/")}
    assert routes == API_ROUTES
    looked = {re.sub(r"/matches/\d+", "/matches/{index}",
                     re.sub(r"/api/bots/[^/?]+", "/api/bots/{bot}",
                            re.sub(r"/api/ladders/[^/?]+", "/api/ladders/{ladder}",
                                   u.split("?")[0])))
              for u in run.moments["C"].api}
    assert looked == API_ROUTES


def test_a_seats_own_view_shows_its_own_hand(run):
    m = run.moments["B"]  # match 1 running: the public sees no hand of it
    seed = m.rows[1]["seed"]
    deal = game_from_config({"game": "balloon", "num_players": 3, "options": {}}).new_match(seed)
    for seat in range(3):
        seen = (run.gate / f"seen-1-{seat}.jsonl").read_text().splitlines()
        assert json.loads(seen[0]) == sorted(deal.observation(seat).hand)
    assert not _has_key(m.api[f"/api/ladders/{LADDER}/matches/1?frames=true"]["frames"],
                        "hands")


def test_serve_stores_the_rotations_of_one_deal_as_one_set_withheld_together(run):
    c = run.moments["C"]
    sets: dict[int, list[int]] = {}
    for i, row in c.rows.items():
        sets.setdefault(row["set"], []).append(i)
    first, second = sorted(sets)[:2]
    assert sets[first] == [0, 1, 2] and sets[second][:1] == [3] and second == first + 1
    rows = [c.rows[i] for i in sets[first]]
    assert [r["rotation"] for r in rows] == [0, 1, 2]
    assert len({r["seed"] for r in rows}) == 1
    assert [r["seats"] for r in rows] == [rotate(rows[0]["seats"], r) for r in range(3)]
    api = c.api[f"/api/ladders/{LADDER}/matches/1"]
    assert [(s["index"], s["rotation"]) for s in api["set_matches"]] == [(0, 0), (1, 1), (2, 2)]
    listed = {r["index"]: r for r in c.api[f"/api/matches?ladder={LADDER}"]["matches"]}
    assert {listed[i]["set_index"] for i in sets[first]} == {first}
    # Withheld together: at B, rotation 0 was completed, yet none of the three showed its seed.
    b = run.moments["B"]
    assert [b.rows[i]["status"] for i in (0, 1, 2)] == ["completed", "running", "pending"]
    assert all(b.api[f"/api/ladders/{LADDER}/matches/{i}"]["seed"] is None for i in (0, 1, 2))
    assert all(c.api[f"/api/ladders/{LADDER}/matches/{i}"]["seed"] == rows[0]["seed"]
               for i in (0, 1, 2))
