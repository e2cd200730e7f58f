"""Scrimmages as stored (arena/store/scrimmages.py): the schedule made when asked for, the quota
of sets a day checked in the same transaction, results recorded match by match, and a set's
replays shown only once the whole set is over."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from arena.store import ScrimmageLimitReached, StoreError, UnknownScrimmage
from arena.store.errors import RegistryError
from tests.store.helpers import add_remote_bots, make_result, new_store


def test_a_scrimmage_is_scheduled_recorded_and_shows_a_set_only_once_it_is_over(tmp_path):
    store = new_store(tmp_path)
    a, b, c = add_remote_bots(store, 3)
    made = store.request_scrimmage(a, a, [b, c], 2, "lad", per_day=5)
    assert made.status == "pending" and made.opponents == (b, c)
    matches = store.get_scrimmage(a, made.id).matches
    # Each set one deal, its seating rotated through every position.
    assert [(m.set_index, m.rotation) for m in matches] == [
        (s, r) for s in range(2) for r in range(3)
    ]
    for s in range(2):
        first, *rest = [m for m in matches if m.set_index == s]
        assert {m.seed for m in rest} == {first.seed}
        assert [m.seats for m in rest] == [first.seats[r:] + first.seats[:r] for r in (1, 2)]
    assert matches[0].seed != matches[3].seed
    config = {"game": "balloon", "num_players": 3, "options": {}}

    def record(m, scores):
        played = SimpleNamespace(ladder="x", index=m.index, seed=m.seed, seats=m.seats)
        result = make_result(played, config, scores)  # type: ignore[arg-type]
        store.record_scrimmage_match(made.id, m.index, result, {"seed": m.seed, "n": m.index})

    record(matches[0], (5, 3, 1))
    record(matches[1], (2, 4, 6))
    assert store.get_scrimmage(a, made.id).status == "running"
    assert store.scrimmage_replays(a, made.id) == {}  # set 0 is not over: its deal is live
    store.fail_scrimmage_match(made.id, 2, "not played: the server could not run it")
    assert sorted(store.scrimmage_replays(a, made.id)) == [0, 1]
    with pytest.raises(StoreError, match="no pending match 2"):
        store.fail_scrimmage_match(made.id, 2, "again")
    for m in matches[3:]:
        record(m, (1, 1, 1))
    done = store.get_scrimmage(a, made.id)
    assert done.status == "done" and done.finished is not None
    assert sorted(store.scrimmage_replays(a, made.id)) == [0, 1, 3, 4, 5]
    doc = done.to_dict()
    assert doc["rated"] is False and [m["status"] for m in doc["matches"]].count("failed") == 1
    mine = doc["summary"]["bots"][a]
    assert mine["matches"] == 5
    # Another bot's owner cannot name it.
    with pytest.raises(UnknownScrimmage):
        store.get_scrimmage(b, made.id)


def test_the_quota_counts_sets_in_24_hours_and_a_refused_request_takes_nothing(tmp_path):
    store = new_store(tmp_path)
    a, b, c = add_remote_bots(store, 3)
    store.request_scrimmage(a, a, [b, c], 2, "lad", per_day=3)
    with pytest.raises(ScrimmageLimitReached, match="may have 3 scrimmage sets in 24 hours; it "
                       "has had 2, and asked for 2 more; more may be asked for at"):  # fmt: skip
        store.request_scrimmage(a, a, [b, c], 2, "lad", per_day=3)
    store.request_scrimmage(a, a, [b, c], 1, "lad", per_day=3)  # the last one
    store.request_scrimmage(b, b, [a, c], 3, "lad", per_day=3)  # another bot's own quota
    with pytest.raises(ScrimmageLimitReached, match="may have 0 scrimmage sets"):
        store.request_scrimmage(c, c, [a, b], 1, "lad", per_day=0)
    assert [s.sets for s in store.scrimmages_of(a)] == [1, 2]
    assert store.scrimmages_of(c) == []
    with pytest.raises(RegistryError, match="each bot once"):
        store.request_scrimmage(a, a, [b, b], 1, "lad", per_day=99)
    assert store.scrimmage_sets_per_day() == 10
    assert store.scrimmage_sets_per_day(4) == 4 and store.scrimmage_sets_per_day() == 4
    assert [sid for sid, _ in store.unfinished_scrimmages()] == [1, 2, 3]
