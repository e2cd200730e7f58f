"""Nothing public shows a deal before its duplicate set is finished (arena/web/disclosure.py).

Two real ladders play Balloon for 3 among bots that hold each match, frozen, after a few moves
until the test opens it (tests/bots/gated_bot.py):

- `arena serve` (its own process: referee, continuous ladder, web server with the live feed,
  admin API) with three remote bots the test runs itself; it plays a set's rotations one
  after another;
- `arena ladder run -j 2` with three launched bots (two rounds: two sets), beside `arena web`
  (its own process); it plays two rotations at once.

At three moments — the first set just started; its first rotation completed (with an
illegal-action fault whose detail lists the seat's hand), the others still held; the first set
finished, the second one held — the test reads every public view: every page, every GET route
of the JSON API (checked against /openapi.json), the live feed, and an `arena report` written
then. While a set is unfinished no view of any of its matches holds its seed, a hand, an action
in words or a fault detail, and every frame shown is the public part of the full frame (from
the admin API, or the engine); once the set is finished its full replay is public. The seats'
own views (what the bots were sent) hold their hands all along.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import httpx
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from arena import seeds
from arena.cli import main
from arena.games import game_from_config
from arena.schedule import rotate
from arena.store import Store, UnknownLadder
from arena.web.disclosure import WITHHELD_DETAIL
from arena.web.frames import build_frames
from tests.cli import ROOT
from tests.service.serving import ADMIN, Server, free_port, wait_until
from tests.timing import scaled
from tests.web.support import GATED, MatchIndexes, gate_dirs, start_gated_ladder

BOTS = ("g1", "g2", "g3")
LADDER = "bal"
BALLOON3 = {"game": "balloon", "num_players": 3, "options": {}}
# Every public GET route of the JSON API; a new one must be added here (and to `_look`).
API_ROUTES = {
    "/api/ladders",
    "/api/ladders/{ladder}",
    "/api/bots",
    "/api/bots/{bot}",
    "/api/bots/{bot}/history",
    "/api/matches",
    "/api/ladders/{ladder}/matches/{index}",
    "/api/ladders/{ladder}/head-to-head",
    "/api/ladders/{ladder}/matches/{index}/live",
    "/api/ladders/{ladder}/matches/{index}/replay",
    "/api/ladders/{ladder}/export.jsonl",
    "/api/ladders/{ladder}/export.parquet",
    "/api/competitions",
    "/api/runtimes",
}
# The owners' API (arena/service/submissions.py) and a bot's log excerpts (arena/web/owners.py):
# nothing public, every route needs a key.
OWNER_ROUTES = {
    "/api/bots/{name}/owner",
    "/api/bots/{name}/versions/{version}",
    "/api/bots/{name}/versions/{version}/verification",
    "/api/bots/{bot}/faults",
    "/api/ladders/{ladder}/matches/{index}/logs",
    "/api/organiser/bots",
    "/api/bots/{name}/scrimmages",
    "/api/bots/{name}/scrimmages/{scrimmage_id}",
}
REPLAY_DATA = re.compile(r'<script type="application/json" id="replay-data">(.*?)</script>', re.S)


@dataclass
class Moment:
    """Everything public at one moment, and each match in full as the organiser sees it."""

    texts: dict[str, str]  # public URL -> body
    api: dict[str, Any]  # public API URL -> parsed JSON
    pages: dict[int, dict]  # match index -> its page's replay-viewer data
    report: dict[str, str]  # report file -> text
    full: dict[int, dict]  # match index -> {seed, frames (with hands), faults}
    rows: dict[int, dict]  # match index -> its stored row


@dataclass
class Run:
    kind: str  # "serve" (with a live source and the admin API) or "ladder" (arena web)
    db: Path
    gates: list[Path]  # where the bots look for their gates (and write what they saw)
    web: str
    moments: dict[str, Moment]


def _rows(db: Path) -> dict[int, dict]:
    with Store(db, readonly=True) as store:
        return {
            m.index: {
                "set": m.set_index,
                "rotation": m.rotation,
                "seed": m.seed,
                "seats": m.seats,
                "status": m.status,
            }
            for m in store.matches(LADDER)
        }


def _admin_view(web: str) -> Callable[[int, dict], dict]:
    def full(index: int, row: dict) -> dict:
        r = httpx.get(
            f"{web}/api/admin/ladders/{LADDER}/matches/{index}?frames=true",
            headers={"X-Admin-Key": ADMIN},
            timeout=scaled(30),
        )
        assert r.status_code == 200, r.text
        doc = r.json()
        assert doc["withheld"] is None and doc["seed"] == row["seed"]
        return {"frames": doc["frames"], "faults": [f["detail"] for f in doc["faults"]]}

    return full


def _engine_view(db: Path) -> Callable[[int, dict], dict]:
    """A match in full from the database and the engine: what `arena web` (no live source)
    would show of it if nothing were withheld."""

    def full(index: int, row: dict) -> dict:
        with Store(db, readonly=True) as store:
            doc = store.replay(LADDER, index)
            faults = [
                r[0]
                for r in store.db.execute(
                    "SELECT f.detail FROM faults f JOIN matches m ON m.id = f.match_id "
                    "WHERE m.idx = ? ORDER BY f.id",
                    (index,),
                )
            ]
        if row["status"] == "pending":
            return {"frames": [], "faults": faults}
        if doc is None:  # running: the start of the match
            doc = {
                "format": "arena-replay",
                "version": 1,
                "config": BALLOON3,
                "seed": row["seed"],
                "seat_names": list(row["seats"]),
                "moves": [],
                "faults": [],
                "scores": [],
                "ranks": [],
            }
        return {"frames": build_frames(doc), "faults": faults}

    return full


def _look(
    run_dir: Path,
    name: str,
    db: Path,
    web: str,
    full: Callable[[int, dict], dict],
    served_only: Sequence[str] = (),
) -> Moment:
    rows = _rows(db)
    pages = [
        "/",
        f"/ladders/{LADDER}",
        f"/ladders/{LADDER}/ratings.svg",
        "/admin",
        "/bots",
        "/matches",
        f"/matches?ladder={LADDER}",
        *(f"/matches?status={s}" for s in ("pending", "running", "completed")),
        *(f"/bots/{b}" for b in BOTS),
        *(f"/matches?bot={b}" for b in BOTS),
        *(f"/matches?bot={b}&faulted=true" for b in BOTS),
        *(f"/ladders/{LADDER}/matches/{i}" for i in rows),
    ]
    api = [
        "/api/ladders",
        f"/api/ladders/{LADDER}",
        f"/api/ladders/{LADDER}/head-to-head",
        f"/api/ladders/{LADDER}/export.jsonl",
        f"/api/ladders/{LADDER}/export.parquet",
        "/api/competitions",
        *served_only,
        "/api/bots",
        "/api/matches",
        f"/api/matches?ladder={LADDER}",
        *(f"/api/matches?status={s}" for s in ("pending", "running", "completed")),
        *(
            u
            for b in BOTS
            for u in (
                f"/api/bots/{b}",
                f"/api/bots/{b}/history",
                f"/api/matches?bot={b}",
                f"/api/matches?bot={b}&faulted=true",
            )
        ),
        *(
            u
            for i in rows
            for u in (
                f"/api/ladders/{LADDER}/matches/{i}",
                f"/api/ladders/{LADDER}/matches/{i}?frames=true",
                f"/api/ladders/{LADDER}/matches/{i}/live?since=0",
                f"/api/ladders/{LADDER}/matches/{i}/replay",
            )
        ),
    ]
    texts: dict[str, str] = {}
    with httpx.Client(base_url=web, timeout=scaled(30)) as client:
        for url in pages + api:
            r = client.get(url)
            # A replay file is given once its set is finished; before, a 409 says why.
            ok = (200, 409) if url.endswith("/replay") else (200,)
            assert r.status_code in ok, (url, r.status_code, r.text[:300])
            texts[url] = r.text
            if url.endswith(".parquet"):  # its rows, as JSON: what the checks of texts read
                rows_read = pq.read_table(io.BytesIO(r.content)).to_pylist()
                texts[url] = json.dumps(rows_read, default=str)
    out = run_dir / f"report-{name}"
    # The CLI command itself, in this process (an interpreter start less per look).
    result = CliRunner().invoke(main, ["report", "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert _rows(db) == rows, "the ladder moved while the test looked at it"
    return Moment(
        texts=texts,
        api={
            u: [json.loads(x) for x in texts[u].splitlines()]
            if u.endswith(".jsonl")
            else json.loads(texts[u])
            for u in api
        },
        pages={
            i: json.loads(REPLAY_DATA.search(texts[f"/ladders/{LADDER}/matches/{i}"])[1])
            for i in rows
        },
        report={str(p.relative_to(out)): p.read_text() for p in out.rglob("*.html")},
        full={i: full(i, row) for i, row in rows.items()},
        rows=rows,
    )


def _moments(
    run_dir: Path,
    db: Path,
    web: str,
    gates: list[Path],
    indexes: MatchIndexes,
    full: Callable[[int, dict], dict],
    alive: Callable[[], None],
    served_only: Sequence[str] = (),
    at_once: int | None = None,
) -> dict[str, Moment]:
    """Drive the ladder through the three moments, looking at each once it is frozen.
    `served_only`: routes of `arena serve` that `arena web` has not (the runtimes it offers).
    `at_once`: how many matches the run plays at once; frozen then means that many running
    and held (a run that had one running and held but was about to start the next, freed
    by the match the test had just let finish, moved while the test looked: seen once)."""

    def settled(completed: set[int]) -> Callable[[], bool]:
        # These matches completed, the others not, and every running one held by its bots.
        def check() -> bool:
            alive()
            try:
                rows = _rows(db)
            except UnknownLadder:  # `arena ladder run` has not written its schedule yet
                return False
            running = [i for i, r in rows.items() if r["status"] == "running"]
            return (
                {i for i, r in rows.items() if r["status"] == "completed"} == completed
                and bool(running)
                and (at_once is None or len(running) == at_once)
                and all(any((g / f"waiting-{i}").exists() for g in gates) for i in running)
            )

        return check

    moments = {}
    wait_until(settled(set()), "the first matches held by their bots")
    moments["A"] = _look(run_dir, "A", db, web, full, served_only)
    indexes.open("0")
    wait_until(settled({0}), "match 0 completed, the rest held")
    moments["B"] = _look(run_dir, "B", db, web, full, served_only)
    for i in ("1", "2"):
        indexes.open(i)
    wait_until(settled({0, 1, 2}), "the first set finished, the second held")
    moments["C"] = _look(run_dir, "C", db, web, full, served_only)
    indexes.open("all")  # let the ladder finish or stop without waiting for a deadline
    return moments


WORKERS = 2  # the ladder run's matches at once (-j)


@pytest.fixture(scope="module")
def serve_run(tmp_path_factory) -> Run:
    tmp = tmp_path_factory.mktemp("serve")
    db, gate = tmp / "arena.db", tmp / "gate"
    gate.mkdir()
    with Store(db) as store:
        tokens = {b: store.add_bot(b, remote=True) for b in BOTS}
    # A move may wait for the test for a minute.
    server = Server(tmp, db, ["--move-ms", "60000", "--grace", "30", "--allow-remote"])
    bots: list[subprocess.Popen] = []
    indexes = MatchIndexes(db, [gate]).start()

    def alive() -> None:
        if server.proc.poll() is not None:
            raise AssertionError(f"arena serve exited; its log:\n{server.log_tail()}")

    try:
        wait_until(server.up, "the web server", server=server)
        for name in BOTS:
            with open(tmp / f"{name}.log", "w") as log:
                bots.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            str(GATED),
                            "--address",
                            f"127.0.0.1:{server.port}",
                            "--token",
                            tokens[name],
                        ],
                        cwd=ROOT,
                        env={**os.environ, "GATE_DIR": str(gate)},
                        stdout=subprocess.DEVNULL,
                        stderr=log,
                        start_new_session=True,
                    )
                )
        moments = _moments(
            tmp, db, server.web, [gate], indexes, _admin_view(server.web), alive, ["/api/runtimes"]
        )
        yield Run(kind="serve", db=db, gates=[gate], web=server.web, moments=moments)
    finally:
        indexes.open("all")
        code = server.stop()
        for bot in bots:
            bot.terminate()
        for bot in bots:
            bot.wait(scaled(20))
        indexes.stop()
    assert code == 0, server.log_tail()


@pytest.fixture(scope="module")
def ladder_run(tmp_path_factory) -> Run:
    tmp = tmp_path_factory.mktemp("ladder")
    db, runs = tmp / "arena.db", tmp / "runs"
    gates = gate_dirs(runs, LADDER, BOTS)  # each launched bot lane's own work dir
    port = free_port()
    web = f"http://127.0.0.1:{port}"
    logs = open(tmp / "processes.log", "w")
    procs = {
        "arena web": subprocess.Popen(
            [sys.executable, "-m", "arena", "web", "--db", str(db), "--port", str(port)],
            cwd=ROOT,
            stdout=logs,
            stderr=logs,
            start_new_session=True,
        ),
        "arena ladder run": start_gated_ladder(db, runs, LADDER, BOTS, 5, WORKERS, logs),
    }
    indexes = MatchIndexes(db, gates).start()

    def alive() -> None:
        for what, proc in procs.items():
            if proc.poll() is not None:
                raise AssertionError(
                    f"{what} exited ({proc.returncode}):\n"
                    f"{(tmp / 'processes.log').read_text()[-3000:]}"
                )

    try:

        def web_up() -> bool:
            alive()
            try:
                return httpx.get(f"{web}/api/ladders", timeout=scaled(2)).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(web_up, "arena web")
        moments = _moments(tmp, db, web, gates, indexes, _engine_view(db), alive, at_once=WORKERS)
        assert procs["arena ladder run"].wait(scaled(120)) == 0
        yield Run(kind="ladder", db=db, gates=gates, web=web, moments=moments)
    finally:
        indexes.open("all")
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(scaled(60))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        indexes.stop()
        logs.close()


def _public_part(frame: dict) -> dict:
    """What a spectator may see of a full frame: no hands, no action in words."""
    out = {k: v for k, v in frame.items() if k != "hands"}
    if out["move"] is not None:
        out["move"] = {k: v for k, v in out["move"].items() if k != "text"}
    return out


def _round(frame: dict) -> str | None:
    """The frame's round, as its info says it ("2 of 5")."""
    return next((value for label, value in frame["info"] if label == "round"), None)


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


