"""The JSON API against its OpenAPI description, its answers against the store and the engines,
pagination and filters, and bad input: 404s, 422s and 400s with clear messages, never a stack
trace."""

from __future__ import annotations

import json
import shutil
import sqlite3

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena import replay
from arena.games import game_from_config
from arena.store import SchemaTooNew, Store
from arena.web.factory import create_app
from tests.web.support import ADMIN_KEY


def _schema_for(spec: dict, path: str, status: int) -> dict:
    """The response schema of GET `path` (an OpenAPI path template) for `status`, with the
    spec's components so that $refs resolve."""
    op = spec["paths"][path]["get"]
    content = op["responses"][str(status)]["content"]["application/json"]["schema"]
    return {**content, "components": spec["components"]}


def _validate(spec: dict, template: str, response) -> None:
    schema = _schema_for(spec, template, response.status_code)
    jsonschema.validate(response.json(), schema, cls=jsonschema.Draft202012Validator)


@pytest.fixture(scope="module")
def spec(client) -> dict:
    r = client.get("/openapi.json")
    assert r.status_code == 200
    return r.json()


@pytest.fixture(scope="module")
def sample(web_db) -> dict:
    with Store(web_db, readonly=True) as store:
        done = store.matches("boom4", ("completed",))[0]
        return {"completed": done, "bot": done.seats[0]}


def _requests(sample: dict) -> dict[str, list[str]]:
    m = sample["completed"]
    bot = sample["bot"]
    return {
        "/api/ladders": ["/api/ladders"],
        "/api/ladders/{ladder}": ["/api/ladders/balloon3", "/api/ladders/boom4"],
        "/api/bots": ["/api/bots"],
        "/api/bots/{bot}": [f"/api/bots/{bot}", "/api/bots/frank?recent=3"],
        "/api/bots/{bot}/faults": [
            (f"/api/bots/{bot}/faults", {"X-Admin-Key": ADMIN_KEY}),
            ("/api/bots/frank/faults?limit=3", {"X-Admin-Key": ADMIN_KEY}),
        ],
        "/api/bots/{bot}/history": [
            f"/api/bots/{bot}/history",
            f"/api/bots/{bot}/history?ladder=boom4",
        ],
        "/api/matches": [
            "/api/matches",
            "/api/matches?ladder=boom4&status=completed&limit=3",
            f"/api/matches?bot={bot}&limit=5",
            "/api/matches?bot=frank&faulted=true",
            "/api/matches?status=running",
        ],
        "/api/ladders/{ladder}/matches/{index}": [
            f"/api/ladders/boom4/matches/{m.index}",
            f"/api/ladders/boom4/matches/{m.index}?frames=true",
            "/api/ladders/balloon3/matches/0?frames=true",
        ],
        "/api/ladders/{ladder}/head-to-head": [
            "/api/ladders/boom4/head-to-head",
            f"/api/ladders/balloon3/head-to-head?bot={bot}",
        ],
        "/api/ladders/{ladder}/matches/{index}/live": [
            f"/api/ladders/boom4/matches/{m.index}/live",
            f"/api/ladders/boom4/matches/{m.index}/live?since=5",
        ],
        "/api/competitions": ["/api/competitions"],
        "/api/ladders/{ladder}/matches/{index}/replay": ["/api/ladders/balloon3/matches/0/replay"],
        "/api/ladders/{ladder}/export.jsonl": ["/api/ladders/boom4/export.jsonl?limit=2"],
        "/api/ladders/{ladder}/export.parquet": ["/api/ladders/boom4/export.parquet?limit=2"],
        "/api/ladders/{ladder}/matches/{index}/logs": [
            (f"/api/ladders/boom4/matches/{m.index}/logs", {"X-Admin-Key": ADMIN_KEY}),
        ],
        "/api/organiser/bots": [("/api/organiser/bots", {"X-Admin-Key": ADMIN_KEY})],
    }


def test_every_endpoint_answers_as_its_openapi_description_says(client, spec, sample):
    requests = _requests(sample)
    assert set(requests) == set(spec["paths"]), "a new endpoint needs a case here"
    for template, urls in requests.items():
        for url in urls:
            url, headers = url if isinstance(url, tuple) else (url, {})
            r = client.get(url, headers=headers)
            assert r.status_code == 200, (url, r.text)
            if template.endswith(".jsonl"):  # JSON Lines: tests/web/test_export.py reads them
                assert r.headers["content-type"] == "application/jsonl" and r.text, url
                continue
            if template.endswith(".parquet"):  # and Parquet
                assert r.headers["content-type"] == "application/vnd.apache.parquet", url
                assert r.content[:4] == r.content[-4:] == b"PAR1", url
                continue
            _validate(spec, template, r)


