"""A ladder's opening round as `arena rankings` (text and --json) and `arena ladder list` show it:
real SQLite files written by the store, matches recorded by the store's own recording (played
in-process by random legal moves, arena.web.sample.play_ladder), the commands run as processes.
Before the sets, how many of the opening round's single matches are played; after it, "done" and
the sets' progress; a ladder without one says nothing of it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from arena.schedule import make_schedule
from arena.store import Store
from arena.web.sample import play_ladder
from tests.support.ladders import arena

BOTS = ["b1", "b2", "b3", "b4", "b5", "b6", "b7"]


def make_ladders(db: Path) -> int:
    """Ladder "op" (Balloon for 3 among BOTS, an opening round) and "plain" (the same, none);
    returns the opening round's matches, as arena.schedule draws them."""
    with Store(db) as store:
        for bot in BOTS:
            store.add_bot(bot, remote=True)
        store.create_ladder("op", "balloon", 3, BOTS, seed=5, opening_round=True)
        store.create_ladder("plain", "balloon", 3, BOTS, seed=5)
    with_opening = make_schedule(BOTS, 3, 1, 5, opening_round=True)
    return len(with_opening) - len(make_schedule(BOTS, 3, 1, 5))


def play(db: Path, ladder: str, first: int, end: int) -> None:
    """Record the ladder's matches of schedule index first..end-1, played."""
    with Store(db) as store:
        todo = [m for m in store.matches(ladder, ("pending",)) if first <= m.index < end]
        play_ladder(store, ladder, todo, seed=first)


def completed_singles(db: Path, ladder: str) -> int:
    """The ladder's completed matches that are a set of their own (the opening round's), counted
    from the matches table."""
    con = sqlite3.connect(db)
    try:
        return con.execute(
            "SELECT count(*) FROM matches m JOIN ladders l ON l.id = m.ladder_id WHERE "
            "l.name = ? AND m.status = 'completed' AND (SELECT count(*) FROM matches o WHERE "
            "o.ladder_id = m.ladder_id AND o.set_index = m.set_index) = 1",
            (ladder,),
        ).fetchone()[0]
    finally:
        con.close()


def listed(db: Path) -> dict[str, str]:
    lines = arena("ladder", "list", "--db", str(db)).stdout.splitlines()
    return {line.split()[0]: line for line in lines}


def test_the_opening_rounds_progress_then_the_sets_in_rankings_and_the_ladder_list(tmp_path):
    db = tmp_path / "a.db"
    opening = make_ladders(db)
    assert opening == 35  # every 3 of 7 bots once
    sets, set_matches = opening, 3 * opening

    play(db, "op", 0, 12)
    play(db, "plain", 0, 12)
    assert completed_singles(db, "op") == 12
    shown = arena("rankings", "op", "--db", str(db)).stdout
    assert (
        f"opening round: 12 of {opening} single matches played; then {sets} duplicate sets "
        f"({set_matches} matches): 0 played"
    ) in shown
    assert "opening round" not in arena("rankings", "plain", "--db", str(db)).stdout
    doc = json.loads(arena("rankings", "op", "--json", "--db", str(db)).stdout)
    assert doc["opening_round"] == {
        "matches": opening,
        "completed": 12,
        "done": False,
        "set_matches": set_matches,
        "set_completed": 0,
    }
    assert (
        json.loads(arena("rankings", "plain", "--json", "--db", str(db)).stdout)["opening_round"]
        is None
    )
    rows = listed(db)
    assert f"opening round 12/{opening}" in rows["op"]
    assert "opening" not in rows["plain"]

    # The rest of the opening round and two sets: the opening round is done, rated through.
    play(db, "op", 12, opening + 6)
    assert completed_singles(db, "op") == opening
    shown = arena("rankings", "op", "--db", str(db)).stdout
    assert (
        f"opening round: {opening} of {opening} single matches played (done); then {sets} "
        f"duplicate sets ({set_matches} matches): 6 played"
    ) in shown
    assert f"{opening + 6}/{opening + set_matches} matches played" in shown
    doc = json.loads(arena("rankings", "op", "--json", "--db", str(db)).stdout)
    assert doc["opening_round"]["done"] is True
    assert doc["opening_round"]["set_completed"] == 6
    assert "opening round done" in listed(db)["op"]


def test_an_opening_round_is_done_only_once_every_match_of_it_is_rated(tmp_path):
    """Its last match played before an earlier one: rating waits in schedule order, and so does
    "done"."""
    db = tmp_path / "a.db"
    opening = make_ladders(db)
    play(db, "op", opening - 1, opening)  # the last single match first
    play(db, "op", 1, opening - 1)
    shown = arena("rankings", "op", "--db", str(db)).stdout
    assert f"opening round: {opening - 1} of {opening} single matches played;" in shown
    assert "(done)" not in shown
    play(db, "op", 0, 1)
    assert "(done)" in arena("rankings", "op", "--db", str(db)).stdout
