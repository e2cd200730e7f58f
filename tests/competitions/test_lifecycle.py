"""A competition's steps on a real store, its finals played in this process by the engine:
each step idempotent, the entrants fixed at the freeze, the finals extended a round at a time
until their rule stops them, the standings and archive published and then immutable, and the
archive accepted by verify, and rejected once a result, a standing or a seed is changed."""

from __future__ import annotations

import dataclasses
import io
import json
import sqlite3
import time
import zipfile
from pathlib import Path

import pytest

from arena.competitions import archive, lifecycle
from arena.competitions.config import parse
from arena.competitions.phases import BUDGET, FINALS, FROZEN, OPEN, PUBLISHED, finals_verdict
from arena.ratings import RatingParams
from arena.store import RUNNABLE, Competition, CompetitionError, Store
from tests.cli import ROOT
from tests.store.helpers import use_seed_key
from tests.support.competitions import config_text, play_pending

RANDOM = "python example_bots/random_bot.py"
NOW = time.time()


def rewrite(data: bytes, name: str, change) -> bytes:
    """The archive with member `name`'s JSON changed by `change(doc)`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.namelist():
            raw = zin.read(item)
            if item == name:
                doc = json.loads(raw)
                change(doc)
                raw = json.dumps(doc).encode()
            zout.writestr(item, raw)
    return out.getvalue()


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A competition of four bots taken from creation to publication, with what each step
    returned on the way."""
    db = tmp_path_factory.mktemp("competition") / "arena.db"
    store = Store(db)
    for name in ("a", "b", "c", "d", "late"):
        store.add_bot(name, RANDOM, cwd=ROOT)
    config = parse(config_text(top='bots = ["a", "b", "c", "d", "nobody"]'))
    steps = {"created": lifecycle.create(store, config, NOW)}
    steps["before"] = lifecycle.tick(store, "cup", NOW + 3599, verifying=False)
    steps["verifying"] = lifecycle.tick(store, "cup", NOW + 3600, verifying=True)
    steps["frozen"] = lifecycle.tick(store, "cup", NOW + 3600, verifying=False)
    store.update_bot("a", command=RANDOM + " ", cwd=ROOT)  # a@2, after the freeze
    steps["frozen again"] = store.freeze_competition("cup")
    steps["finals"] = lifecycle.tick(store, "cup", NOW + 4200, verifying=False)
    seed = store.get_ladder("cup.finals").seed
    steps["finals again"] = store.start_finals("cup")
    rounds = []
    while store.get_competition("cup").phase == FINALS:
        rounds.append(play_pending(store, "cup.finals"))
        lifecycle.finals_round_over(store, store.get_competition("cup"))
    steps["published"] = store.get_competition("cup")
    data = store.competition_archive("cup")
    yield store, steps, rounds, seed, data, db
    store.close()


def test_each_step_is_stored_once_and_the_entrants_are_fixed_at_the_freeze(published):
    store, steps, rounds, seed, _, _ = published
    assert steps["before"].phase == OPEN and steps["verifying"].phase == OPEN
    assert steps["frozen"].phase == FROZEN
    # the bots the config names that exist, each its newest passing version then
    assert steps["frozen"].entrants == ("a", "b", "c", "d")
    assert steps["frozen again"].entrants == ("a", "b", "c", "d")  # not a@2
    assert steps["frozen again"].steps == steps["frozen"].steps
    assert steps["finals"].phase == FINALS
    assert steps["finals again"].steps == steps["finals"].steps
    assert store.get_ladder("cup.finals").seed == seed  # not drawn again
    assert set(steps["published"].steps) == {OPEN, FROZEN, FINALS, PUBLISHED}


def test_the_finals_stop_at_their_budget_and_publish_standings(published):
    store, steps, rounds, _, data, _ = published
    # 4 bots at tables of 3: 4 sets of 3 matches a round; a budget of 24 allows two rounds
    assert rounds == [12, 12]
    comp = steps["published"]
    assert comp.phase == PUBLISHED and comp.finals_end == BUDGET
    assert comp.standings is not None
    assert sorted(s["bot"] for s in comp.standings) == ["a", "b", "c", "d"]
    assert [s["rank"] for s in comp.standings] == [1, 2, 3, 4]
    assert all(s["matches"] == 18 for s in comp.standings)
    assert all(s["low"] < s["mu"] < s["high"] for s in comp.standings)
    assert comp.standings[-1]["p_better_than_next"] is None
    assert data is not None


