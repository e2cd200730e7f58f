"""The bot registry: tokens kept only as hashes, validation of commands and manifests."""

from __future__ import annotations

import hashlib
import stat

import pytest

from arena import botcommand
from arena.referee.host import TokenBook
from arena.store import (
    DuplicateBot,
    InvalidBotCommand,
    InvalidBotName,
    RegistryError,
    UnknownBot,
)
from tests.store.helpers import add_remote_bots, make_result, new_store


def test_the_token_is_returned_once_and_only_its_hash_is_stored(tmp_path):
    store = new_store(tmp_path)
    token = store.add_bot("alice", remote=True)
    assert len(token) >= 40
    assert store.bot_for_token(token).name == "alice"
    assert store.bot_for_token(token + "x") is None
    assert store.bot_for_token("") is None
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert store.db.execute("SELECT token_hash FROM bots").fetchone()[0] == digest
    store.close()
    # Nowhere in the database files, not even in the WAL.
    for path in tmp_path.iterdir():
        assert token.encode() not in path.read_bytes(), path


def test_tokens_carry_their_prefix_so_none_reads_as_a_command_line_option(tmp_path):
    # A bare URL-safe token starts with "-" one time in 64; `--token TOKEN` then fails.
    store = new_store(tmp_path)
    tokens = [store.add_bot(f"bot{i}", remote=True) for i in range(100)]
    tokens += [store.rotate_token("bot0") for _ in range(100)]
    tokens += [TokenBook().issue("x") for _ in range(100)]
    assert all(t.startswith("arena_") and len(t) == 6 + 43 for t in tokens)
    assert len(set(tokens)) == 300


def test_rotate_token_retires_the_old_one(tmp_path):
    store = new_store(tmp_path)
    old = store.add_bot("alice", remote=True)
    new = store.rotate_token("alice")
    assert new != old
    assert store.bot_for_token(old) is None
    assert store.bot_for_token(new).name == "alice"
    with pytest.raises(UnknownBot, match="no bot called 'bob'"):
        store.rotate_token("bob")


def test_remove_keeps_past_results_and_frees_nothing_else(tmp_path):
    store = new_store(tmp_path)
    bots = add_remote_bots(store, 2)
    token = store.rotate_token("bot0")
    ladder = store.create_ladder("l", "balloon", 2, bots, seed=1)
    m = store.matches("l")[0]
    store.record_result("l", 0, make_result(m, ladder.config, (5, 2)))
    store.remove_bot("bot0")
    assert [b.name for b in store.list_bots()] == ["bot1"]
    assert [b.name for b in store.list_bots(include_removed=True)] == ["bot0", "bot1"]
    assert store.bot_for_token(token) is None
    assert {s.bot for s in store.rankings("l").standings} == {"bot0", "bot1"}
    assert store.get_match("l", 0).seats == m.seats
    with pytest.raises(DuplicateBot, match="removed bot"):
        store.add_bot("bot0", remote=True)
    with pytest.raises(UnknownBot):
        store.remove_bot("bot0")
    with pytest.raises(UnknownBot):
        store.create_ladder("l2", "balloon", 2, bots)


def test_duplicate_and_invalid_names(tmp_path):
    store = new_store(tmp_path)
    store.add_bot("alice", remote=True)
    with pytest.raises(DuplicateBot, match="already exists"):
        store.add_bot("alice", remote=True)
    for bad in ("", "has space", "-dash", "x" * 65, "semi;colon"):
        with pytest.raises(InvalidBotName):
            store.add_bot(bad, remote=True)
    with pytest.raises(RegistryError, match="exactly one"):
        store.add_bot("bob")
    with pytest.raises(RegistryError, match="exactly one"):
        store.add_bot("bob", command="python3 x.py", remote=True)
    assert [b.name for b in store.list_bots()] == ["alice"]


def test_commands_are_checked_before_registering(tmp_path):
    store = new_store(tmp_path, "db.sqlite")
    (tmp_path / "bot.py").write_text("print('hi')\n")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(InvalidBotCommand, match="not found on PATH") as err:
        store.add_bot("a", command="no-such-program-xyz --fast", cwd=tmp_path)
    assert isinstance(err.value.__cause__, botcommand.CommandNotFound)  # arena.botcommand's
    with pytest.raises(InvalidBotCommand, match="does not exist"):
        store.add_bot("a", command="./missing.sh", cwd=tmp_path)
    with pytest.raises(InvalidBotCommand, match="not executable"):
        store.add_bot("a", command="./run.sh", cwd=tmp_path)
    with pytest.raises(InvalidBotCommand, match="script 'nobot.py' does not exist"):
        store.add_bot("a", command="python3 -u nobot.py", cwd=tmp_path)
    with pytest.raises(InvalidBotCommand, match="quoting"):
        store.add_bot("a", command="python3 'bot.py", cwd=tmp_path)
    assert store.list_bots() == []
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    store.add_bot("a", command="./run.sh", cwd=tmp_path)
    store.add_bot("b", command="python3 -u bot.py --level 3", cwd=tmp_path)
    bot = store.get_bot("b")
    assert bot.directory == str(tmp_path.resolve())
    assert bot.argv == ["python3", "-u", "bot.py", "--level", "3"] and not bot.remote