def _sets(m: Moment) -> dict[int, list[int]]:
    sets: dict[int, list[int]] = {}
    for i, row in m.rows.items():
        sets.setdefault(row["set"], []).append(i)
    return sets


@pytest.mark.parametrize("kind", ["serve", "ladder"])
@pytest.mark.parametrize("moment", ["A", "B", "C"])
def test_nothing_public_shows_a_match_of_an_unfinished_set(request, kind, moment):
    run: Run = request.getfixturevalue(f"{kind}_run")
    m = run.moments[moment]
    hidden = [
        i
        for ms in _sets(m).values()
        if any(m.rows[j]["status"] != "completed" for j in ms)
        for i in ms
    ]
    assert hidden, "each moment has a set still being played"
    seeds = {str(m.rows[i]["seed"]) for i in hidden}
    everything = {**m.texts, **{f"report/{k}": v for k, v in m.report.items()}}
    for where, text in everything.items():
        for seed in seeds:
            assert seed not in text, f"{where} shows the seed of a set still being played"
    for i in hidden:
        full = m.full[i]["frames"]
        url = f"/api/ladders/{LADDER}/matches/{i}"
        plain, api, live = m.api[url], m.api[f"{url}?frames=true"], m.api[f"{url}/live?since=0"]
        for doc in (plain, api, live):
            assert not _has_key(doc, "hands") and doc.get("seed") is None
        left = sum(m.rows[j]["status"] != "completed" for j in _sets(m)[m.rows[i]["set"]])
        assert (
            api["withheld"] == f"the deal is shown when its 3 rotations are finished "
            f"({left} still to finish)"
        )
        assert all(f["detail"] == WITHHELD_DETAIL for f in api["faults"])
        page = m.pages[i]
        assert page["full"] is False and page["withheld"] == api["withheld"]
        assert f"{api['withheld']}." in m.texts[f"/ladders/{LADDER}/matches/{i}"]
        status = m.rows[i]["status"]
        # Every frame shown is the public part of the full frame, the same in every view: a
        # pending match shows nothing; a running one its moves so far (serve's live source)
        # or its start (arena web); a completed one everything but hands and actions.
        expected = [] if status == "pending" else [_public_part(f) for f in full]
        assert page["frames"] == api["frames"] == expected
        from_live = run.kind == "serve" or status != "running"
        assert live["frames"] == (expected if from_live else [])
        if status == "running":
            assert len(full) > (3 if run.kind == "serve" else 0)  # some moves were public
            # No card a seat holds now is shown: compared with this round's frames, since each
            # round is a new deal (a card played in round 1 may be in a hand in round 2).
            held = {card for hand in full[-1]["hands"] for card in hand}
            this_round = [f for f in page["frames"] if _round(f) == _round(full[-1])]
            assert held and not held & _shown_cards(this_round)
        # The report, written then, says it is a snapshot and shows no hand either. It has
        # the matches that had started and those their pages link to (their sets).
        report = m.report.get(f"matches/{LADDER}/{i}.html")
        started = any(m.rows[j]["status"] != "pending" for j in _sets(m)[m.rows[i]["set"]])
        assert (report is not None) == started
        if report is None:
            continue
        assert "A snapshot: this report was written" in report
        data = json.loads(REPLAY_DATA.search(report)[1])
        assert data["full"] is False
        assert data["frames"] == (expected[:1] if status == "running" else expected)
    # The illegal-action fault's detail lists a hand: shown to nobody before its set ends.
    if m.rows[0]["status"] == "completed" and 0 in hidden:
        assert "your hand is" in m.full[0]["faults"][0]
        assert not any("your hand is" in t for t in everything.values())


