"""The store: opening, schema versions, errors, the match lifecycle, one transaction per result,
ratings in schedule order."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import random
import sqlite3

import pytest
import trueskill

from arena.margins import MarginModel, fault_adjusted
from arena.ratings import CALIBRATED_WIDEN, Rater, SkillRating, p_better
from arena.results import ABANDONED, TIMEOUT, Fault
from arena.schedule import make_schedule
from arena.store import (
    RUNNABLE,
    SCHEMA_VERSION,
    AsyncStore,
    LadderError,
    LadderMismatch,
    MatchStateError,
    RecordOutcome,
    SchemaTooNew,
    Store,
    StoreError,
    StoreLocked,
    UnknownBot,
)
from arena.store.browse import BrowseQueries
from tests.store.helpers import (
    add_remote_bots,
    ladder_with_results,
    make_result,
    new_store,
    random_results,
)


def test_open_creates_a_wal_database_with_the_current_schema(tmp_path):
    with new_store(tmp_path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.db.journal_mode == "wal"
        assert {
            "bots",
            "ladders",
            "matches",
            "results",
            "faults",
            "ratings",
            "rating_history",
        } <= set(store.db.table_names())
    with new_store(tmp_path) as again:  # reopening migrates nothing and keeps the data
        assert again.schema_version() == SCHEMA_VERSION


def test_default_path_is_arena_db_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Store().close()
    assert (tmp_path / "arena.db").is_file()


def test_a_newer_schema_is_refused(tmp_path):
    new_store(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "arena.db")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew) as err:
        new_store(tmp_path)
    assert err.value.found == SCHEMA_VERSION + 5 and err.value.supported == SCHEMA_VERSION
    assert f"schema version {SCHEMA_VERSION + 5}" in str(err.value)
    assert f"up to {SCHEMA_VERSION}" in str(err.value)


def test_an_unknown_migration_is_reported_with_the_real_schema_version(tmp_path):
    new_store(tmp_path).close()
    con = sqlite3.connect(tmp_path / "arena.db")
    con.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
        "VALUES ('arena', '0099_from_the_future', '2027-01-01')"
    )
    con.commit()
    version = con.execute("PRAGMA user_version").fetchone()[0]
    con.close()
    with pytest.raises(SchemaTooNew) as err:
        new_store(tmp_path)
    assert err.value.found == SCHEMA_VERSION == version
    assert (
        f"has schema version {SCHEMA_VERSION} with migrations this Arena does not know "
        "(0099_from_the_future)" in str(err.value)
    )


def test_a_missing_directory_is_a_clear_error_and_creates_nothing(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        Store(tmp_path / "nowhere" / "arena.db")
    assert not (tmp_path / "nowhere").exists()


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    (tmp_path / "arena.db").write_text("hello, I am not SQLite" * 100)
    with pytest.raises(StoreError, match="not an Arena database"):
        new_store(tmp_path)


def test_a_locked_database_is_a_clear_error_and_changes_nothing(tmp_path):
    path = tmp_path / "arena.db"
    new_store(tmp_path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        store = Store(path, timeout=0.05)
        with pytest.raises(StoreLocked, match="locked by another process"):
            store.add_bot("late", remote=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.list_bots() == []
    store.close()


def test_a_read_only_store_reads_and_refuses_writes(tmp_path):
    with new_store(tmp_path) as store:
        bots = add_remote_bots(store, 3)
        store.create_ladder("l", "balloon", 3, bots, seed=1)
        reader = Store(tmp_path / "arena.db", readonly=True)
        assert [s.bot for s in reader.rankings("l").standings] == sorted(bots)
        with pytest.raises(StoreError, match="read-only"):
            reader.add_bot("x", remote=True)
        reader.close()
    with pytest.raises(StoreError, match="no database"):
        Store(tmp_path / "other.db", readonly=True)


# ----------------------------------------------------------------------------------- ladders


def test_create_ladder_writes_the_whole_schedule(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 5)
    ladder = store.create_ladder("l", "boom", 3, bots, seed=9, rounds=2)
    assert ladder.config == {
        "game": "boom",
        "num_players": 3,
        "options": {"advanced": False, "ruse": False, "series": False},
    }
    assert ladder.num_matches == 2 * 10 * 3 and ladder.bots == tuple(bots)
    matches = store.matches("l")
    assert [m.index for m in matches] == list(range(60))
    assert all(m.status == "pending" and m.attempts == 0 for m in matches)
    assert store.progress("l")["pending"] == 60
    assert store.rankings("l").standings[0].matches == 0


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(game="chess", table_size=3), "unknown game"),
        (dict(game="balloon", table_size=9), "9"),
        (dict(game="boom", table_size=3, options={"colour": 1}), "no option colour"),
        (dict(game="balloon", table_size=5, bots=4), "at least 5 bots"),
        (dict(game="balloon", table_size=3, rating_mode="elo"), "rating mode"),
        (
            dict(game="balloon", table_size=3, name="my ladder!"),
            "^ladder name 'my ladder!' is not allowed",
        ),
    ],
)
def test_bad_ladders_are_refused_and_change_nothing(tmp_path, kwargs, message):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, kwargs.pop("bots", 6))
    with pytest.raises(LadderError, match=message):
        store.create_ladder(kwargs.pop("name", "l"), bots=bots, **kwargs)
    assert store.list_ladders() == []
    assert store.db["matches"].count == 0


def test_a_ladder_of_unknown_bots_is_refused(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 3)
    with pytest.raises(UnknownBot, match="ghost"):
        store.create_ladder("l", "balloon", 2, [*bots, "ghost"])
    assert store.list_ladders() == [] and store.db["ratings"].count == 0


def test_ensure_ladder_resumes_checks_and_extends(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 4)
    first = store.ensure_ladder("l", "balloon", 3, bots, seed=4, rounds=1)
    assert store.ensure_ladder("l", "balloon", 3, bots, seed=4).id == first.id
    with pytest.raises(LadderMismatch, match="table size is 3, not 2"):
        store.ensure_ladder("l", "balloon", 2, bots)
    before = store.matches("l")
    longer = store.ensure_ladder("l", "balloon", 3, bots, seed=4, rounds=3)
    assert longer.rounds == 3 and longer.num_matches == 3 * first.num_matches
    assert store.matches("l")[: len(before)] == before


# ------------------------------------------------------------------------- match lifecycle


def play(store: Store, ladder: str, order: list[int], results: dict) -> None:
    for index in order:
        store.start_match(ladder, index, node="n1")
        store.record_result(ladder, index, results[index])


def direct_trueskill(ladder, matches, results):
    """Ratings computed straight with the trueskill package from the same results."""
    env = trueskill.TrueSkill(
        mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.05
    )
    ratings = {b: env.create_rating() for b in ladder.bots}
    for m in matches:
        r = results[m.index]
        rated = env.rate([{b: ratings[b]} for b in m.seats], ranks=list(r.ranks))
        for group in rated:
            ratings.update(group)
    return env, ratings


def test_ratings_equal_a_direct_trueskill_computation(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 6)
    ladder = store.create_ladder("l", "balloon", 4, bots, seed=3, rating_mode="match")
    matches = store.matches("l")
    results = random_results(
        matches, ladder.config, seed=1, skill={b: i for i, b in enumerate(bots)}
    )
    play(store, "l", [m.index for m in matches], results)
    env, expected = direct_trueskill(ladder, matches, results)
    table = store.rankings("l")
    assert table.completed == table.rated == table.scheduled == len(matches)
    by_bot = {s.bot: s for s in table.standings}
    for bot in bots:
        assert by_bot[bot].mu == pytest.approx(expected[bot].mu, abs=1e-12)
        assert by_bot[bot].sigma == pytest.approx(expected[bot].sigma, abs=1e-12)
        assert by_bot[bot].conservative == pytest.approx(env.expose(expected[bot]), abs=1e-12)
    # Standings agree with the results they came from.
    for bot in bots:
        mine = [
            (r.scores[s], r.ranks[s], sum(f.seat == s for f in r.faults))
            for r in results.values()
            for s, b in enumerate(r.seat_names)
            if b == bot
        ]
        s = by_bot[bot]
        assert s.matches == len(mine)
        assert s.wins == sum(rank == 0 for _, rank, _ in mine)
        assert s.faults == sum(f for _, _, f in mine)
        assert s.mean_score == pytest.approx(sum(sc for sc, _, _ in mine) / len(mine))
    ordered = sorted(bots, key=lambda b: env.expose(expected[b]), reverse=True)
    assert [s.bot for s in table.standings] == ordered
    assert [s.rank for s in table.standings] == list(range(1, 7))
    assert table.standings[0].bot == bots[-1]  # the most skilled bot leads


def test_out_of_order_completion_gives_the_in_order_ratings(tmp_path):
    runs = {}
    for name, shuffle in (("in_order", False), ("shuffled", True)):
        store, bots, _, matches, results = ladder_with_results(
            tmp_path, 5, 3, results_seed=2, db=f"{name}.db", seed=11
        )
        order = [m.index for m in matches]
        if shuffle:
            random.Random(5).shuffle(order)
        play(store, "l", order, results)
        runs[name] = (store.rankings("l"), {b: store.rating_history("l", b) for b in bots})
    assert runs["in_order"] == runs["shuffled"]


def test_a_match_waits_unrated_until_its_predecessors_are_done(tmp_path):
    store, _, _, _, results = ladder_with_results(
        tmp_path, 4, 2, results_seed=3, seed=1, rating_mode="match"
    )
    assert store.record_result("l", 2, results[2]).rated == ()
    assert store.record_result("l", 1, results[1]).rated == ()
    assert not store.get_match("l", 2).rated
    assert all(s.matches == 0 for s in store.rankings("l").standings)
    assert store.record_result("l", 0, results[0]).rated == (0, 1, 2)
    assert store.get_ladder("l").rated_through == 3
    assert sum(s.matches for s in store.rankings("l").standings) == 3 * 2


def test_a_failure_inside_record_leaves_nothing_partial(tmp_path, monkeypatch):
    store, _, ladder, matches, results = ladder_with_results(tmp_path, 4, 2, results_seed=4, seed=1)
    results[0] = make_result(
        matches[0], ladder.config, (3, 5), (Fault(1, TIMEOUT, 2, 1500.0, "slow"),)
    )
    store.record_result("l", 1, results[1])  # waits for match 0
    store.start_match("l", 0)
    tables = ("results", "faults", "rating_history", "ratings", "ladders", "matches")
    snapshot = {t: list(store.db[t].rows) for t in tables}

    def broken(self, *args):
        raise RuntimeError("rating blew up")

    monkeypatch.setattr(Rater, "rate", broken)  # TrueSkill's modes
    monkeypatch.setattr(MarginModel, "observe", broken)  # the margins mode (the default)
    with pytest.raises(RuntimeError, match="rating blew up"):
        store.record_result("l", 0, results[0])
    assert {t: list(store.db[t].rows) for t in tables} == snapshot
    assert store.get_match("l", 0).status == "running"
    monkeypatch.undo()
    outcome = store.record_result("l", 0, results[0])
    assert outcome.recorded and outcome.rated == (0, 1)
    stored = store.db.execute("SELECT kind, move, detail FROM faults").fetchall()
    assert stored == [("timeout", 2, "slow")]


@pytest.fixture
def first_match(tmp_path):
    """A store with ladder "l" (balloon, three remote bots, seed 1): the store, the ladder and
    its first match."""
    store = new_store(tmp_path)
    ladder = store.create_ladder("l", "balloon", 3, add_remote_bots(store, 3), seed=1)
    yield store, ladder, store.matches("l")[0]
    store.close()


def test_a_result_is_never_counted_twice(first_match):
    store, ladder, m = first_match
    result = make_result(m, ladder.config, (1, 2, 3))
    assert store.record_result("l", 0, result).recorded
    first = store.rankings("l")
    assert store.record_result("l", 0, result) == RecordOutcome(recorded=False)
    assert store.rankings("l") == first
    assert store.db["results"].count == 3


def test_a_result_for_other_seats_is_refused(first_match):
    store, ladder, m = first_match
    wrong = make_result(m, ladder.config, (1, 2, 3))
    wrong = type(wrong)(**{**wrong.__dict__, "seat_names": tuple(reversed(m.seats))})
    with pytest.raises(MatchStateError, match="scheduled seats"):
        store.record_result("l", 0, wrong)
    assert store.db["results"].count == 0


def test_the_replay_is_stored_compact_with_the_result(first_match):
    store, ladder, m = first_match
    store.record_result("l", 0, make_result(m, ladder.config, (4, 4, 1)))
    raw = store.db.execute("SELECT replay FROM matches WHERE idx = 0").fetchone()[0]
    assert ", " not in raw and ": " not in raw
    replay = store.replay("l", 0)
    assert replay["seed"] == m.seed and replay["scores"] == [4, 4, 1]
    assert replay["seat_names"] == list(m.seats) and len(replay["moves"]) == 6
    assert replay["ranks"] == [0, 0, 2]


def test_infrastructure_failures_are_kept_retried_and_never_rated(tmp_path):
    store, _, _, _, results = ladder_with_results(tmp_path, 3, 2, results_seed=6, seed=1)
    store.start_match("l", 0, node="w1")
    store.record_infra_failure("l", 0, "referee crashed", node="w1")
    assert store.get_match("l", 0).status == "infra_failed"
    assert [m.index for m in store.matches("l", RUNNABLE)] == [0, 1, 2, 3, 4, 5]
    store.start_match("l", 0, node="w2")
    abandoned = type(results[0])(
        **{**results[0].__dict__, "status": ABANDONED, "reason": "shutdown"}
    )
    store.record_result("l", 0, abandoned)
    assert store.get_match("l", 0).attempts == 2
    # Giving up on match 0 lets the rating order move past it.
    store.record_result("l", 1, results[1])
    assert store.record_infra_failure("l", 0, "worker lost", give_up=True).rated == (1,)
    m0 = store.get_match("l", 0)
    assert m0.status == "abandoned" and m0.rating_note == "abandoned: worker lost"
    details = [r[0] for r in store.db.execute("SELECT detail FROM infra_failures ORDER BY id")]
    assert details == ["referee crashed", "abandoned: shutdown", "worker lost"]
    # A detail that says "abandoned" already is not said twice (issue 33's wording defect).
    store.record_infra_failure("l", 2, "abandoned: bot flaky is suspended", give_up=True)
    assert store.get_match("l", 2).rating_note == "abandoned: bot flaky is suspended"
    with pytest.raises(MatchStateError, match="abandoned"):
        store.start_match("l", 0)


def test_reset_running_puts_killed_matches_back(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 3)
    store.create_ladder("l", "balloon", 2, bots, seed=1)
    store.start_match("l", 0)
    store.start_match("l", 3)
    assert store.reset_running("l") == 2
    assert store.get_match("l", 3).status == "pending"
    # The killed run's attempt did not fail: it is not counted (nor is a stopped one).
    assert store.get_match("l", 3).attempts == 0
    store.start_match("l", 3)
    store.release_match("l", 3)
    assert store.get_match("l", 3).attempts == 0
    assert store.start_match("l", 3).attempts == 1


def direct_set_trueskill(bots, matches, results):
    """Set-mode ratings computed straight with the trueskill package: each duplicate set (its
    consecutive matches sharing a set index) rated once by summed scores, faulted bots last; a
    set of one match (an opening round's) rated by that match's ranks."""
    env = trueskill.TrueSkill(
        mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.05
    )
    ratings = {b: env.create_rating() for b in bots}
    sets: list[list] = []
    for m in matches:
        if sets and sets[-1][0].set_index == m.set_index:
            sets[-1].append(m)
        else:
            sets.append([m])
    for group in sets:
        if len(group) == 1:
            m = group[0]
            rated = env.rate([{b: ratings[b]} for b in m.seats], ranks=list(results[m.index].ranks))
            for g in rated:
                ratings.update(g)
            continue
        totals = {b: 0 for b in group[0].seats}
        faulted = set()
        for m in group:
            r = results[m.index]
            for seat, b in enumerate(m.seats):
                totals[b] += r.scores[seat]
            faulted |= {m.seats[f.seat] for f in r.faults}
        order_bots = list(totals)
        keys = [(b in faulted, -totals[b]) for b in order_bots]
        ranks = [sum(o < mine for o in keys) for mine in keys]
        rated = env.rate([{b: ratings[b]} for b in order_bots], ranks=ranks)
        for g in rated:
            ratings.update(g)
    return ratings


def test_set_mode_rates_each_duplicate_set_as_one_result(tmp_path):
    store, bots, _, matches, results = ladder_with_results(
        tmp_path, 4, 3, results_seed=8, seed=2, rating_mode="set"
    )
    order = [m.index for m in matches]
    random.Random(1).shuffle(order)
    play(store, "l", order, results)
    ratings = direct_set_trueskill(bots, matches, results)
    for s in store.rankings("l").standings:
        assert s.mu == pytest.approx(ratings[s.bot].mu, abs=1e-12)
        assert s.sigma == pytest.approx(ratings[s.bot].sigma, abs=1e-12)
        assert s.matches == 3 * 3  # 3 sets of 3 matches for each of 4 bots at tables of 3


def test_an_opening_round_is_rated_match_by_match_then_the_sets_whole(tmp_path):
    store, bots, ladder, matches, results = ladder_with_results(
        tmp_path, 5, 3, results_seed=8, seed=2, rating_mode="set", opening_round=True
    )
    assert ladder.settings["opening_round"] is True
    opening = 10  # every table of 3 of 5 bots once
    assert [m.rotation for m in matches[:opening]] == [0] * opening
    assert [m.set_index for m in matches[:opening]] == list(range(opening))
    assert len(matches) == opening + 3 * opening
    # An opening match is rated as soon as it and its predecessors are in, not with a set.
    assert store.record_result("l", 1, results[1]).rated == ()
    assert store.record_result("l", 0, results[0]).rated == (0, 1)
    # A set waits for all of its matches.
    for i in range(2, opening + 2):
        store.record_result("l", i, results[i])
    assert store.get_ladder("l").rated_through == opening
    assert store.record_result("l", opening + 2, results[opening + 2]).rated == (
        opening,
        opening + 1,
        opening + 2,
    )
    order = [m.index for m in matches[opening + 3 :]]
    random.Random(1).shuffle(order)
    play(store, "l", order, results)
    ratings = direct_set_trueskill(bots, matches, results)
    for s in store.rankings("l").standings:
        assert s.mu == pytest.approx(ratings[s.bot].mu, abs=1e-12)
        assert s.sigma == pytest.approx(ratings[s.bot].sigma, abs=1e-12)
        assert s.matches == 6 + 3 * 6  # each bot sits at 6 of the 10 tables


def test_a_ladder_keeps_its_opening_round_when_resumed_and_extended(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 5)
    store.create_ladder("with", "balloon", 3, bots, seed=4, opening_round=True)
    store.create_ladder("without", "balloon", 3, bots, seed=4)
    assert store.get_ladder("without").settings.get("opening_round", False) is False
    # Resumed without saying (what `arena ladder run` does for an existing ladder), each keeps
    # its own; the extended schedule is the longer schedule of the same kind.
    for name, opening in (("with", True), ("without", False)):
        store.ensure_ladder(name, "balloon", 3, bots, rounds=3)
        # The schedule depends on the bots' places only, so it can be drawn with their names.
        planned = make_schedule(bots, 3, 3, 4, opening_round=opening)
        assert [(m.index, m.set_index, m.round, m.rotation, m.seed, m.seats) for m in planned] == [
            (m.index, m.set_index, m.round, m.rotation, m.seed, m.seats)
            for m in store.matches(name)
        ]
    with pytest.raises(LadderMismatch, match="opening round is False, not True"):
        store.ensure_ladder("without", "balloon", 3, bots, opening_round=True)
    with pytest.raises(LadderMismatch, match="opening round is True, not False"):
        store.ensure_ladder("with", "balloon", 3, bots, opening_round=False)
    # A new ladder made by ensure_ladder gets what it is asked for.
    assert store.ensure_ladder("new", "balloon", 3, bots, opening_round=True).settings[
        "opening_round"
    ]


def test_a_floating_point_error_is_recorded_and_leaves_ratings(tmp_path, monkeypatch):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 2)
    ladder = store.create_ladder("l", "balloon", 2, bots, seed=1, rating_mode="match")
    m = store.matches("l")[0]

    def underflow(self, *args, **kwargs):
        raise FloatingPointError("Cannot calculate correctly")

    monkeypatch.setattr(trueskill.TrueSkill, "rate", underflow)
    store.record_result("l", 0, make_result(m, ladder.config, (9, 1)))
    stored = store.get_match("l", 0)
    assert stored.rated and stored.rating_note.startswith("not rated")
    top = store.rankings("l").standings
    assert all(s.mu == 25.0 and s.matches == 1 for s in top)


def test_importing_the_store_imports_nothing_of_the_ladder():
    # The ladder is above the store (docs/architecture.md, "Layers"): the store imports the pure
    # maths below it (arena.schedule, arena.ratings), never arena.ladder.
    import subprocess
    import sys

    code = (
        "import sys, arena.store; "
        "print(sorted(m for m in sys.modules if m.startswith('arena.ladder')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_ratings_are_applied_inside_the_recording_transaction(tmp_path, monkeypatch):
    from arena.store import matches, rating

    seen: list[tuple[bool, int]] = []  # (in a transaction, matches rated)

    def watched(conn, info):
        rated = rating.apply_ratings(conn, info)
        seen.append((conn.in_transaction, len(rated)))
        return rated

    monkeypatch.setattr(matches, "apply_ratings", watched)
    with Store(tmp_path / "arena.db") as store:
        bots = add_remote_bots(store, 2)
        ladder = store.create_ladder("l", "balloon", 2, bots, seed=3, rating_mode="match")
        m = store.matches("l")[0]
        outcome = store.record_result("l", 0, make_result(m, ladder.config, (9, 1)))
        assert outcome.rated == (0,)
    assert seen == [(True, 1)]


def test_async_store_runs_on_one_writer_thread(tmp_path):
    async def main():
        async with await AsyncStore.open(tmp_path / "arena.db") as store:
            await store.run(Store.add_bot, "a", remote=True)
            await store.run(Store.add_bot, "b", remote=True)
            ladder = await store.run(Store.ensure_ladder, "l", "balloon", 2, ["a", "b"], seed=1)
            matches = await store.run(Store.matches, "l", RUNNABLE)
            results = random_results(matches, ladder.config, seed=1)
            for m in matches:
                await store.run(Store.start_match, "l", m.index)
            # Many concurrent records: serialised by the writer thread, all in schedule order.
            await asyncio.gather(
                *(
                    store.run(Store.record_result, "l", m.index, results[m.index])
                    for m in reversed(matches)
                )
            )
            return await store.run(Store.rankings, "l")

    table = asyncio.run(main())
    assert table.rated == table.completed == 2
    assert json.dumps(table.to_dict())


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes read-only files anyway"
)
def test_an_unwritable_database_is_a_clear_error(tmp_path):
    new_store(tmp_path).close()
    for path in tmp_path.iterdir():
        path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(StoreError, match="not writable|cannot open"):
            store = new_store(tmp_path)
            store.add_bot("x", remote=True)
    finally:
        tmp_path.chmod(0o755)


def test_an_open_ladder_appends_each_table_as_one_duplicate_set(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 4)
    store.ensure_open_ladder("open", "balloon", 3)
    for b in bots:
        store.join_ladder("open", b)
    first = store.add_set("open", bots[:3], seed=7)
    second = store.add_set("open", bots[1:], seed=8)
    assert [(m.index, m.set_index, m.rotation, m.seed) for m in first + second] == [
        (0, 0, 0, 7),
        (1, 0, 1, 7),
        (2, 0, 2, 7),
        (3, 1, 0, 8),
        (4, 1, 1, 8),
        (5, 1, 2, 8),
    ]
    # Seated as a scheduled ladder seats its sets: every bot in every seat once.
    assert [m.seats for m in first] == [
        ("bot0", "bot1", "bot2"),
        ("bot1", "bot2", "bot0"),
        ("bot2", "bot0", "bot1"),
    ]
    assert store.get_ladder("open").num_matches == 6
    store.ensure_open_ladder("other", "balloon", 3)
    for b in bots[:3]:
        store.join_ladder("other", b)
    with pytest.raises(LadderError, match="^bot3 did not join ladder 'other'"):
        store.add_set("other", bots[1:], seed=9)
    with pytest.raises(LadderError, match="needs 3 distinct bots"):
        store.add_set("open", [bots[0], bots[0], bots[1]], seed=9)
    assert store.get_ladder("open").num_matches == 6  # nothing written by a refused set


@pytest.mark.parametrize("mode", ["set", "match"])
def test_each_standing_has_the_probability_it_is_better_than_the_next(tmp_path, mode):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 5)
    ladder = store.create_ladder("l", "balloon", 3, bots, seed=6, rounds=2, rating_mode=mode)
    matches = store.matches("l")
    play(
        store,
        "l",
        [m.index for m in matches],
        random_results(matches, ladder.config, seed=3, skill={"bot0": 6, "bot1": 3}),
    )
    table = store.rankings("l")
    rows = table.standings
    for above, below in zip(rows, rows[1:]):
        # The calibrated probability: the posteriors' spread widened for the ladder's mode.
        spread = math.sqrt(above.sigma**2 + below.sigma**2) * CALIBRATED_WIDEN[mode]
        z = (above.mu - below.mu) / spread
        assert above.p_better_than_next == pytest.approx(
            0.5 * (1 + math.erf(z / math.sqrt(2))), abs=1e-12
        )
    assert rows[-1].p_better_than_next is None
    p = [s.p_better_than_next for s in rows[:-1]]
    for i, s in enumerate(rows):
        expected = (i == 0 or p[i - 1] >= 0.95) and (i == len(rows) - 1 or p[i] >= 0.95)
        assert s.settled == expected
    assert table.all_settled == all(s.settled for s in rows)
    assert not table.all_settled  # three bots of equal skill cannot be told apart in 2 rounds
    # Another confidence moves the marks, not the probabilities.
    loose = store.rankings("l", confidence=0.55)
    assert [s.p_better_than_next for s in loose.standings] == p + [None]
    assert sum(s.settled for s in loose.standings) >= sum(s.settled for s in rows)
    doc = table.to_dict()
    assert doc["confidence"] == 0.95 and doc["all_settled"] == table.all_settled
    assert [s["p_better_than_next"] for s in doc["standings"]] == p + [None]


def test_a_new_ladder_is_rated_by_margins_and_an_existing_one_keeps_its_mode(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 4)
    assert store.create_ladder("new", "balloon", 3, bots, seed=1).rating_mode == "margins"
    old = store.create_ladder("old", "balloon", 3, bots, seed=1, rating_mode="match")
    # Resumed without a mode (what `arena ladder run` does unless told), it stays per match;
    # asked for the other mode, it says so instead of changing it.
    assert store.ensure_ladder("old", "balloon", 3, bots, rounds=2).rating_mode == "match"
    assert store.get_ladder("old").rounds == 2
    with pytest.raises(LadderMismatch, match="rating mode is 'match', not 'set'"):
        store.ensure_ladder("old", "balloon", 3, bots, rating_mode="set")
    assert store.get_ladder("old").rating_mode == "match" == old.rating_mode
    assert store.ensure_open_ladder("open", "balloon", 3).rating_mode == "margins"
    assert (
        store.ensure_open_ladder("open-m", "balloon", 3, rating_mode="match").rating_mode == "match"
    )
    assert store.ensure_open_ladder("open-m", "balloon", 3).rating_mode == "match"


def test_an_opening_match_is_a_finished_set_of_its_own_for_disclosure(tmp_path):
    store, _, _, matches, results = ladder_with_results(
        tmp_path, 4, 3, results_seed=2, seed=3, opening_round=True
    )
    opening = 4  # every table of 3 of 4 bots once
    for i in (0, opening):
        store.start_match("l", i, node="n1")
        store.record_result("l", i, results[i])
    with Store(store.path, readonly=True) as reader:
        q = BrowseQueries(reader)
        # The opening match is its own set: finished once it is, its deal public.
        assert q.match("l", 0).set_finished
        assert [m.index for m in q.match("l", 0).set_matches] == [0]
        # A duplicate set's first rotation is not: its two others are still to play.
        detail = q.match("l", opening)
        assert not detail.set_finished
        assert [m.index for m in detail.set_matches] == [opening, opening + 1, opening + 2]
        rows = {
            r.index: r.set_finished for r in q.match_list(ladder="l", status="completed").matches
        }
        assert rows == {0: True, opening: False}
        assert q.finished_prefix("l") == 1


def test_a_margins_ladder_keeps_its_model_whole_and_ranks_by_it(tmp_path):
    """In margins mode each set is one update of the ladder's stored model (every bot's rating
    follows it, a faulted seat counting at most its table's lowest score) and P(better than the
    next) is the model's, covariance included: recomputed here from the results alone."""
    store, names, ladder, matches, results = ladder_with_results(
        tmp_path, 5, 3, results_seed=8, seed=2, rounds=2, rating_mode="margins"
    )
    # A fault of the seat that scored best: it counts as its table's lowest.
    slow = (Fault(0, TIMEOUT, 2, 1500.0, "slow"),)
    results[0] = make_result(matches[0], ladder.config, (40, 10, 25), slow)
    store.record_results("l", list(results.items()))
    expected = MarginModel()
    for _, in_set in itertools.groupby(matches, key=lambda m: m.set_index):
        played = [results[m.index] for m in in_set]
        expected.observe(
            [(r.seat_names, fault_adjusted(r.scores, {f.seat for f in r.faults})) for r in played]
        )
    table = store.rankings("l")
    assert table.rated == len(matches) and table.rating_mode == "margins"
    for s in table.standings:
        want = expected.rating(s.bot)
        assert (s.mu, s.sigma) == pytest.approx((want.mu, want.sigma))
        assert s.conservative == pytest.approx(want.mu - 3 * want.sigma)
    order = [s.bot for s in table.standings]
    assert [s.p_better_than_next for s in table.standings[:-1]] == pytest.approx(
        expected.p_next(order)
    )
    # Not what independent sigmas would give: the model's covariance is in it.
    a, b = table.standings[0], table.standings[1]
    independent = p_better(SkillRating(a.mu, a.sigma), SkillRating(b.mu, b.sigma))
    assert a.p_better_than_next != pytest.approx(independent, abs=1e-3)