def test_errors_answer_as_the_openapi_description_says(client, spec, web_db):
    with Store(web_db, readonly=True) as store:
        running = store.matches("balloon3", ("running",))[0].index
    # Per route of the API: (a request, the status it gets, words of its error message).
    cases = {
        "/api/ladders/{ladder}": [("/api/ladders/nope", 404, "no ladder called 'nope'")],
        "/api/bots/{bot}": [("/api/bots/nobody", 404, "no bot called 'nobody'")],
        "/api/bots/{bot}/history": [("/api/bots/alice/history?ladder=nope", 404, "'nope'")],
        "/api/bots/{bot}/faults": [
            ("/api/bots/alice/faults", 401, "give its owner key or the bot's token"),
            ("/api/bots/nobody/faults", 404, "no bot called 'nobody'"),
            ("/api/bots/alice/faults?limit=0", 422, "limit"),
        ],
        "/api/matches": [
            ("/api/matches?ladder=nope", 404, "no ladder called 'nope'"),
            ("/api/matches?bot=nobody", 404, "no bot called 'nobody'"),
            ("/api/matches?opponent=bob", 422, "opponent: needs a bot too"),
            ("/api/matches?bot=alice&opponent=bob&status=running", 422, "only completed matches"),
            ("/api/matches?bot=alice&opponent=nobody", 404, "no bot called"),
            ("/api/matches?faulted=true", 422, "faulted: needs a bot too"),
            ("/api/matches?bot=alice&faulted=true&status=running", 422, "only completed"),
            ("/api/matches?limit=0", 422, "limit"),
            ("/api/matches?limit=lots", 422, "limit"),
            ("/api/matches?status=bogus", 422, "status"),
            ("/api/matches?before=-3", 422, "before"),
        ],
        "/api/ladders/{ladder}/matches/{index}": [
            ("/api/ladders/boom4/matches/99999", 404, "has no match 99999"),
            ("/api/ladders/boom4/matches/-1", 422, "index"),
            ("/api/ladders/boom4/matches/x", 422, "index"),
        ],
        "/api/ladders/{ladder}/matches/{index}/live": [
            ("/api/ladders/x/matches/1/live", 404, "no ladder"),
            ("/api/ladders/boom4/matches/0/live?since=-1", 422, "since"),
        ],
        "/api/ladders/{ladder}/head-to-head": [
            ("/api/ladders/nope/head-to-head", 404, "no ladder called 'nope'"),
        ],
        "/api/ladders/{ladder}/matches/{index}/replay": [
            (f"/api/ladders/balloon3/matches/{running}/replay", 409, "rotations are finished"),
            ("/api/ladders/boom4/matches/99999/replay", 404, "has no match 99999"),
        ],
        "/api/ladders/{ladder}/export.parquet": [
            ("/api/ladders/nope/export.parquet", 404, "no ladder called 'nope'"),
            ("/api/ladders/boom4/export.parquet?since=yesterday", 422, "give YYYY-MM-DD"),
        ],
        "/api/ladders/{ladder}/matches/{index}/logs": [
            ("/api/ladders/boom4/matches/0/logs", 401, "give the bot's owner key"),
            ("/api/ladders/boom4/matches/99999/logs", 404, "has no match 99999"),
        ],
    }
    cases["/api/organiser/bots"] = [
        ("/api/organiser/bots", 401, "give the server's admin key"),
    ]
    wrong = client.get("/api/organiser/bots", headers={"X-Admin-Key": "guess"})
    assert wrong.status_code == 403 and "not this server's admin key" in wrong.text
    for template, requests in cases.items():
        for url, status, words in requests:
            r = client.get(url)
            assert r.status_code == status, (url, r.text)
            _validate(spec, template, r)
            assert words in r.json()["error"]["message"], (url, r.json())


def test_unknown_pages_and_bad_parameters_get_html_errors(client):
    for url, status, words in [
        ("/ladders/nope", 404, "no ladder called"),
        ("/bots/nobody", 404, "no bot called"),
        ("/ladders/boom4/matches/99999", 404, "has no match 99999"),
        ("/no/such/page", 404, "no page at /no/such/page"),
        ("/matches?status=bogus", 400, "status: must be one of"),
        ("/matches?limit=9999", 400, "limit"),
        ("/ladders/boom4/matches/abc", 400, "index"),
    ]:
        r = client.get(url)
        assert r.status_code == status, url
        assert r.headers["content-type"].startswith("text/html")
        assert words in r.text and "Traceback" not in r.text, url
    assert client.get("/api/nothing-here").json()["error"]["status"] == 404