@pytest.mark.parametrize("kind", ["serve", "ladder"])
def test_no_public_view_shows_the_seed_key_nor_a_running_sets_match_ids_or_bot_seeds(request, kind):
    """The store's bot-seed key (arena.seeds) is shown nowhere, ever; the opaque ids the bots
    were told and the seeds they were given are not shown while their set is unfinished (a
    running match's id beside its index would let a bot group the matches of a set)."""
    run: Run = request.getfixturevalue(f"{kind}_run")
    con = sqlite3.connect(run.db)
    try:
        (key,) = con.execute("SELECT value FROM secrets WHERE name = 'bot_seed_key'").fetchone()
        match_keys = dict(con.execute("SELECT idx, match_key FROM matches"))
    finally:
        con.close()
    key = bytes(key)
    spellings = {key.hex(), key.hex().upper(), base64.b64encode(key).decode()}
    spellings |= {base64.urlsafe_b64encode(key).decode().rstrip("="), str(list(key))[1:-1]}
    for name, m in run.moments.items():
        everything = {**m.texts, **{f"report/{k}": v for k, v in m.report.items()}}
        hidden = [
            i
            for ms in _sets(m).values()
            if any(m.rows[j]["status"] != "completed" for j in ms)
            for i in ms
        ]
        told = {match_keys[i] for i in hidden if match_keys.get(i)}
        assert told, f"moment {name}: some match of an unfinished set has started"
        given = {str(s) for i in hidden for s in seeds.bot_seeds(key, m.rows[i]["seed"], 3)}
        for where, text in everything.items():
            assert not any(s in text for s in spellings), f"{where} shows the bot-seed key"
            assert not any(k in text for k in told), f"{where} shows a running set's match id"
            assert not any(s in text for s in given), f"{where} shows a running set's bot seed"


