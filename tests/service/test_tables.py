"""The continuous scheduler's table choice: informative tables, a share cap, no starvation."""

from __future__ import annotations

import random

import trueskill

from arena.service.tables import Candidate, FaultPolicy, choose_table


def simulate(n_bots: int, k: int, picks: int, concurrency: int, seed: int = 0):
    """Pick tables as the service does, with `concurrency` tables in flight, finishing the
    oldest first, and rate each with a true-skill winner."""
    env = trueskill.TrueSkill(draw_probability=0.05)
    rng = random.Random(seed)
    skill = {f"b{i}": i for i in range(n_bots)}
    ratings = {b: env.create_rating() for b in skill}
    played = {b: 0 for b in skill}
    last = {b: 0.0 for b in skill}
    busy: list[tuple[str, ...]] = []
    waits = {b: [] for b in skill}
    since = {b: 0 for b in skill}
    for step in range(picks):
        if len(busy) >= concurrency:
            table = busy.pop(0)
            order = sorted(table, key=lambda b: -(skill[b] + rng.gauss(0, 3)))
            new = env.rate([(ratings[b],) for b in order], ranks=list(range(len(order))))
            for b, (r,) in zip(order, new):
                ratings[b] = r
        in_play = {b for t in busy for b in t}
        cands = [
            Candidate(b, ratings[b].mu, ratings[b].sigma, played[b], b in in_play, last[b])
            for b in skill
        ]
        table = choose_table(cands, k, env, rng)
        assert table is not None and len(set(table)) == k
        assert not set(table) & in_play
        for b in skill:
            since[b] += 1
        for b in table:
            played[b] += 1
            last[b] = step + 1
            waits[b].append(since[b])
            since[b] = 0
        busy.append(table)
    return played, waits, ratings, skill


def test_no_bot_takes_more_than_its_share_and_none_starves():
    played, waits, _, _ = simulate(n_bots=12, k=3, picks=600, concurrency=3)
    mean = sum(played.values()) / len(played)
    assert max(played.values()) <= 1.5 * mean + 1
    assert min(played.values()) >= 0.75 * mean
    # No bot waits long between tables: at most a few rounds of the whole field.
    assert max(max(w) for w in waits.values()) <= 3 * (12 / 3) + 2


def test_tables_teach_the_ratings_the_true_order():
    _, _, ratings, skill = simulate(n_bots=8, k=2, picks=500, concurrency=2, seed=3)
    env = trueskill.TrueSkill()
    by_rating = sorted(skill, key=lambda b: env.expose(ratings[b]))
    # The weakest and strongest bots are recognised (low noise in this simulation).
    assert by_rating[0] in ("b0", "b1") and by_rating[-1] in ("b6", "b7")


def test_not_enough_idle_bots_means_no_table():
    env = trueskill.TrueSkill()
    cands = [
        Candidate("a", 25, 8, 0, False, 0),
        Candidate("b", 25, 8, 0, True, 0),
        Candidate("c", 25, 8, 0, False, 0),
    ]
    assert choose_table(cands, 3, env, random.Random(0)) is None


def test_fault_policy_suspends_after_too_many_faulted_matches():
    policy = FaultPolicy(window=5, limit=3)
    assert policy.verdict([True, False, True, False]) is None
    reason = policy.verdict([True, False, True, False, True])
    assert reason is not None and "3 of its last 5" in reason and "reinstate" in reason
