"""Lanes (arena.referee.lanes, docs/bots.md#lanes): a launched bot plays rotation r of a duplicate
set only in its lane r, a process and sandbox of its own, so no process of a bot sees two hands
of one deal; lanes are launched when first needed, ended when idle and launched again when
seated. Real bots in real sandboxes, beside honest seats that must play without a fault."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from arena.games import game_from_config
from arena.ladder.executors import RunSettings
from arena.ladder.local import LocalExecutor
from arena.ladder.runner import LadderRunner
from arena.referee import lanes, sandbox
from arena.referee.lanes import lane_key
from arena.store import AsyncStore, Store
from tests.cli import ladder_run_args, run_arena
from tests.procs import processes_in

from .conftest import BOTS, FAST, ROOT

pytestmark = pytest.mark.skipif(
    sandbox.unavailable_reason() is not None, reason="the bubblewrap sandbox cannot run here"
)

RECORDER = f"{sys.executable} {BOTS / 'hand_recorder_bot.py'}"
RANDOM = f"{sys.executable} {ROOT / 'example_bots' / 'random_bot.py'}"


def register(db: Path, recorder: str, honest: list[str]) -> None:
    with Store(db) as store:
        store.add_bot(recorder, RECORDER)
        for name in honest:
            store.add_bot(name, RANDOM)


def guesses_and_hits(db: Path, ladder: str, logs: Path, recorder: str) -> tuple[int, int, int]:
    """(matches the recorder reported, hands it guessed, exact hits): a hit is a guess equal to
    another seat's hand, dealt at the start of that match, read from the stored replay. Each
    reported hand is checked against its own seat's true hand, so a report that does not match
    the stored matches fails here rather than counting as no hit."""
    with Store(db) as store:
        replays = [store.replay(ladder, m.index) for m in store.matches(ladder)]
    by_seating: dict[tuple[tuple[str, ...], int], list[list[int]]] = {}
    for replay in replays:
        assert replay is not None, "a match of the ladder was not completed"
        assert replay["faults"] == [], f"a seat faulted: {replay['faults']}"
        state = game_from_config(replay["config"]).new_match(replay["seed"])
        seats = tuple(replay["seat_names"])
        if recorder in seats:  # (the table it does not sit at)
            by_seating[(seats, seats.index(recorder))] = [
                sorted(state.hand(s)) for s in range(len(seats))
            ]
    reported = guessed = hits = 0
    for log in sorted(logs.glob(f"{recorder}*.log")):
        for line in log.read_text().splitlines():
            if not line.startswith("HANDS "):
                continue
            report = json.loads(line[len("HANDS ") :])
            hands = by_seating[(tuple(report["seats"]), report["seat"])]
            assert report["hand"] == hands[report["seat"]], "the recorder misread its own hand"
            others = [h for s, h in enumerate(hands) if s != report["seat"]]
            reported += 1
            guessed += len(report["guesses"])
            hits += sum(guess in others for guess in report["guesses"])
    return reported, guessed, hits


@pytest.mark.parametrize("k", [3, 4])
def test_a_hand_recorder_names_no_hand_it_was_not_shown(tmp_path, k):
    """A full duplicate round-robin (`arena ladder run`, k + 1 bots at tables of k): the bot
    that remembers every hand (in memory, its work directory and /tmp) names none of the other
    seats' hands; its lanes are its k rotations, one log each. Without an opening round, so
    that a seating names one match (an opening match is a deal of its own, played in lane 0)."""
    db, runs = tmp_path / "arena.db", tmp_path / "runs"
    honest = [f"honest{i}" for i in range(k)]
    register(db, "recorder", honest)
    done = run_arena(
        *ladder_run_args(
            "lanes",
            ",".join(["recorder", *honest]),
            db,
            ["--seed", "5", "-j", "4", "--move-ms", "5000", "--no-opening-round"],
            k=k,
            run_dir=runs,
        ),
        timeout=110,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    logs = runs / "lanes" / "logs"  # the ladder's own run directory
    reported, guessed, hits = guesses_and_hits(db, "lanes", logs, "recorder")
    print(
        f"FIGURE lanes k={k}: the recorder reported {reported} matches, guessed {guessed} "
        f"hands, {hits} exact hits"
    )
    assert reported == k * k  # it sits at k of the k + 1 tables, k rotations each
    # It did guess: each lane remembers the hands of its earlier matches (other deals).
    assert guessed >= k * (k - 1)
    assert hits == 0
    lanes = sorted(p.name for p in logs.glob("recorder*.log"))
    assert lanes == sorted(f"{lane_key('recorder', r)}.log" for r in range(k))
    assert processes_in(runs) == []


def test_in_one_process_the_recorder_names_the_other_hands(tmp_path):
    """The control: every rotation in one process per bot (the benchmark's internal switch,
    as before lanes) and the same bot names other seats' hands exactly: the check above can
    fail."""
    db, runs = tmp_path / "arena.db", tmp_path / "runs"
    honest = ["honest0", "honest1", "honest2"]
    register(db, "recorder", honest)
    with Store(db) as store:
        store.create_ladder("one", "balloon", 3, ["recorder", *honest], seed=5)

    async def main() -> None:
        store = await AsyncStore.open(db)
        settings = RunSettings(run_dir=runs, limits=FAST, concurrency=4, one_process=True)
        executor = settings.make_executor(store)
        try:
            bots = [await store.run(Store.get_bot, n) for n in ["recorder", *honest]]
            await LadderRunner(store, executor, FAST, 4).run("one", bots)
        finally:
            await executor.close()
            await store.close()

    asyncio.run(main())
    reported, guessed, hits = guesses_and_hits(db, "one", runs / "logs", "recorder")
    print(
        f"FIGURE one process k=3: the recorder reported {reported} matches, guessed {guessed} "
        f"hands, {hits} exact hits"
    )
    assert reported == 9
    assert hits > 0
    assert [p.name for p in (runs / "logs").glob("recorder*.log")] == ["recorder.log"]
    assert processes_in(runs) == []


async def poll(condition, what: str, timeout_s: float = 20.0):
    deadline = time.monotonic() + timeout_s
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s} s for {what}")
        await asyncio.sleep(0.02)  # polling a condition that has no event
    return found


def test_lanes_launch_when_needed_end_when_idle_and_relaunch_when_seated(tmp_path):
    """A bot at tables of 3 never has more than 3 lanes; after the idle time no process of it
    is left (the memory of an idle bot is zero); a match that seats it again launches the lane
    again, and the wait for its Hello is measured."""
    db, runs = tmp_path / "arena.db", tmp_path / "runs"
    names = ["a", "b", "c", "d"]
    with Store(db) as store:
        for name in names:
            store.add_bot(name, RANDOM)
        store.create_ladder("idle", "balloon", 3, names, seed=3)
        store.create_ladder("again", "balloon", 3, names[:3], seed=4)

    async def main() -> tuple[int, list[float], int]:
        store = await AsyncStore.open(db)
        executor = LocalExecutor(store, runs, idle_stop_s=2.0)
        most = 0
        sampling = True

        async def sample() -> None:
            nonlocal most
            while sampling:
                most = max(most, len(executor.lanes.lanes_of("a")))
                await asyncio.sleep(0.005)  # sampling the lanes while the ladder plays

        sampler = asyncio.ensure_future(sample())
        try:
            bots = [await store.run(Store.get_bot, n) for n in names]
            await LadderRunner(store, executor, FAST, 6).run("idle", bots)
            sampling = False
            await sampler
            await poll(lambda: not executor.referee.bots, "every lane to end as idle")
            await poll(lambda: processes_in(runs) == [], "the idle bots' processes to end")
            idle_stops = executor.lanes.stats.idle_stops
            before = len(executor.lanes.stats.relaunch_hello_s)
            await LadderRunner(store, executor, FAST, 3).run("again", bots[:3])
            waits = executor.lanes.stats.relaunch_hello_s[before:]
        finally:
            sampling = False
            await executor.close()
            await store.close()
        return most, waits, idle_stops

    most, waits, idle_stops = asyncio.run(main())
    assert most == 3, most
    assert idle_stops >= 4 * 3  # every bot's three lanes (more if one idled mid-ladder)
    # The second ladder's 3 bots x 3 rotations were each launched again once, Hello timed.
    assert len(waits) == 9 and all(0 < w < FAST.connect_ms / 1000 for w in waits), waits
    with Store(db) as store:
        replays = [store.replay("again", m.index) for m in store.matches("again")]
    assert all(r is not None and r["faults"] == [] for r in replays), replays
    assert processes_in(runs) == []
    print(
        f"FIGURE relaunch_hello: an idle-ended lane's Hello came {1000 * min(waits):.0f}-"
        f"{1000 * max(waits):.0f} ms (median {1000 * sorted(waits)[len(waits) // 2]:.0f} ms) "
        "after a seat needed it"
    )


def test_crashed_lanes_are_launched_again_within_one_budget_per_bot(tmp_path, monkeypatch):
    """A bot whose every lane crashes mid-match is launched again before its lane's next match,
    at most MAX_RELAUNCHES times for all its lanes together (a crash is the bot's fault, from
    whichever lane); after that its seats fault as crashed at once. The honest seats play on
    without a fault."""
    monkeypatch.setattr(lanes, "MAX_RELAUNCHES", 2)
    db, runs = tmp_path / "arena.db", tmp_path / "runs"
    names = ["crasher", "h1", "h2", "h3"]
    with Store(db) as store:
        store.add_bot("crasher", f"{sys.executable} {BOTS / 'fault_bot.py'} crash_mid")
        for name in names[1:]:
            store.add_bot(name, RANDOM)
        store.create_ladder("crash", "balloon", 3, names, seed=7)

    async def main() -> dict[str, int]:
        store = await AsyncStore.open(db)
        executor = LocalExecutor(store, runs)
        try:
            bots = [await store.run(Store.get_bot, n) for n in names]
            await LadderRunner(store, executor, FAST, 1).run("crash", bots)
            return dict(executor.lanes.relaunches)
        finally:
            await executor.close()
            await store.close()

    relaunches = asyncio.run(main())
    assert relaunches == {"crasher": 2}
    with Store(db) as store:
        replays = [store.replay("crash", m.index) for m in store.matches("crash")]
    crasher_matches = 0
    for replay in replays:
        assert replay is not None
        seats = replay["seat_names"]
        faulted = {seats[f["seat"]] for f in replay["faults"]}
        assert faulted <= {"crasher"}, replay["faults"]  # the honest seats: no fault
        if "crasher" in seats:
            crasher_matches += 1
            assert faulted == {"crasher"}
            assert {f["kind"] for f in replay["faults"]} <= {"crash", "disconnect"}
    assert crasher_matches == 9
    assert processes_in(runs) == []