@pytest.mark.parametrize("kind", ["serve", "ladder"])
def test_once_the_set_is_finished_its_full_replay_is_public(request, kind):
    run: Run = request.getfixturevalue(f"{kind}_run")
    m = run.moments["C"]
    first = _sets(m)[m.rows[0]["set"]]
    assert first == [0, 1, 2] and all(m.rows[i]["status"] == "completed" for i in first)
    for i in first:
        seed = m.rows[i]["seed"]
        api = m.api[f"/api/ladders/{LADDER}/matches/{i}?frames=true"]
        assert api["seed"] == seed and api["withheld"] is None and api["set_finished"] is True
        assert api["frames"] == m.full[i]["frames"] == m.pages[i]["frames"]
        assert m.pages[i]["full"] is True
        assert all(f["move"] is None or f["move"]["text"] for f in api["frames"])
        deal = game_from_config(BALLOON3).new_match(seed)
        assert api["frames"][0]["hands"] == [list(deal.observation(s).hand) for s in range(3)]
        assert f"seed {seed}" in m.texts[f"/ladders/{LADDER}/matches/{i}"]
        report = m.report[f"matches/{LADDER}/{i}.html"]
        assert f"seed {seed}" in report and "A snapshot" not in report
        assert json.loads(REPLAY_DATA.search(report)[1])["frames"] == api["frames"]
        assert m.api[f"/api/ladders/{LADDER}/matches/{i}/replay"]["seed"] == seed
    assert "your hand is" in m.texts[f"/ladders/{LADDER}/matches/0"]
    assert (
        m.api[f"/api/ladders/{LADDER}/matches/0"]["faults"][0]["detail"] == m.full[0]["faults"][0]
    )