def test_a_huge_bad_value_is_named_but_not_echoed_whole(client):
    r = client.get("/api/matches?limit=" + "9" * 5000)
    message = r.json()["error"]["message"]
    assert r.status_code == 422 and message.startswith("limit: ")
    assert "(5002 characters)" in message and len(message) < 400


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.text(min_size=1, max_size=80), value=st.text(max_size=30))
def test_any_input_gets_an_answer_not_a_crash(client, name, value):
    from urllib.parse import quote

    n = quote(name, safe="")
    v = quote(value, safe="")
    for url in (
        f"/api/ladders/{n}",
        f"/api/bots/{n}",
        f"/ladders/{n}",
        f"/bots/{n}",
        f"/api/matches?ladder={n}&status={v}",
        f"/api/matches?bot={n}&before={v}",
        f"/matches?ladder={v}&limit={v}",
        f"/api/ladders/{n}/matches/{v}",
    ):
        r = client.get(url)
        assert r.status_code in (200, 400, 404, 422), (url, r.status_code, r.text[:300])
        assert "Traceback" not in r.text


def test_rankings_are_the_stores(client, web_db):
    with Store(web_db, readonly=True) as store:
        table = store.rankings("boom4")
    got = client.get("/api/ladders/boom4").json()
    assert got["ladder"]["completed"] == table.completed
    assert [
        (s["bot"], s["rank"], s["matches"], s["wins"], s["faults"]) for s in got["standings"]
    ] == [(s.bot, s.rank, s.matches, s.wins, s.faults) for s in table.standings]
    for mine, theirs in zip(got["standings"], table.standings):
        assert mine["conservative"] == pytest.approx(theirs.conservative)
        assert mine["mu"] == pytest.approx(theirs.mu)
        assert mine["settled"] == theirs.settled
        if theirs.p_better_than_next is None:
            assert mine["p_better_than_next"] is None
        else:
            assert mine["p_better_than_next"] == pytest.approx(theirs.p_better_than_next)
    assert got["standings"][-1]["p_better_than_next"] is None


def test_frames_replay_the_match_the_engine_plays(client, web_db, sample):
    m = sample["completed"]
    with Store(web_db, readonly=True) as store:
        doc = store.replay("boom4", m.index)
    got = client.get(f"/api/ladders/boom4/matches/{m.index}?frames=true").json()
    frames = got["frames"]
    assert len(frames) == len(doc["moves"]) + 1 == got["moves"] + 1
    assert [f["n"] for f in frames] == list(range(len(frames)))
    assert frames[-1]["scores"] == doc["scores"] == [s["score"] for s in got["match"]["seats"]]
    # Every seat's hand in every frame is what the engine says that seat held.
    game = game_from_config(doc["config"])
    state = game.new_match(doc["seed"])
    from arena.games import boom

    for seat in range(game.num_players):
        obs = state.observation(seat)
        assert frames[0]["hands"][seat] == [*obs.hand, *([boom.RUSE] if obs.has_ruse else [])]
    for step in replay.rerun(doc):
        f = frames[step.index + 1]
        assert f["move"]["seat"] == step.seat
        assert f["move"]["text"] == game.action_to_string(tuple(step.action))
        for seat in range(game.num_players):
            assert f["hands"][seat][: len(step.state.observation(seat).hand)] == list(
                step.state.observation(seat).hand
            )
    assert set(got["legend"]) >= {str(c) for f in frames for h in f["hands"] for c in h}


