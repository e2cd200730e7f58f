"""The service's scheduler without processes: when a ladder's loop chooses, waits or stops,
which bots are available, busy bots kept off tables, the quota, seeds, and the fault policy."""

from __future__ import annotations

from dataclasses import dataclass

from arena.ratings import Rater
from arena.service.scheduler import Scheduler, SchedulerSettings, Step
from arena.service.tables import FaultPolicy
from arena.store import Bot


def bot(name: str, remote: bool = False, suspended: bool = False) -> Bot:
    return Bot(
        id=0,
        name=name,
        command=None if remote else "python bot.py",
        directory=None,
        remote=remote,
        created=0.0,
        suspended=suspended,
        suspended_reason="cheating" if suspended else None,
        removed=None,
    )


@dataclass
class Standing:
    bot: str
    mu: float
    sigma: float
    matches: int


def scheduler(**settings) -> Scheduler:
    s = Scheduler(SchedulerSettings(seed=7, **settings))
    s.open_ladder("lad", Rater())
    return s


def test_the_loop_chooses_while_there_is_room_then_waits():
    s = scheduler(concurrency=2)
    assert s.next_step(0) is Step.CHOOSE
    assert s.next_step(1) is Step.CHOOSE
    assert s.next_step(2) is Step.WAIT


def test_the_quota_waits_for_sets_in_flight_then_stops():
    s = scheduler(concurrency=4, max_matches=5)
    s.set_started("lad", ("a", "b", "c"), 3, now=1.0)
    assert s.next_step(1) is Step.CHOOSE  # 3 of 5 started
    s.set_started("lad", ("d", "e", "f"), 3, now=2.0)
    assert s.started_matches == 6
    assert s.next_step(2) is Step.WAIT  # quota met: no new set, the two in flight finish
    assert s.next_step(0) is Step.STOP


def test_available_bots_are_unsuspended_members_and_connected_remote_ones():
    s = Scheduler(SchedulerSettings(allow_remote=True))
    s.open_ladder("lad", Rater(), members=frozenset({"a", "b", "r1", "r2", "x"}))
    bots = [
        bot("a"),
        bot("b"),
        bot("c"),
        bot("x", suspended=True),
        bot("r1", remote=True),
        bot("r2", remote=True),
    ]
    names = [b.name for b in s.available("lad", bots, connected=lambda n: n == "r1")]
    assert names == ["a", "b", "r1"]
    # No referee here (Ray): no remote bot can play.
    assert [b.name for b in s.available("lad", bots, connected=None)] == ["a", "b"]


def test_a_service_that_does_not_allow_remote_bots_seats_none_even_connected():
    s = Scheduler()  # the default: arena serve without --allow-remote
    s.open_ladder("lad", Rater())
    bots = [bot("a"), bot("b"), bot("r1", remote=True)]
    assert [b.name for b in s.available("lad", bots, connected=lambda n: True)] == ["a", "b"]


def test_newcomers_are_joined_once():
    s = scheduler()
    assert s.newcomers("lad", ["a", "b"]) == ["a", "b"]
    s.joined("lad", "a", now=5.0)
    assert s.newcomers("lad", ["a", "b"]) == ["b"]


def test_busy_bots_get_no_seat_until_their_set_ends():
    s = scheduler()
    names = ["a", "b", "c", "d", "e"]
    first = s.choose_table("lad", 3, names, [])
    assert first is not None and len(set(first)) == 3
    s.set_started("lad", first, 3, now=1.0)
    assert s.choose_table("lad", 3, names, []) is None  # two idle bots: no table of three
    s.set_ended("lad", first, 3)
    second = s.choose_table("lad", 3, names, [])
    assert second is not None and len(set(second)) == 3


def test_the_least_played_bot_gets_the_next_seat():
    s = scheduler()
    standings = [
        Standing("a", 25, 3, 10),
        Standing("b", 25, 3, 10),
        Standing("c", 25, 3, 10),
        Standing("d", 25, 3, 0),
    ]
    for _ in range(5):
        table = s.choose_table("lad", 2, ["a", "b", "c", "d"], standings)
        assert "d" in table


def test_among_equally_played_bots_the_one_seated_longest_ago_sits_next():
    s = scheduler()
    standings = [Standing(n, 25, 3, 2) for n in "abcd"]  # the store's count, sets ended
    s.set_started("lad", ("b", "c"), 2, now=1.0)
    s.set_ended("lad", ("b", "c"), 2)
    s.set_started("lad", ("a", "d"), 2, now=2.0)
    s.set_ended("lad", ("a", "d"), 2)
    for _ in range(3):
        assert "b" in s.choose_table("lad", 2, list("abcd"), standings)


def test_the_same_seed_makes_the_same_decisions():
    def run() -> list:
        s = scheduler()
        out = []
        for i in range(6):
            table = s.choose_table("lad", 2, ["a", "b", "c", "d", "e"], [])
            out.append((table, s.new_seed()))
            s.set_started("lad", table, 2, now=float(i))
            s.set_ended("lad", table, 2)
        return out

    first = run()
    assert first == run()
    assert all(0 <= seed < 2**53 for _, seed in first)


def test_the_fault_policy_suspends_a_bot_that_keeps_faulting_and_starts_afresh():
    s = scheduler(fault_policy=FaultPolicy(window=4, limit=2))
    assert s.match_played(["good", "bad"], {1}) == []
    suspended = s.match_played(["bad", "good"], {0})
    assert [b for b, _ in suspended] == ["bad"]
    assert "faulted in 2 of its last 2 matches" in suspended[0][1]
    assert "arena bot reinstate" in suspended[0][1]
    # Reinstated, it starts with a clean history: one more fault is not enough.
    assert s.match_played(["bad", "good"], {0}) == []
    # Faults older than the window are forgotten.
    s2 = scheduler(fault_policy=FaultPolicy(window=2, limit=2))
    assert s2.match_played(["x"], {0}) == []
    assert s2.match_played(["x"], set()) == []
    assert s2.match_played(["x"], set()) == []
    assert s2.match_played(["x"], {0}) == []