@pytest.mark.parametrize(
    "command,operator",
    [
        ("python3 bot.py; rm -rf X", "';'"),
        ("python3 bot.py && echo done", "'&&'"),
        ("python3 bot.py | tee log", "'|'"),
        ("python3 bot.py > log", "'>'"),
        ("python3 bot.py --home $HOME", "'$HOME'"),
        ("python3 bot.py `id`", "'`id`'"),
    ],
)
def test_shell_syntax_is_refused_since_no_shell_runs_the_command(tmp_path, command, operator):
    store = new_store(tmp_path)
    (tmp_path / "bot.py").write_text("print('hi')\n")
    with pytest.raises(InvalidBotCommand, match="runs without a shell") as err:
        store.add_bot("a", command=command, cwd=tmp_path)
    assert f"shell syntax ({operator})" in str(err.value)
    # Quoted, the same characters are one argument of the bot's, as without a shell.
    store.add_bot("b", command="python3 bot.py --sep ';' --name 'a|b'", cwd=tmp_path)
    assert store.get_bot("b").argv[-3:] == [";", "--name", "a|b"]
    assert [b.name for b in store.list_bots()] == ["b"]


def test_bot_directories_need_a_good_manifest(tmp_path, monkeypatch):
    store = new_store(tmp_path)
    bot_dir = tmp_path / "mybot"
    with pytest.raises(InvalidBotCommand, match="does not exist") as err:
        store.add_bot("m", directory=str(bot_dir))
    assert isinstance(err.value.__cause__, botcommand.BadManifest)  # arena.botcommand's
    bot_dir.mkdir()
    with pytest.raises(InvalidBotCommand, match="no arena-bot.toml"):
        store.add_bot("m", directory=str(bot_dir))
    manifest = bot_dir / "arena-bot.toml"
    manifest.write_text("command = 'python3 bot.py\n")
    with pytest.raises(InvalidBotCommand, match="not valid TOML"):
        store.add_bot("m", directory=str(bot_dir))
    manifest.write_text("name = 'm'\n")
    with pytest.raises(InvalidBotCommand, match="has no command"):
        store.add_bot("m", directory=str(bot_dir))
    manifest.write_text("command = 'python3 bot.py'\n")
    with pytest.raises(InvalidBotCommand, match="bot.py' does not exist"):
        store.add_bot("m", directory=str(bot_dir))
    assert store.list_bots() == []
    (bot_dir / "bot.py").write_text("pass\n")
    other = tmp_path / "elsewhere"
    other.mkdir()
    # The manifest's command is resolved in the bot directory, not here (monkeypatch puts the
    # working directory back after the test: later tests resolve paths from it).
    monkeypatch.chdir(other)
    store.add_bot("m", directory=str(bot_dir))
    bot = store.get_bot("m")
    assert bot.command == "python3 bot.py" and bot.directory == str(bot_dir.resolve())


def test_suspension_is_visible_to_token_lookups(tmp_path):
    store = new_store(tmp_path)
    token = store.add_bot("alice", remote=True)
    store.suspend_bot("alice", "flooding the referee")
    bot = store.bot_for_token(token)
    assert bot.suspended and bot.suspended_reason == "flooding the referee"
    store.suspend_bot("alice", None)
    assert not store.bot_for_token(token).suspended


def test_a_suspension_reason_longer_than_the_limit_is_refused(tmp_path):
    from arena.store import MAX_REASON

    store = new_store(tmp_path)
    store.add_bot("alice", remote=True)
    store.suspend_bot("alice", "x" * MAX_REASON)  # at the limit: taken
    with pytest.raises(
        RegistryError, match=f"at most {MAX_REASON} characters, not {MAX_REASON + 1}"
    ):
        store.suspend_bot("alice", "y" * (MAX_REASON + 1))
    assert store.get_bot("alice").suspended_reason == "x" * MAX_REASON  # left as it was