def test_match_list_pages_through_every_match_once_in_order(client, web_db):
    with Store(web_db, readonly=True) as store:
        everything = {lad.name: store.matches(lad.name) for lad in store.list_ladders()}
    ladder_matches = everything["balloon3"]

    def walk(query: str) -> list[tuple[str, int]]:
        seen, before = [], None
        while True:
            older = f"&before={before}" if before else ""
            r = client.get(f"/api/matches?{query}&limit=7{older}")
            assert r.status_code == 200
            body = r.json()
            seen += [(m["ladder"], m["index"]) for m in body["matches"]]
            assert len(body["matches"]) <= 7
            before = body["next"]
            if before is None:
                return seen

    assert walk("ladder=balloon3") == [("balloon3", m.index) for m in reversed(ladder_matches)]
    completed = walk("ladder=balloon3&status=completed")
    assert completed == [
        ("balloon3", m.index) for m in reversed(ladder_matches) if m.status == "completed"
    ]
    # A bot's matches over every ladder: exactly those it is seated in, each once.
    expected = {
        (name, m.index) for name, ms in everything.items() for m in ms if "alice" in m.seats
    }
    got = walk("bot=alice")
    assert len(got) == len(set(got)) and set(got) == expected
    running = walk("status=running")
    assert sorted(running) == sorted(
        (name, m.index) for name, ms in everything.items() for m in ms if m.status == "running"
    )


def test_bot_api_shows_suspension_recent_results_and_faults(client, web_db):
    with Store(web_db, readonly=True) as store:
        frank = store.get_bot("frank")
        faults = store.db.execute(
            "SELECT count(*) FROM faults f JOIN bots b ON b.id = f.bot_id WHERE b.name = 'frank'"
        ).fetchone()[0]
    got = client.get("/api/bots/frank?recent=50").json()
    assert got["bot"]["suspended"] and got["bot"]["suspended_reason"] == frank.suspended_reason
    assert {r["ladder"] for r in got["ladders"]} == {"balloon3", "boom4"} & {
        r["ladder"] for r in got["ladders"]
    }
    assert all(any(s["bot"] == "frank" for s in m["seats"]) for m in got["recent_matches"])
    assert all(m["status"] == "completed" for m in got["recent_matches"])
    assert len(got["recent_faults"]) == min(faults, 50)
    page = client.get("/bots/frank")
    assert frank.suspended_reason in page.text


def test_live_endpoint_gives_public_frames_from_since(web_db, live):
    from fastapi.testclient import TestClient

    with TestClient(create_app(web_db, live=live)) as c:
        shown = live.advance(6)
        url = f"/api/ladders/{live.ladder}/matches/{live.index}/live"
        body = c.get(url).json()
        assert body["source"] == "live" and body["status"] == "running" and not body["done"]
        assert [f["n"] for f in body["frames"]] == list(range(shown + 1))
        assert all(
            "hands" not in f and (f["move"] is None or "text" not in f["move"])
            for f in body["frames"]
        )
        later = c.get(f"{url}?since={shown}").json()
        assert [f["n"] for f in later["frames"]] == [shown]
        page = c.get(f"/ladders/{live.ladder}/matches/{live.index}").text
        # The page follows the match through its event stream (live.py), from the same feed.
        assert f"/api/ladders/{live.ladder}/matches/{live.index}/events" in page


def test_a_replay_that_does_not_rerun_is_reported_not_a_crash(tmp_path, web_db, sample):
    db = tmp_path / "broken.db"
    shutil.copy(web_db, db)
    m = sample["completed"]
    conn = sqlite3.connect(db)
    doc = json.loads(
        conn.execute(
            "SELECT replay FROM matches WHERE idx = ? AND ladder_id = "
            "(SELECT id FROM ladders WHERE name = 'boom4')",
            (m.index,),
        ).fetchone()[0]
    )
    doc["moves"][3][1] = [999]  # a card nobody holds
    conn.execute(
        "UPDATE matches SET replay = ? WHERE idx = ? AND ladder_id = "
        "(SELECT id FROM ladders WHERE name = 'boom4')",
        (json.dumps(doc), m.index),
    )
    conn.commit()
    conn.close()
    from fastapi.testclient import TestClient

    with TestClient(create_app(db)) as c:
        page = c.get(f"/ladders/boom4/matches/{m.index}")
        assert page.status_code == 200 and "move 3 does not replay" in page.text
        api = c.get(f"/api/ladders/boom4/matches/{m.index}?frames=true").json()
        assert "move 3 does not replay" in api["replay_error"] and api["frames"] is None


def test_a_database_of_a_newer_schema_is_refused_with_a_clear_message(tmp_path):
    from click.testing import CliRunner

    from arena.cli import main

    db = tmp_path / "new.db"
    Store(db).close()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(SchemaTooNew):
        create_app(db)
    result = CliRunner().invoke(main, ["web", "--db", str(db), "--port", "0"])
    assert result.exit_code != 0 and "schema version 99" in result.output
    result = CliRunner().invoke(main, ["report", "--db", str(db), "--out", str(tmp_path / "r")])
    assert result.exit_code != 0 and "schema version 99" in result.output