def test_every_public_api_route_was_looked_at(serve_run):
    spec = httpx.get(f"{serve_run.web}/openapi.json").json()
    routes = {
        p for p, ops in spec["paths"].items() if "get" in ops and not p.startswith("/api/admin/")
    }
    assert routes == API_ROUTES | OWNER_ROUTES
    for route in OWNER_ROUTES:  # with no key, nothing (what they answer with one:
        # tests/submissions/test_submit_api.py, tests/web/test_fault_logs.py and
        # tests/service/test_scrimmages.py)
        url = serve_run.web + route.replace("{name}", BOTS[0]).replace("{version}", "1")
        url = url.replace("{ladder}", LADDER).replace("{index}", "0")
        url = url.replace("{scrimmage_id}", "1")
        r = httpx.get(url.replace("{bot}", BOTS[0]))
        assert r.status_code == 401, (route, r.text)
    looked = {
        re.sub(
            r"/matches/\d+",
            "/matches/{index}",
            re.sub(
                r"/api/bots/[^/?]+",
                "/api/bots/{bot}",
                re.sub(r"/api/ladders/[^/?]+", "/api/ladders/{ladder}", u.split("?")[0]),
            ),
        )
        for u in serve_run.moments["C"].api
    }
    assert looked == API_ROUTES


