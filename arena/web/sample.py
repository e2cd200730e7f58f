"""Sample data for the web pages: real matches played in-process by random legal play and recorded
through the store, so their replays re-run like any referee's. Used by the web tests, the web
benchmark and anyone who wants to look at the pages without running a ladder:

    .venv/bin/python -m arena.web.sample demo.db   # then: arena web --db demo.db
"""

from __future__ import annotations

import random
import sys
from typing import Sequence

from arena.compare import plan
from arena.compare.verdict import Comparison
from arena.games import game_from_config
from arena.results import (
    CRASH,
    TIMEOUT,
    Fault,
    MatchResult,
    MoveRecord,
    demote_faulted,
)
from arena.schedule import ScheduledMatch
from arena.store import Store, StoredMatch


def random_result(
    config: dict,
    seed: int,
    seat_names: Sequence[str],
    rng: random.Random,
    *,
    fault_rate: float = 0.0,
    match_id: str = "",
    started_at: float = 0.0,
) -> MatchResult:
    """Play one match by random legal moves and return its result (a faulted seat, drawn with
    probability `fault_rate`, gets a timeout or crash fault and ranks last)."""
    game = game_from_config(config)
    state = game.new_match(seed)
    choice = rng.choice
    moves: list[MoveRecord] = []
    while not state.is_over():
        for seat in state.seats_to_act():
            action = choice(state.legal_actions(seat))
            state.apply_action(seat, action)
            moves.append(
                MoveRecord(
                    seat,
                    list(action) if isinstance(action, tuple) else action,
                    round(rng.uniform(0.2, 40.0), 3),
                )
            )
    scores = tuple(state.scores())
    faults: tuple[Fault, ...] = ()
    if fault_rate and rng.random() < fault_rate:
        seat = rng.randrange(len(seat_names))
        kind = rng.choice((TIMEOUT, CRASH))
        move = rng.randrange(len(moves)) if moves else -1
        faults = (
            Fault(
                seat,
                kind,
                move,
                1000.0 if kind == TIMEOUT else 3.0,
                "sample fault: no answer within the deadline"
                if kind == TIMEOUT
                else "sample fault: the bot process exited",
            ),
        )
    ranks = demote_faulted(scores, {f.seat for f in faults})
    return MatchResult(
        match_id=match_id,
        config=config,
        seed=seed,
        seat_names=tuple(seat_names),
        scores=scores,
        ranks=ranks,
        faults=faults,
        moves=tuple(moves),
        engine_version=game.engine_version,
        started_at=started_at,
        finished_at=started_at + 0.001 * len(moves) if started_at else 0.0,
    )


def play_ladder(
    store: Store,
    ladder: str,
    matches: Sequence[StoredMatch] | None = None,
    *,
    seed: int = 0,
    fault_rate: float = 0.05,
    batch: int = 2000,
    start_time: float = 1_700_000_000.0,
) -> int:
    """Play and record the given (default: every runnable) match of a ladder; returns how many."""
    info = store.get_ladder(ladder)
    config = info.config
    rng = random.Random(seed)
    todo = list(matches) if matches is not None else store.matches(ladder, ("pending",))
    items: list[tuple[int, MatchResult]] = []
    for m in todo:
        items.append(
            (
                m.index,
                random_result(
                    config,
                    m.seed,
                    m.seats,
                    rng,
                    fault_rate=fault_rate,
                    match_id=f"{ladder}:{m.index}",
                    started_at=start_time + m.index,
                ),
            )
        )
        if len(items) >= batch:
            store.record_results(ladder, items)
            items = []
    if items:
        store.record_results(ladder, items)
    return len(todo)


def play_comparison(
    store: Store,
    name: str,
    new: str,
    base: str,
    opponents: Sequence[str],
    *,
    deals: int,
    game: str = "balloon",
    table_size: int = 3,
    min_gain: float = 3.0,
    seed: int = 0,
) -> int:
    """A comparison as `arena compare` stores it (its ladder, its deals appended as the runner
    appends them, compare/plan.py) with `deals` deals played by random legal moves: its page
    without running bots. Its cap is those deals. Returns how many matches."""
    settings = Comparison(
        name=name,
        new=new,
        base=base,
        opponents=tuple(opponents),
        game=game,
        table_size=table_size,
        options={},
        min_gain=min_gain,
        max_matches=deals * 2 * table_size,
        seed=seed,
    )
    store.ensure_comparison(
        name,
        game,
        table_size,
        (new, base, *opponents),
        seed=seed,
        comparison=settings.definition(),
    )
    matches = [
        m
        for deal in range(deals)
        for m in plan.deal_matches(new, base, opponents, table_size, seed, deal)
    ]
    store.append_matches(
        name,
        [ScheduledMatch(m.index, m.deal, m.deal, m.rotation, m.seed, m.seats) for m in matches],
        [m.seats for m in matches],
    )
    return play_ladder(store, name, seed=seed, fault_rate=0.0)


def build_demo(path: str) -> None:
    """A small database: 6 bots on a Balloon ladder of 3 and a Boom ladder of 4, with one
    match of each left running and one bot suspended."""
    with Store(path) as store:
        bots = ["alice", "bob", "carol", "dave", "erin", "frank"]
        for b in bots:
            store.add_bot(b, remote=True)
        store.create_ladder("balloon3", "balloon", 3, bots, seed=11, rounds=1)
        store.create_ladder("boom4", "boom", 4, bots[:5], seed=12, rounds=1)
        for name in ("balloon3", "boom4"):
            pending = store.matches(name, ("pending",))
            play_ladder(store, name, pending[:-2], seed=1)
            store.start_match(name, pending[-2].index)
        store.suspend_bot(
            "frank", "crashed in 3 matches in a row; fix the bot, then ask to be reinstated"
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m arena.web.sample NEW.db")
    build_demo(sys.argv[1])
    print(f"wrote {sys.argv[1]}; look at it with: arena web --db {sys.argv[1]}")