def test_a_published_competition_cannot_be_changed(published):
    store, _, _, _, _, db = published
    with pytest.raises(CompetitionError, match="published already"):
        lifecycle.advance(store, "cup")
    con = sqlite3.connect(db)
    with pytest.raises(sqlite3.IntegrityError, match="cannot be changed"):
        con.execute("UPDATE competitions SET standings = '[]' WHERE name = 'cup'")
    con.close()


def test_verify_accepts_the_archive_and_rejects_a_changed_one(published):
    *_, data, _ = published
    checked = archive.verify(data)
    assert checked.accepted, checked.problems
    assert checked.matches == 24

    def lower_a_score(doc):
        doc["replay"]["scores"][0] -= 1

    def swap_the_first_two(doc):
        doc[0], doc[1] = doc[1], doc[0]

    def another_deal(doc):
        doc["seed"] += 1
        doc["replay"]["seed"] += 1

    def say_settled(doc):
        doc["finals"]["end"] = "settled"

    for member, change, problem in (
        ("matches/000005.json", lower_a_score, "match 5: the replay does not reproduce"),
        ("standings.json", swap_the_first_two, "the standings do not follow"),
        ("matches/000003.json", another_deal, "match 3 is not the one the finals' seed"),
        ("competition.json", say_settled, "the archive says the finals ended as 'settled'"),
    ):
        checked = archive.verify(rewrite(data, member, change))
        assert not checked.accepted
        assert any(problem in p for p in checked.problems), checked.problems
    with pytest.raises(archive.ArchiveError, match="not a competition archive"):
        archive.verify(b"not a zip")


def finals_to_publication(db: Path, crash_every: int | None = None) -> Competition:
    """Four bots' competition from creation to publication, its finals seeded 7. With
    `crash_every`, the process dies every that many matches as kill -9 leaves it (the next two
    matches started, never recorded; the store gone without closing) and another carries on
    from the database, as a restarted server does (its runner puts running matches back)."""
    store = Store(db)
    for name in ("a", "b", "c", "d"):
        store.add_bot(name, RANDOM, cwd=ROOT)
    use_seed_key(db)
    lifecycle.create(store, parse(config_text(top='bots = ["a", "b", "c", "d"]')), NOW)
    lifecycle.advance(store, "cup")
    store.start_finals("cup", seed=7)
    while store.get_competition("cup").phase == FINALS:
        if crash_every is None:
            play_pending(store, "cup.finals")
        elif play_pending(store, "cup.finals", limit=crash_every):
            for match in store.matches("cup.finals", RUNNABLE, limit=2):
                store.start_match("cup.finals", match.index)
            store = Store(db)  # the killed process's store is never closed
            store.reset_running("cup.finals")
            continue
        lifecycle.finals_round_over(store, store.get_competition("cup"))
    return store.get_competition("cup")


def test_finals_killed_again_and_again_end_with_the_same_standings(tmp_path):
    (tmp_path / "straight").mkdir()
    (tmp_path / "killed").mkdir()
    straight = finals_to_publication(tmp_path / "straight" / "arena.db")
    killed = finals_to_publication(tmp_path / "killed" / "arena.db", crash_every=5)
    assert killed.standings == straight.standings
    assert killed.finals_end == straight.finals_end == BUDGET

    def results(db: Path) -> list:
        with Store(db, readonly=True) as store:
            _, _, _, matches = archive.read(store.competition_archive("cup") or b"")
        return [(m["index"], m["seats"], m["replay"]["scores"]) for m in matches]

    assert results(tmp_path / "killed" / "arena.db") == results(tmp_path / "straight" / "arena.db")