@pytest.mark.parametrize("kind", ["serve", "ladder"])
def test_head_to_head_counts_only_finished_sets(request, kind):
    run: Run = request.getfixturevalue(f"{kind}_run")
    for name, m in run.moments.items():
        finished = [
            i
            for ms in _sets(m).values()
            if all(m.rows[j]["status"] == "completed" for j in ms)
            for i in ms
        ]
        h2h = m.api[f"/api/ladders/{LADDER}/head-to-head"]
        # Three bots at every table: each finished match counts once for each ordered pair.
        assert sum(h["matches"] for h in h2h) == 6 * len(finished), (name, h2h)
        page = m.texts[f"/ladders/{LADDER}"]
        assert ('id="matrix"' in page) == bool(finished), name
    # At B match 0 was completed, its set not: it was not counted.
    assert run.moments["B"].api[f"/api/ladders/{LADDER}/head-to-head"] == []
    assert run.moments["C"].api[f"/api/ladders/{LADDER}/head-to-head"] != []


def test_a_seats_own_view_shows_its_own_hand(serve_run):
    m = serve_run.moments["B"]  # match 1 running: the public sees no hand of it
    deal = game_from_config(BALLOON3).new_match(m.rows[1]["seed"])
    for seat in range(3):
        seen = (serve_run.gates[0] / f"seen-1-{seat}.jsonl").read_text().splitlines()
        assert json.loads(seen[0]) == sorted(deal.observation(seat).hand)
    assert not _has_key(m.api[f"/api/ladders/{LADDER}/matches/1?frames=true"], "hands")


def test_serve_stores_the_rotations_of_one_deal_as_one_set_withheld_together(serve_run):
    c = serve_run.moments["C"]
    sets = _sets(c)
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
    b = serve_run.moments["B"]
    assert [b.rows[i]["status"] for i in (0, 1, 2)] == ["completed", "running", "pending"]
    assert all(b.api[f"/api/ladders/{LADDER}/matches/{i}"]["seed"] is None for i in (0, 1, 2))
    # Nor the export: at B none of the set's matches, at C all three.
    assert not {d["index"] for d in b.api[f"/api/ladders/{LADDER}/export.jsonl"]} & {0, 1, 2}
    exported = {d["index"]: d for d in c.api[f"/api/ladders/{LADDER}/export.jsonl"]}
    assert {0, 1, 2} <= set(exported) and exported[0]["replay"]["seed"] == rows[0]["seed"]
    assert not {d["index"] for d in b.api[f"/api/ladders/{LADDER}/export.parquet"]} & {0, 1, 2}
    in_parquet = {d["index"]: d for d in c.api[f"/api/ladders/{LADDER}/export.parquet"]}
    assert set(in_parquet) == set(exported)
    assert json.loads(in_parquet[0]["replay"]) == exported[0]["replay"]
    for i in (0, 1, 2):  # nor its replay file, the completed rotation's included
        refused = b.api[f"/api/ladders/{LADDER}/matches/{i}/replay"]
        assert "seed" not in refused and "rotations are finished" in refused["error"]["message"]
    assert all(
        c.api[f"/api/ladders/{LADDER}/matches/{i}"]["seed"] == rows[0]["seed"] for i in (0, 1, 2)
    )
