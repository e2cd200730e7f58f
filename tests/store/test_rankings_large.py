"""Rankings over 20,000 stored matches: read from the standings, equal to the stored results.
(How fast they are read at 100,000 matches is a benchmark: scripts/bench.py ladder.)"""

from __future__ import annotations

import random

import pytest

from arena.results import CRASH, Fault
from arena.store.rating import load_margin_model
from tests.store.helpers import add_remote_bots, make_result, new_store


@pytest.mark.parametrize("mode", ["set", "margins"])
def test_rankings_over_20000_matches_match_the_stored_results(tmp_path, mode):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 4)
    skill = {b: 2 * i for i, b in enumerate(bots)}
    ladder = store.create_ladder("big", "balloon", 2, bots, seed=7, rounds=1667, rating_mode=mode)
    assert ladder.num_matches == 20_004
    rng = random.Random(3)
    batch = []
    for m in store.matches("big"):
        scores = tuple(rng.randrange(10) + skill[b] for b in m.seats)
        faults = (Fault(1, CRASH, -1, 0.0, "gone"),) if rng.random() < 0.02 else ()
        batch.append((m.index, make_result(m, ladder.config, scores, faults)))
        if len(batch) == 5000:
            store.record_results("big", batch)
            batch = []
    store.record_results("big", batch)

    table = store.rankings("big")
    assert table.scheduled == table.completed == table.rated == 20_004
    # Independent aggregates over every stored result row.
    expected = {
        name: (n, wins, total, faults)
        for name, n, wins, total, faults in store.db.execute(
            "SELECT b.name, count(*), sum(r.rank = 0), sum(r.score), sum(r.faults) "
            "FROM results r JOIN bots b ON b.id = r.bot_id GROUP BY b.name"
        )
    }
    last = {}
    for name, mu, sigma in store.db.execute(
        "SELECT b.name, h.mu, h.sigma FROM rating_history h JOIN matches m "
        "ON m.id = h.match_id JOIN bots b ON b.id = h.bot_id ORDER BY m.idx"
    ):
        last[name] = (mu, sigma)
    if mode == "margins":
        # Every set moves every bot's rating (the model's covariance couples them), and the
        # history holds the seated bots' only: the standings are the stored model's.
        model = load_margin_model(
            store.db, store.db.execute("SELECT id FROM ladders").fetchone()[0]
        )
        ids = dict(store.db.execute("SELECT name, id FROM bots"))
        last = {name: (model.rating(ids[name]).mu, model.rating(ids[name]).sigma) for name in bots}
    for s in table.standings:
        n, wins, total, faults = expected[s.bot]
        assert (s.matches, s.wins, s.faults) == (n, wins, faults)
        assert s.mean_score == pytest.approx(total / n)
        assert (s.mu, s.sigma) == last[s.bot]
        assert s.conservative == pytest.approx(s.mu - 3 * s.sigma)
    assert [s.bot for s in table.standings] == list(reversed(bots))
    assert sum(s.matches for s in table.standings) == 2 * 20_004
