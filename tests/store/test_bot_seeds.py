"""Bot seeds and match ids that reveal nothing (arena.seeds): HMAC seeds from the store's private
key, opaque attempt ids, the key made for a new database and for an older one by a migration,
and never written to a replay."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from typing import NamedTuple

import pytest

from arena import replay, seeds
from arena.compare import plan
from arena.store import SCHEMA_VERSION, Store
from tests.store.helpers import add_remote_bots, as_before, make_result, new_store


def _stored_key(path) -> bytes:
    con = sqlite3.connect(path)
    try:
        row = con.execute("SELECT value FROM secrets WHERE name = 'bot_seed_key'").fetchone()
        return bytes(row[0])
    finally:
        con.close()


def test_seeds_are_fixed_by_key_match_seed_and_seat_and_fit_63_bits():
    key, other = b"k" * 32, b"j" * 32
    assert seeds.bot_seed(key, 7, 1) == seeds.bot_seed(key, 7, 1)
    assert seeds.bot_seeds(key, 7, 3) == tuple(seeds.bot_seed(key, 7, s) for s in range(3))
    got = {seeds.bot_seed(key, s, seat) for s in range(200) for seat in range(4)}
    assert len(got) == 800  # no two (seed, seat) share one
    assert all(0 <= s < 1 << 63 for s in got)
    assert max(got) >= 1 << 60  # the whole range is used, not a small corner of it
    # Another key gives other seeds for every (seed, seat).
    assert not got & {seeds.bot_seed(other, s, seat) for s in range(200) for seat in range(4)}


def test_the_old_affine_formula_no_longer_inverts():
    """What a hostile bot did (issue 28): invert (seed * 1_000_003 + seat * 7919 + 12345)
    mod 2^63. The seed it gets that way is not the match's."""
    key = seeds.new_key()
    modulus = 1 << 63
    inverse = pow(1_000_003, -1, modulus)
    for match_seed in (0, 1, 12345, 2**31 - 1):
        for seat in range(4):
            guess = ((seeds.bot_seed(key, match_seed, seat) - seat * 7919 - 12345) * inverse) % (
                modulus
            )
            assert guess != match_seed


def test_short_keys_are_refused():
    with pytest.raises(ValueError, match="16 bytes"):
        seeds.bot_seed(b"short", 1, 0)


def test_match_ids_are_random_and_opaque():
    ids = {seeds.new_match_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 16 and set(i) <= set("0123456789abcdef") for i in ids)


def test_a_new_database_has_its_own_key_kept_across_opens(tmp_path):
    with new_store(tmp_path, "a.db"):
        pass
    with new_store(tmp_path, "b.db"):
        pass
    key = _stored_key(tmp_path / "a.db")
    assert len(key) == seeds.KEY_BYTES
    assert key != _stored_key(tmp_path / "b.db")
    with new_store(tmp_path, "a.db"):
        pass
    assert _stored_key(tmp_path / "a.db") == key


def test_start_match_gives_a_new_opaque_id_each_attempt_and_the_keyed_seeds(tmp_path):
    with new_store(tmp_path) as store:
        bots = add_remote_bots(store, 3)
        store.create_ladder("l", "balloon", 3, bots, seed=5)
        first = store.start_match("l", 0)
        store.release_match("l", 0)
        again = store.start_match("l", 0)
        key = _stored_key(store.path)
    assert first.match_key != again.match_key
    for m in (first, again):
        assert m.match_key is not None and len(m.match_key) == 16
        assert set(m.match_key) <= set("0123456789abcdef")  # hex: no ladder name, no index
        assert m.bot_seeds == seeds.bot_seeds(key, m.seed, 3)
    assert first.bot_seeds == again.bot_seeds  # a retried match deals the bots the same seeds


def test_an_older_database_gets_a_key_at_its_first_writing_open(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 2)
    store.create_ladder("l", "balloon", 2, bots, seed=3)
    store.close()
    # The file as the Arena before secrets left it (nor what later migrations made).
    before = as_before(
        store.path,
        "0006_secrets",
        "DROP TABLE secrets; DROP TABLE service_settings; DROP INDEX submissions_by_time; "
        "DROP TABLE match_logs; DROP TABLE margin_models; "
        "DROP TABLE scrimmage_matches; DROP TABLE scrimmages;",
    )
    with Store(store.path, readonly=True) as reader:  # a reader cannot migrate, and need not
        assert reader.schema_version() == before
        assert [m.index for m in reader.matches("l")] == [0, 1]
    with Store(store.path) as writer:
        assert writer.schema_version() == SCHEMA_VERSION
        match = writer.start_match("l", 0)
    key = _stored_key(store.path)
    assert len(key) == seeds.KEY_BYTES
    assert match.bot_seeds == seeds.bot_seeds(key, match.seed, 2)


class _Scheduled(NamedTuple):
    index: int
    set_index: int
    round: int
    rotation: int
    seed: int


def test_compare_pairing_gives_an_opponent_the_same_seed_in_new_and_base_matches(tmp_path):
    with new_store(tmp_path) as store:
        for name in ("new", "base", "o1", "o2"):
            store.add_bot(name, remote=True)
        store.ensure_comparison(
            "cmp",
            "balloon",
            3,
            ("new", "base", "o1", "o2"),
            seed=9,
            comparison={"test": True},
        )
        matches = [
            m
            for deal in range(2)
            for m in plan.deal_matches("new", "base", ["o1", "o2"], 3, 9, deal)
        ]
        store.append_matches(
            "cmp",
            [_Scheduled(m.index, m.deal, m.deal, m.rotation, m.seed) for m in matches],
            [m.seats for m in matches],
        )
        started = {m.index: store.start_match("cmp", m.index) for m in matches}
    paired = 0
    for m in matches:
        if m.side != plan.NEW:
            continue
        twin = next(
            b
            for b in matches
            if b.side == plan.BASE and (b.deal, b.rotation) == (m.deal, m.rotation)
        )
        new_seeds, base_seeds = started[m.index].bot_seeds, started[twin.index].bot_seeds
        for seat in range(3):
            if seat != m.candidate_seat:
                assert m.seats[seat] == twin.seats[seat]
                assert new_seeds[seat] == base_seeds[seat]
                paired += 1
        # The candidate's seat also gets one seed for both versions: the same luck of its own.
        assert new_seeds[m.candidate_seat] == base_seeds[m.candidate_seat]
    assert paired == 2 * 3 * 2  # 2 deals, 3 rotations, 2 opponents each


def test_a_replay_records_the_bot_seeds_and_never_the_key(tmp_path):
    with new_store(tmp_path) as store:
        bots = add_remote_bots(store, 2)
        store.create_ladder("l", "balloon", 2, bots, seed=4)
        match = store.start_match("l", 0)
        result = make_result(match, store.get_ladder("l").config, (3, 1))
        result = dataclasses.replace(result, bot_seeds=match.bot_seeds)
        doc = replay.to_dict(result, with_views=False)
        assert doc["bot_seeds"] == list(match.bot_seeds)
        assert replay.check(json.loads(json.dumps(doc))) is not None
        key = _stored_key(store.path)
        store.record_result("l", 0, result)
        stored = store.replay("l", 0)
    assert stored is not None and stored["bot_seeds"] == list(match.bot_seeds)
    text = json.dumps(stored)
    assert key.hex() not in text and str(int.from_bytes(key, "big")) not in text
    bad = dict(doc, bot_seeds=[1])
    with pytest.raises(replay.ReplayError, match="bot_seeds"):
        replay.check(bad)