def test_a_qualification_lets_the_open_ladders_top_n_into_the_finals(tmp_path):
    """The three best conservative ratings of the open ladder enter (f joined and never
    played: unrated, it would come last)."""
    with Store(tmp_path / "arena.db") as store:
        bots = ["a", "b", "c", "d", "e", "f"]
        for name in bots:
            store.add_bot(name, RANDOM, cwd=ROOT)
        config = parse(config_text(finals="max_matches = 24\nqualify = 3"))
        lifecycle.create(store, config, NOW)
        store.ensure_open_ladder("cup.open", "balloon", 3)
        for name in bots:
            store.join_ladder("cup.open", name)
        for seed, table in enumerate([("c", "d", "e")] * 3 + [("a", "b", "c")]):
            store.add_set("cup.open", table, seed)
        play_pending(store, "cup.open")
        ranked = [s.bot for s in store.rankings("cup.open").standings]
        frozen = lifecycle.advance(store, "cup")
        assert frozen.entrants == tuple(sorted(ranked[:3]))
        assert frozen.entrants != ("a", "b", "c")  # not merely the first by name


def test_finals_need_as_many_entrants_as_a_table(tmp_path):
    with Store(tmp_path / "arena.db") as store:
        store.add_bot("a", RANDOM, cwd=ROOT)
        config = parse(config_text(top='bots = ["a"]'))
        lifecycle.create(store, config, NOW)
        lifecycle.advance(store, "cup")
        with pytest.raises(CompetitionError, match="has 1 entrants .a.; its finals at tables"):
            lifecycle.advance(store, "cup")
        assert store.get_competition("cup").phase == FROZEN


def test_verify_rates_an_opening_round_match_by_match_and_refuses_what_it_cannot_recompute(
    tmp_path,
):
    """A competition's finals have no opening round, but an archive of finals that had one
    (arena.schedule: single matches, each a set of its own, before the duplicate sets) is
    checked as the store rated it, not in chunks of a table's matches; one whose
    competition.json leaves the opening round out, or names another rating mode, is refused."""
    with Store(tmp_path / "arena.db") as store:
        for name in ("a", "b", "c", "d"):
            store.add_bot(name, RANDOM, cwd=ROOT)
        config = parse(config_text(top='bots = ["a", "b", "c", "d"]'))
        lifecycle.create(store, config, NOW)
        # The lifecycle's archive of a competition whose finals' ladder opened with a round.
        comp = dataclasses.replace(store.get_competition("cup"), name="opened")
        store.create_ladder(
            comp.finals_ladder, "balloon", 3, ["a", "b", "c", "d"], seed=7, rating_mode="set",
            opening_round=True,
        )  # fmt: skip
        play_pending(store, comp.finals_ladder)
        matches = store.matches(comp.finals_ladder)
        assert [m.set_index for m in matches[:5]] == [0, 1, 2, 3, 4]  # 4 single matches first
        standings = lifecycle.final_standings(store, comp)
        verdict = finals_verdict(
            [s["p_better_than_next"] for s in standings[:-1]],
            config.confidence,
            len(matches),
            4 * 3,
            config.max_matches,
        )
        head = lifecycle.archive_head(comp, config, store, verdict)
        archived = lifecycle.archive_matches(store, comp)
        data = archive.write(head, standings, archived)
    assert head["finals"]["opening_round"] is True
    checked = archive.verify(data)
    assert checked.accepted, checked.problems
    assert checked.matches == len(matches) == 4 + 12
    # The store's ratings are the archive's, set by set: chunks of three would not give them.
    ratings, _, _ = archive.rate(list(head["entrants"]), RatingParams(), archived, "set")
    assert {s["bot"]: s["mu"] for s in standings} == pytest.approx(
        {bot: r.mu for bot, r in ratings.items()}
    )

    def no_opening(doc):
        del doc["finals"]["opening_round"]

    def per_match(doc):
        doc["finals"]["rating_mode"] = "match"

    for change, problem in (
        (no_opening, "the archive holds 16 matches; the finals' seed and rounds make 12"),
        (per_match, "the finals were rated in 'match' mode; verify recomputes the ratings of"),
    ):
        checked = archive.verify(rewrite(data, "competition.json", change))
        assert not checked.accepted
        assert any(problem in p for p in checked.problems), checked.problems
