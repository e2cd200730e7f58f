"""The bots' match logs (the private match_logs table, issue 33 item 1): what a launched bot wrote
during a match, split by its moves, kept cleaned and capped with its result, read back for its
owner, and rotated by age and size as the organiser sets."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

from arena.results import BotLog
from arena.store import MATCH_LOG_BYTES, Store, match_log
from arena.store.browse import BrowseQueries
from tests.store.helpers import make_result, new_store

ROOT = Path(__file__).resolve().parents[2]
RANDOM = "python example_bots/random_bot.py"
BALLOON = {"game": "balloon", "num_players": 3, "options": {}}


def _ladder(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.add_bot(name, RANDOM, cwd=ROOT)
    store.create_ladder("l", "balloon", 3, ["a", "b", "c"], seed=1)


def test_each_part_is_cleaned_and_the_whole_capped_from_its_end():
    log = BotLog(
        moves=((0, "\x1b[33mhello\x1b[0m\r\n"), (3, ""), (6, "move 6\x00\u202e\n")),
        tail="bye\n",
    )
    assert match_log(log) == {
        "moves": [[0, "hello\n"], [6, "move 6\n"]],  # a move it wrote nothing for: left out
        "tail": "bye\n",
        "dropped": 0,
    }
    big = BotLog(moves=((0, "a" * 100), (1, "b" * 100), (2, "c" * 100)), tail="end")
    kept = match_log(big, limit=153)
    # The newest kept whole, the oldest dropped first, cut where the room ends.
    assert kept == {"moves": [[1, "b" * 50], [2, "c" * 100]], "tail": "end", "dropped": 150}
    wide = match_log(BotLog(moves=((0, "é" * 10),)), limit=5)  # never half a character
    assert wide["moves"] == [[0, "é" * 2]] and wide["dropped"] == 16
    assert len(json.dumps(match_log(BotLog(tail="x" * (2 * MATCH_LOG_BYTES))))) < (
        MATCH_LOG_BYTES + 100
    )


def test_a_result_keeps_its_launched_seats_logs_for_the_owner_to_read(tmp_path):
    store = new_store(tmp_path)
    _ladder(store)
    first = store.matches("l")[0]
    result = make_result(first, BALLOON, (3, 2, 1))
    logs = {1: BotLog(moves=((1, "thinking\n"),), tail="done\n"), 2: BotLog()}
    store.record_result("l", first.index, dataclasses.replace(result, bot_logs=logs))
    with Store(store.path, readonly=True) as reader:
        kept = BrowseQueries(reader).match_logs("l", first.index)
    assert set(kept) == {1, 2}  # seat 0's bot was not launched (no log)
    assert kept[1].bot == first.seats[1]
    assert kept[1].log == {"moves": [[1, "thinking\n"]], "tail": "done\n", "dropped": 0}
    assert kept[2].log == {"moves": [], "tail": "", "dropped": 0}


def test_the_rotation_removes_the_oldest_by_age_then_by_size(tmp_path):
    store = new_store(tmp_path)
    _ladder(store)
    matches = store.matches("l")[:3]
    for m in matches:
        text = BotLog(tail="x" * 400_000)
        result = make_result(m, BALLOON, (1, 2, 3))
        store.record_result("l", m.index, dataclasses.replace(result, bot_logs={0: text}))
    con = sqlite3.connect(store.path)
    with con:  # the first match's log is ten days old, the second's two
        for m, days in zip(matches, (10, 2, 0)):
            con.execute(
                "UPDATE match_logs SET created = created - ? WHERE match_id = "
                "(SELECT id FROM matches WHERE idx = ?)",
                (days * 86400, m.index),
            )
    con.close()

    def kept() -> list[int]:
        with Store(store.path, readonly=True) as reader:
            q = BrowseQueries(reader)
            return [m.index for m in matches if q.match_logs("l", m.index)]

    assert store.prune_match_logs() == 0 and kept() == [m.index for m in matches]
    assert store.prune_match_logs(max_age_days=7) == 1
    assert kept() == [matches[1].index, matches[2].index]
    # 0.1 MB holds one log (capped at 64 KiB): the newest stays.
    assert store.prune_match_logs(max_mb=0.1) == 1
    assert kept() == [matches[2].index]
    assert store.prune_match_logs(max_age_days=7, max_mb=0.1) == 0
    # The matches themselves stay: only their logs go.
    assert [m.status for m in store.matches("l")[:3]] == ["completed"] * 3
