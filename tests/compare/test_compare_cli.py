"""`arena compare` end to end: the real CLI, real SQLite files, a real referee and real bot
processes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from arena.store import Store
from tests.cli import ROOT, start_arena
from tests.procs import processes_in
from tests.store.helpers import use_seed_key
from tests.support.ladders import arena, count, kill_when

HEURISTIC = "python example_bots/balloon_heuristic.py"
RANDOM = "python example_bots/random_bot.py"
TWIN = f"python {ROOT / 'tests' / 'bots' / 'twin_random_bot.py'}"


def setup_db(db: Path) -> None:
    """The bots, registered in this process as `arena bot add` run from the repository's root
    does (set-up, not the command under test; five interpreters' start-ups a test before)."""
    with Store(db) as store:
        for name, command in (
            ("heur", HEURISTIC),
            ("rnd", RANDOM),
            ("twin", TWIN),
            ("o1", RANDOM),
            ("o2", RANDOM),
        ):
            store.add_bot(name, command, cwd=ROOT)
    use_seed_key(db)  # the same in every database: their runs can be compared


def compare_args(db: Path, tmp: Path, new: str, base: str, *extra: str) -> list[str]:
    return [
        "compare",
        new,
        base,
        "--game",
        "balloon",
        "-k",
        "3",
        "--opponents",
        "o1,o2",
        "--seed",
        "7",
        "--db",
        str(db),
        "--run-dir",
        str(tmp / "runs"),
        "-j",
        "4",
        "--move-ms",
        "5000",
        "--json",
        *extra,
    ]


def outcome(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout)


def test_a_clear_difference_stops_early_and_right(tmp_path):
    db = tmp_path / "a.db"
    setup_db(db)
    out = outcome(arena(*compare_args(db, tmp_path, "heur", "rnd", "--min-gain", "6")))
    assert out["verdict"] == "better"
    # Early: far below the cap of 2,000 matches, at a whole number of deals (6 matches each).
    assert 8 <= out["deals"] <= 40 and out["matches"] < 300
    assert out["interval"][0] > 0 and out["llr"] >= out["bounds"][1]
    assert out["mean_rank_gain"] > 0  # the heuristic also places better
    # The likelihood of superiority and the effect size with its interval (issue 33, item 5).
    assert out["mode"] == "gain" and out["hypotheses"] == [0.0, 6.0]
    assert out["los"] > 0.99
    assert 0 < out["effect_size"]["interval"][0] < out["effect_size"]["d"]
    # Every match is stored with its replay; the deals are whole.
    con = sqlite3.connect(db)
    stored = con.execute(
        "SELECT count(*), sum(replay IS NOT NULL) FROM matches WHERE status = 'completed'"
    ).fetchone()
    con.close()
    assert stored[0] == stored[1] and stored[0] % 6 == 0
    assert processes_in(tmp_path / "runs") == []
    # The reverse question gets the reverse answer.
    back = outcome(arena(*compare_args(db, tmp_path, "rnd", "heur", "--min-gain", "6")))
    assert back["verdict"] == "not better"


def test_two_versions_of_one_bot(tmp_path):
    """The question bot authors ask: is version 2 better than version 1?"""
    db = tmp_path / "a.db"
    setup_db(db)
    arena("bot", "add", "mine", "--command", RANDOM, "--db", str(db))
    arena(
        "bot",
        "update",
        "mine",
        "--command",
        HEURISTIC,
        "--note",
        "plays the heuristic",
        "--db",
        str(db),
    )
    out = outcome(arena(*compare_args(db, tmp_path, "mine@2", "mine@1", "--min-gain", "6")))
    assert (out["new"], out["base"], out["verdict"]) == ("mine@2", "mine", "better")
    assert out["comparison"] == "compare-mine.v2-vs-mine.v1-balloon3"
    # NAME is the latest version: the same two bots
    again = outcome(arena(*compare_args(db, tmp_path, "mine", "mine@1", "--min-gain", "6")))
    assert (again["new"], again["verdict"]) == ("mine@2", "better")


def test_no_difference_stays_undecided_up_to_its_cap(tmp_path):
    db = tmp_path / "a.db"
    setup_db(db)
    # Two equally random bots with their own randomness: no true difference. A cap of 36
    # matches (6 deals, below the 8 deals the test needs before any verdict): undecided, with
    # every match of the cap played and no more.
    out = outcome(
        arena(*compare_args(db, tmp_path, "twin", "rnd", "--min-gain", "3", "--max-matches", "36"))
    )
    assert out["verdict"] == "undecided"
    assert out["deals"] == 6 and out["matches"] == 36
    assert count(db, "completed") == 36
    assert out["mean_gain"] != 0.0  # not the same games replayed: real noise, no real gain


def test_killed_then_resumed_gives_the_same_verdict(tmp_path):
    clean_db = tmp_path / "clean.db"
    setup_db(clean_db)
    clean = outcome(
        arena(*compare_args(clean_db, tmp_path / "clean", "heur", "rnd", "--min-gain", "6"))
    )
    db = tmp_path / "killed.db"
    setup_db(db)
    args = compare_args(db, tmp_path, "heur", "rnd", "--min-gain", "6")
    proc = start_arena(*args, tmp=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_when(proc, lambda: count(db, "completed") >= 20)
    resumed = outcome(arena(*args))
    for key in ("verdict", "deals", "mean_gain", "interval", "llr", "mean_rank_gain", "seed"):
        assert resumed[key] == clean[key], key
    assert processes_in(tmp_path / "runs") == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["heur", "heur"], "the same bot"),
        (["heur", "heur@1"], "the same bot"),
        (["heur@3", "rnd"], "no version 3"),
        (["heur", "nobody"], "no bot called 'nobody'"),
        (["heur", "rnd", "--opponents", "o1"], "need at least 2 distinct opponents"),
        (["heur", "rnd", "--opponents", "o1,rnd"], "cannot also be opponents"),
        (["heur", "rnd", "--min-gain", "0"], "--min-gain"),
        (["heur", "rnd", "--alpha", "0.7"], "--alpha"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(tmp_path, args, message):
    db = tmp_path / "a.db"
    setup_db(db)
    base = [
        "compare",
        *args,
        "--game",
        "balloon",
        "-k",
        "3",
        "--db",
        str(db),
        "--run-dir",
        str(tmp_path / "runs"),
    ]
    if "--opponents" not in args:
        base += ["--opponents", "o1,o2"]
    proc = arena(*base, check=False)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert count(db, "completed") == 0


def test_a_different_definition_under_the_same_name_is_refused(tmp_path):
    db = tmp_path / "a.db"
    setup_db(db)
    arena(*compare_args(db, tmp_path, "twin", "rnd", "--max-matches", "12", "--name", "c1"))
    proc = arena(
        *compare_args(db, tmp_path, "twin", "rnd", "--max-matches", "18", "--name", "c1"),
        check=False,
    )
    assert proc.returncode != 0 and "exists with another definition" in proc.stderr


def test_the_web_page_shows_the_test_and_withholds_unfinished_deals(tmp_path):
    """The comparison's page (real server app over the real database): the two bots, the
    estimate, the LLR against its bounds, the matches; a deal whose matches are not all finished
    does not count, and its matches' pages show no seed."""
    from fastapi.testclient import TestClient

    from arena.web.factory import create_app

    db = tmp_path / "a.db"
    setup_db(db)
    out = outcome(
        arena(*compare_args(db, tmp_path, "heur", "rnd", "--min-gain", "6", "--name", "c1"))
    )
    client = TestClient(create_app(db))
    page = client.get("/comparisons/c1")
    assert page.status_code == 200
    html = page.text
    assert "heur" in html and "rnd" in html and "Better" in html
    assert f"{out['mean_gain']:+.2f}" in html and 'id="llr-line"' in html
    assert f'<td class="n" id="los">{100 * out["los"]:.1f}%</td>' in html
    # The LLR chart says its values: the bounds, 0 and the deals.
    assert f'text-anchor="end">{out["bounds"][1]:.2f}</text>' in html
    assert '<text class="x-tick"' in html and '<text class="y-tick"' in html
    assert ">deals</text>" in html
    # The paired table: one row a finished deal, both sides' totals, the LLR after each.
    assert html.count('<tr data-deal="') == out["deals"]
    assert f"{out['llr']:.2f}</td>\n</tr>\n</tbody>" in html  # the last deal's LLR is the test's
    assert f"{out['effect_size']['d']:+.2f} ({out['effect_size']['interval'][0]:+.2f} to" in html
    assert client.get("/comparisons/nope").status_code == 404
    # The index and the ladder page lead to it; the CLI's ladder list says what it is.
    assert 'href="/comparisons/c1"' in client.get("/").text
    assert 'id="comparison-link"' in client.get("/ladders/c1").text
    # Never ranked as a ladder (issue 33): apart on the home page, no leaderboard, no rank or
    # rating chart on the bots' pages, only links to the verdict.
    home = client.get("/").text
    assert 'id="comparisons"' in home and "Leader" not in home.split('id="comparisons"')[1]
    assert 'id="ladders"' not in home  # no ladder here but the comparison
    ladder = client.get("/ladders/c1").text
    assert 'id="not-ranked"' in ladder and 'id="leaderboard"' not in ladder
    bot = client.get("/bots/heur").text
    assert 'id="bot-comparisons"' in bot and 'href="/comparisons/c1"' in bot
    assert 'id="bot-ladders"' not in bot and 'data-ladder="c1"' not in bot
    assert "(a comparison: arena compare)" in arena("ladder", "list", "--db", str(db)).stdout
    # Reopen the deal of the verdict as if it were still being played: it no longer counts (nor
    # does any deal after it), and its matches show no seed.
    con = sqlite3.connect(db)
    last = out["deals"] - 1  # deals are numbered from 0, one set each
    idx = con.execute("SELECT min(idx) FROM matches WHERE set_index = ?", (last,)).fetchone()[0]
    con.execute(
        "UPDATE matches SET status = 'pending' WHERE set_index = ? AND idx = ?", (last, idx + 1)
    )
    con.commit()
    con.close()
    html = client.get("/comparisons/c1").text
    assert f'<td class="n">{out["deals"] - 1}</td>' in html
    assert html.count('<tr data-deal="') == out["deals"] - 1  # the reopened deal is not shown
    detail = client.get(f"/api/ladders/c1/matches/{idx}").json()
    assert detail.get("seed") is None
