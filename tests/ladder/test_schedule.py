"""The ladder schedule: balanced round-robin, duplicate sets, determinism from the seed."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from arena.schedule import (
    ScheduleError,
    make_schedule,
    rotate,
    tables_per_round,
    uses_all_subsets,
)


def check_balanced(n: int, k: int, rounds: int, seed: int) -> None:
    bots = [f"bot{i}" for i in range(n)]
    schedule = make_schedule(bots, k, rounds=rounds, seed=seed)
    assert [m.index for m in schedule] == list(range(len(schedule)))
    sets: dict[int, list] = {}
    for m in schedule:
        sets.setdefault(m.set_index, []).append(m)
    assert len(schedule) == k * len(sets)
    tables_of = Counter()
    seat_counts = Counter()
    pairs = Counter()
    for set_index, matches in sets.items():
        # A duplicate set: k consecutive matches, one seed, every rotation of one seating.
        assert [m.rotation for m in matches] == list(range(k))
        assert matches[0].index == set_index * k
        assert len({m.seed for m in matches}) == 1
        assert len({m.round for m in matches}) == 1
        table = matches[0].seats
        assert len(set(table)) == k
        assert all(m.seats == rotate(table, m.rotation) for m in matches)
        for bot in table:
            tables_of[bot] += 1
        for m in matches:
            for seat, bot in enumerate(m.seats):
                seat_counts[bot, seat] += 1
        for a, b in itertools.combinations(sorted(table), 2):
            pairs[a, b] += 1
    # Every bot plays the same number of tables, and every seat position equally often.
    assert set(tables_of) == set(bots)
    assert len(set(tables_of.values())) == 1
    per_bot = tables_of[bots[0]]
    assert all(seat_counts[b, s] == per_bot for b in bots for s in range(k))
    # Every pair meets, and pair counts differ by at most one (equal with all k-subsets).
    counts = [pairs[a, b] for a, b in itertools.combinations(sorted(bots), 2)]
    assert min(counts) >= 1
    assert max(counts) - min(counts) <= 1
    if uses_all_subsets(n, k):
        assert len(sets) == rounds * math.comb(n, k)
        assert max(counts) == min(counts)
        for r in range(rounds):
            tables = {frozenset(ms[0].seats) for ms in sets.values() if ms[0].round == r}
            assert len(tables) == math.comb(n, k)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_balanced_for_every_size(k: int) -> None:
    for n in range(k, 51):
        check_balanced(n, k, rounds=1, seed=n * 10 + k)


@pytest.mark.parametrize("n,k", [(7, 3), (13, 5), (21, 5), (30, 3), (50, 4), (50, 5)])
def test_balanced_over_several_rounds(n: int, k: int) -> None:
    check_balanced(n, k, rounds=3, seed=7)


def test_large_ladders_use_a_design_smaller_than_all_subsets() -> None:
    assert not uses_all_subsets(50, 5)
    assert tables_per_round(50, 5) < math.comb(50, 5) / 1000
    assert uses_all_subsets(8, 4) and tables_per_round(8, 4) == 70


def test_same_seed_same_schedule_other_seed_other_schedule() -> None:
    bots = [f"b{i}" for i in range(30)]
    for k in (2, 4, 5):
        a = make_schedule(bots, k, rounds=2, seed=123)
        assert a == make_schedule(bots, k, rounds=2, seed=123)
        assert a != make_schedule(bots, k, rounds=2, seed=124)


def test_more_rounds_extend_the_schedule() -> None:
    bots = list(range(20))
    for k in (3, 5):
        one = make_schedule(bots, k, rounds=1, seed=5)
        three = make_schedule(bots, k, rounds=3, seed=5)
        assert three[: len(one)] == one
        # Fresh seeds each round.
        seeds = {m.seed for m in three}
        assert len(seeds) == len(three) // k


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ScheduleError, match="at least 4 bots"):
        make_schedule(["a", "b", "c"], 4)
    with pytest.raises(ScheduleError, match="table size 6"):
        make_schedule(list(range(10)), 6)
    with pytest.raises(ScheduleError, match="table size 1"):
        make_schedule(list(range(10)), 1)
    with pytest.raises(ScheduleError, match="rounds"):
        make_schedule(list(range(10)), 2, rounds=0)
    with pytest.raises(ScheduleError, match="distinct"):
        make_schedule(["a", "a", "b"], 2)


def _first_tables(schedule, round_: int) -> list[tuple]:
    return [m.seats for m in schedule if m.rotation == 0 and m.round == round_]


@pytest.mark.parametrize("n, k", [(7, 4), (7, 3), (12, 4), (5, 2), (20, 3), (40, 4), (30, 5)])
def test_spread_order_is_the_same_sets_seating_every_bot_early(n: int, k: int) -> None:
    bots = list(range(n))
    for seed in range(3):
        plain = make_schedule(bots, k, rounds=2, seed=seed)
        spread = make_schedule(bots, k, rounds=2, seed=seed, spread=True)
        # The same sets (seating, seed, round), only in another order within each round.
        assert sorted((m.round, m.seed, m.seats) for m in spread) == sorted(
            (m.round, m.seed, m.seats) for m in plain
        )
        assert [m.index for m in spread] == list(range(len(spread)))
        for round_ in range(2):
            tables = _first_tables(spread, round_)
            sat = Counter()
            for table in tables:
                sat.update(table)
                # No bot is more than a few tables ahead of another at any point of a round
                # (a random order lets one lead by 7 to 31 here).
                assert max(sat[b] for b in bots) - min(sat[b] for b in bots) <= 3
            if uses_all_subsets(n, k):
                # Every bot is seated within the fewest tables that can seat them all.
                first = set().union(*tables[: math.ceil(n / k)])
                assert first == set(bots)


def test_spread_schedules_extend_like_the_others() -> None:
    one = make_schedule(list(range(9)), 3, rounds=1, seed=2, spread=True)
    three = make_schedule(list(range(9)), 3, rounds=3, seed=2, spread=True)
    assert three[: len(one)] == one


@pytest.mark.parametrize(("n", "k", "rounds"), [(5, 3, 1), (7, 4, 2), (12, 3, 2), (6, 2, 1)])
def test_opening_round_plays_each_table_once_then_the_usual_sets(
    n: int, k: int, rounds: int
) -> None:
    bots = [f"bot{i}" for i in range(n)]
    plain = make_schedule(bots, k, rounds=rounds, seed=5)
    opened = make_schedule(bots, k, rounds=rounds, seed=5, opening_round=True)
    first_round = [m for m in plain if m.round == 0 and m.rotation == 0]
    opening, rest = opened[: len(first_round)], opened[len(first_round) :]
    assert [m.index for m in opened] == list(range(len(opened)))
    # The opening: sets of one match each, rotation 0, round 0, one per table of the first round.
    assert [m.set_index for m in opening] == list(range(len(first_round)))
    assert all(m.rotation == 0 and m.round == 0 for m in opening)
    assert sorted(sorted(m.seats) for m in opening) == sorted(sorted(m.seats) for m in first_round)
    # Fresh deals, not the sets' deals, and the seats drawn afresh.
    assert not {m.seed for m in opening} & {m.seed for m in plain}
    assert len({m.seed for m in opening}) == len(opening)
    assert [m.seats for m in opening] != [m.seats for m in first_round]
    # Then the schedule without an opening, its indexes and set indexes moved on.
    assert [
        (m.index - len(opening), m.set_index - len(opening), m.round, m.rotation, m.seed, m.seats)
        for m in rest
    ] == [(m.index, m.set_index, m.round, m.rotation, m.seed, m.seats) for m in plain]


def test_opening_round_schedules_are_deterministic_and_extend() -> None:
    bots = [f"bot{i}" for i in range(8)]
    one = make_schedule(bots, 3, rounds=1, seed=9, opening_round=True)
    assert one == make_schedule(bots, 3, rounds=1, seed=9, opening_round=True)
    assert one != make_schedule(bots, 3, rounds=1, seed=10, opening_round=True)
    three = make_schedule(bots, 3, rounds=3, seed=9, opening_round=True)
    assert three[: len(one)] == one
    assert {m.round for m in three} == {0, 1, 2}
