"""Owners and submitted versions in the store: owner keys (hashed, rotated), a version's status
deciding what a ladder naming the bot plays, verdicts, rollback."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.store import DuplicateBot, RegistryError, Store, playing_versions
from arena.tokens import hash_token

ROOT = Path(__file__).resolve().parents[2]
RANDOM = f"python {ROOT / 'example_bots' / 'random_bot.py'}"  # wherever the tests run from


def test_owner_keys_are_hashed_rotated_and_apart_from_play_tokens(tmp_path):
    with Store(tmp_path / "a.db") as store:
        token = store.add_bot("b", RANDOM)
        key = store.new_owner_key("b")
        assert key.startswith("arena_owner_") and key != token
        stored = store.db.execute("SELECT key_hash FROM bot_owners").fetchone()[0]
        assert stored == hash_token(key) and key not in stored
        assert store.owner_key_matches("b", key)
        assert not store.owner_key_matches("b", token)  # a play token is no owner key
        with pytest.raises(DuplicateBot, match="rotate-owner-key"):
            store.new_owner_key("b")
        new = store.new_owner_key("b", rotate=True)
        assert store.owner_key_matches("b", new) and not store.owner_key_matches("b", key)
        with pytest.raises(RegistryError, match="no owner key to rotate"):
            store.new_owner_key("other", rotate=True)
        # A bot with an owner key and no version yet: its name is taken.
        store.new_owner_key("fresh")
        with pytest.raises(DuplicateBot, match="awaits its first upload"):
            store.add_bot("fresh", RANDOM)


def test_status_decides_what_plays_and_rollback_brings_a_passed_version_back(tmp_path):
    with Store(tmp_path / "a.db") as store:
        store.add_bot("b", RANDOM)  # version 1, made before submissions: active
        v2, _ = store.update_bot("b", RANDOM, status="verifying", digest="d2")
        v3, _ = store.update_bot("b", RANDOM, status="verifying", digest="d3")

        def playing() -> list[str]:
            return [b.name for b in playing_versions(store.list_bots(), None)]

        assert playing() == ["b"]  # neither version being verified plays
        assert playing_versions(store.list_bots(), ["b@2"]) == []  # not even named
        assert store.resolve_bot("b").name == "b"
        # v3 passes first, then v2: the newest passed version plays, v2 is retired at once.
        assert store.record_verification("b@3", True, "passed", opponents=["x", "y"]) == "active"
        assert store.record_verification("b@2", True, "passed") == "retired"
        assert playing() == ["b@3"] and store.get_bot("b").status == "retired"
        v4, _ = store.update_bot("b", RANDOM, status="verifying", digest="d4")
        log = "Traceback ...\nRuntimeError: broken\n"
        assert store.record_verification("b@4", False, "failed: crash", log) == "failed"
        assert playing() == ["b@3"]
        [s4] = [s for s in store.submissions("b") if s.version == 4]
        assert (s4.passed, s4.verdict, s4.log_excerpt) == (False, "failed: crash", log)
        # Rollback: to a passed version only.
        with pytest.raises(RegistryError, match="only a version that passed"):
            store.rollback("b", 4)
        assert store.rollback("b", 1) == "b"
        assert playing() == ["b"] and store.get_bot("b@3").status == "retired"
        # An upload identical to a version the bot has is refused; to a failed one, it is not.
        with pytest.raises(DuplicateBot, match="identical to version 3"):
            store.update_bot("b", RANDOM, status="verifying", digest="d3")
        v5, _ = store.update_bot("b", RANDOM, status="verifying", digest="d4")
        assert v5.version == 5


def test_the_organisers_commands_give_rotate_and_roll_back(tmp_path):
    from click.testing import CliRunner

    from arena.cli import main

    db = str(tmp_path / "a.db")

    def arena(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(main, [*args, "--db", db])
        assert result.exit_code == code, result.output
        return result.output

    def key(output: str) -> str:
        return next(x for x in output.splitlines() if x.startswith("owner key")).split()[-1]

    added = arena("bot", "add", "b", "--command", RANDOM, "--owner")
    assert "token (shown once" in added
    first = key(added)
    assert "awaits its first upload" in arena("bot", "add", "fresh", "--owner")
    second = key(arena("bot", "rotate-owner-key", "b"))
    assert "already has an owner key" in arena("bot", "add-owner", "b", code=1)
    with Store(db, readonly=True) as store:
        assert store.owner_key_matches("b", second) and not store.owner_key_matches("b", first)
    with Store(db) as store:
        store.update_bot("b", RANDOM, status="verifying", digest="d2")
        store.record_verification("b@2", False, "failed: crash", "log")
    assert "only a version that passed" in arena("bot", "rollback", "b", "2", code=1)
    assert "b now plays as b (version 1)" in arena("bot", "rollback", "b", "1")
    assert "failed" in arena("bot", "show", "b")
