"""The log excerpts kept for a faulted launched bot's owner (the private fault_logs table): written
with the match's faults, cleaned and bounded, and added to databases of the previous schema."""

from __future__ import annotations

import dataclasses
import pickle
import sqlite3
from pathlib import Path

from arena.results import CRASH, TIMEOUT, Fault
from arena.store import FAULT_LOG_BYTES, SCHEMA_VERSION, Store, log_excerpt
from arena.store.browse import BrowseQueries
from tests.store.helpers import as_before, make_result, new_store

ROOT = Path(__file__).resolve().parents[2]
RANDOM = "python example_bots/random_bot.py"
BALLOON = {"game": "balloon", "num_players": 3, "options": {}}


def _excerpts(path) -> dict[tuple[int, int], str]:
    con = sqlite3.connect(path)
    try:
        return {
            (idx, seat): text
            for idx, seat, text in con.execute(
                "SELECT m.idx, g.seat, g.excerpt FROM fault_logs g JOIN matches m "
                "ON m.id = g.match_id"
            )
        }
    finally:
        con.close()


def _ladder(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.add_bot(name, RANDOM, cwd=ROOT)
    store.create_ladder("l", "balloon", 3, ["a", "b", "c"], seed=1)


def test_a_faulted_seats_excerpt_is_written_with_its_faults_cleaned_and_bounded(tmp_path):
    store = new_store(tmp_path)
    _ladder(store)
    first, second = store.matches("l")[:2]
    noisy = (
        "".join(f"line {i} of what the bot said\n" for i in range(400))
        + "\x1b[31mTraceback\x1b[0m (most recent call last):\r\n"
        + "\x1b]0;a title\x07  File bot.py\x00\x07\x08, line 3\n"
        + "IndexError: list index out of range\u202e\n"
    )
    result = make_result(first, BALLOON, (3, 2, 1), (Fault(1, CRASH, 4, 2.0, "exited"),))
    # Seat 0 did not fault: its excerpt is not kept (the executor sends faulted seats only, and
    # the store keeps only those).
    store.record_result(
        "l", first.index, dataclasses.replace(result, log_excerpts={1: noisy, 0: "x"})
    )
    plain = make_result(second, BALLOON, (1, 2, 3), (Fault(2, TIMEOUT, 1, 900.0, "late"),))
    store.record_result("l", second.index, plain)  # a remote bot's fault: no excerpt
    kept = _excerpts(store.path)
    assert set(kept) == {(first.index, 1)}
    text = kept[(first.index, 1)]
    assert len(text.encode()) <= FAULT_LOG_BYTES
    assert text.endswith(
        "Traceback (most recent call last):\n  File bot.py, line 3\n"
        "IndexError: list index out of range\n"
    )
    assert not any(ord(c) < 32 and c not in "\n\t" for c in text) and "\u202e" not in text
    with Store(store.path, readonly=True) as reader:
        q = BrowseQueries(reader)
        assert q.bot_fault_logs(first.seats[1]) == {("l", first.index, 1): text}
        assert q.bot_fault_logs(first.seats[0]) == {}  # it did not fault
        assert q.bot_fault_logs(second.seats[2]) == {}  # its fault left no excerpt


def test_the_excerpt_keeps_the_end_and_cuts_between_characters():
    assert log_excerpt("a\tb\r\nc\rd\x1b[1;32me\x1b(Bf\x7f") == "a\tb\nc\nde" + "f"
    long = "é" * FAULT_LOG_BYTES + "END"  # two bytes each: the cut may fall inside one
    kept = log_excerpt(long)
    assert kept.endswith("END") and set(kept[:-3]) == {"é"}
    assert len(kept.encode()) <= FAULT_LOG_BYTES and len(kept.encode()) >= FAULT_LOG_BYTES - 1


def test_a_database_of_the_previous_schema_gets_the_table_and_keeps_its_matches(tmp_path):
    store = new_store(tmp_path)
    _ladder(store)
    store.close()
    # The file as the Arena before fault logs left it: its ladder and bots, no fault_logs table
    # (nor what later migrations made).
    before = as_before(
        store.path,
        "0005_fault_logs",
        "DROP TABLE fault_logs; DROP TABLE secrets; DROP TABLE service_settings; "
        "DROP INDEX submissions_by_time; DROP TABLE match_logs; DROP TABLE margin_models; "
        "DROP TABLE scrimmage_matches; DROP TABLE scrimmages;",
    )
    # A reader (which cannot migrate) finds no excerpts, and no error.
    with Store(store.path, readonly=True) as reader:
        assert reader.schema_version() == before
        assert BrowseQueries(reader).bot_fault_logs("a") == {}
    with Store(store.path) as writer:
        assert writer.schema_version() == SCHEMA_VERSION
        match = writer.matches("l")[0]
        result = make_result(match, BALLOON, (1, 2, 3), (Fault(0, CRASH, 2, 1.0, "exited"),))
        writer.record_result(
            "l", match.index, dataclasses.replace(result, log_excerpts={0: "bye\n"})
        )
        assert writer.get_match("l", match.index).status == "completed"
    assert _excerpts(store.path) == {(match.index, 0): "bye\n"}


def test_the_executors_attach_the_faulted_launched_seats_logs_to_the_result(tmp_path):
    """What LocalExecutor and the Ray executor's NodeReferee do as a match ends; the result,
    excerpts included, is what a Ray node sends back to the driver (pickled)."""
    from arena.ladder.local import with_log_excerpts

    class Launched:
        def __init__(self, text: str):
            self.text = text

        def log_tail(self, limit: int) -> str:
            assert limit >= FAULT_LOG_BYTES
            return self.text

    store = new_store(tmp_path)
    _ladder(store)
    match = store.matches("l")[0]
    faults = (Fault(0, CRASH, 2, 1.0, "exited"), Fault(2, TIMEOUT, 3, 900.0, "late"))
    result = make_result(match, BALLOON, (1, 2, 3), faults)
    bots = {match.seats[0]: Launched("zero\n"), match.seats[1]: Launched("one\n")}  # 2: remote
    shipped = pickle.loads(pickle.dumps(with_log_excerpts(result, bots)))  # type: ignore[arg-type]
    assert shipped.log_excerpts == {0: "zero\n"}
    assert with_log_excerpts(dataclasses.replace(result, faults=()), bots).log_excerpts == {}
