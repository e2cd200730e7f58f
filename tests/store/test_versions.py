"""Bot versions (docs/bots.md#versions): the migration of existing databases, `arena bot update`
with a command and with a snapshotted directory, how NAME and NAME@N resolve, what is refused,
`arena bot list/show`, and ladders that rate two versions of a bot apart."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.store import (
    APPLICATION_ID,
    InvalidBotCommand,
    RegistryError,
    Store,
    UnknownBot,
    playing_versions,
)
from arena.store.schema import _MIGRATION_STEPS
from arena.store.snapshots import MAX_FILE_BYTES, BadSnapshot
from tests.cli import ROOT
from tests.store.helpers import RANDOM, new_store
from tests.support.ladders import arena


def cli(*args: str, ok: bool = True):
    result = CliRunner().invoke(main, list(args))
    if ok:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    return result


def bot_dir(path: Path, marker: str = "one") -> Path:
    """A bot directory: the random bot and a manifest, and a data file saying `marker`."""
    path.mkdir(parents=True)
    shutil.copy(ROOT / "example_bots" / "random_bot.py", path / "bot.py")
    (path / "arena-bot.toml").write_text('command = "python bot.py"\n')
    (path / "data.txt").write_text(marker)
    return path


# ---------------------------------------------------------------------------- migration


def test_a_database_of_schema_2_gets_versions_and_its_bots_become_version_1(tmp_path):
    import sqlite_utils

    path = tmp_path / "old.db"
    old = sqlite_utils.Database(path)
    migrations = sqlite_utils.Migrations("arena")
    for name, step in _MIGRATION_STEPS[:2]:  # the schema as Arena wrote it before versions
        migrations(name=name)(step)
    migrations.apply(old)
    old.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    old.execute(
        "INSERT INTO bots (name, command, directory, remote, created) "
        "VALUES ('heur', 'python bot.py', '/srv/heur', 0, 1.0), "
        "('far', NULL, NULL, 1, 2.0)"
    )
    old.conn.commit()
    old.close()
    # A reader cannot migrate: it sees the bots as the migration will make them, and changes
    # nothing.
    with Store(path, readonly=True) as reader:
        assert reader.schema_version() == 2
        assert [(b.name, b.family, b.version) for b in reader.list_bots()] == [
            ("far", "far", 1),
            ("heur", "heur", 1),
        ]
        assert reader.resolve_bot("heur@1").command == "python bot.py"
        # Nor has it owner keys: no key is the owner's, and asking is no error.
        assert not reader.owner_key_matches("heur", "any key")
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2
    with Store(path) as store:
        assert store.schema_version() == len(_MIGRATION_STEPS)  # every later migration too
        heur = store.get_bot("heur")
        assert (heur.family, heur.version, heur.note, heur.command) == (
            "heur",
            1,
            None,
            "python bot.py",
        )
        assert store.resolve_bot("far@1").name == "far"
        assert [b.name for b in store.versions("heur")] == ["heur"]
    con = sqlite3.connect(path)
    applied = [r[0] for r in con.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    assert applied == [name for name, _ in _MIGRATION_STEPS]
    con.close()


# ------------------------------------------------------------------------------- update


def test_update_with_a_command_makes_version_2_with_its_own_token(tmp_path):
    store = new_store(tmp_path)
    first = store.add_bot("heur", RANDOM)
    bot, token = store.update_bot("heur", RANDOM + " --seed 1", note="seeded")
    assert (bot.name, bot.family, bot.version, bot.note) == ("heur@2", "heur", 2, "seeded")
    assert bot.command == RANDOM + " --seed 1" and bot.directory == str(Path.cwd().resolve())
    assert token != first
    assert store.bot_for_token(token).name == "heur@2"
    assert store.bot_for_token(first).name == "heur"
    third, _ = store.update_bot("heur", RANDOM)
    assert third.name == "heur@3"
    assert [b.version for b in store.versions("heur")] == [1, 2, 3]


def test_update_with_a_directory_runs_from_a_snapshot_that_later_edits_leave_alone(tmp_path):
    db = tmp_path / "db" / "arena.db"
    db.parent.mkdir()
    source = bot_dir(tmp_path / "src", "one")
    cli("bot", "add", "heur", "--command", RANDOM, "--db", str(db))
    out = cli(
        "bot", "update", "heur", "--dir", str(source), "--note", "from src", "--db", str(db)
    ).output
    snapshot = db.parent / "arena.db-bots" / "heur" / "2"
    assert (
        f"registered heur version 2, which plays as heur@2; its files are a copy in "
        f"{snapshot}" in out
    )
    assert "token (shown once; keep it secret): " in out
    # The source changes afterwards: the version does not.
    (source / "data.txt").write_text("two")
    (source / "arena-bot.toml").write_text('command = "python other.py"\n')
    (source / "bot.py").unlink()
    with Store(db) as store:
        bot = store.resolve_bot("heur")
        assert (bot.name, bot.command, bot.directory) == ("heur@2", "python bot.py", str(snapshot))
    assert (snapshot / "data.txt").read_text() == "one"
    assert (snapshot / "bot.py").is_file()
    assert sorted(p.name for p in snapshot.parent.iterdir()) == ["2"]  # no staging left


def test_a_link_inside_the_directory_is_copied_as_the_file_it_leads_to(tmp_path):
    store = new_store(tmp_path)
    store.add_bot("heur", RANDOM)
    source = bot_dir(tmp_path / "src")
    (source / "alias.txt").symlink_to("data.txt")
    bot, _ = store.update_bot("heur", directory=source)
    copy = Path(bot.directory) / "alias.txt"
    assert not copy.is_symlink() and copy.read_text() == "one"


def test_two_databases_in_one_folder_keep_their_snapshots_apart(tmp_path):
    dirs = []
    for db, marker in (("one.db", "one"), ("two.db", "two")):
        with Store(tmp_path / db) as store:
            store.add_bot("heur", RANDOM)
            bot, _ = store.update_bot("heur", directory=bot_dir(tmp_path / f"src-{marker}", marker))
            dirs.append(Path(bot.directory))
    assert dirs == [tmp_path / f"{db}-bots" / "heur" / "2" for db in ("one.db", "two.db")]
    assert [(d / "data.txt").read_text() for d in dirs] == ["one", "two"]


# ---------------------------------------------------------------------------- resolving


def test_names_resolve_to_versions_and_say_what_exists_when_they_do_not(tmp_path):
    store = new_store(tmp_path)
    store.add_bot("heur", RANDOM)
    store.update_bot("heur", RANDOM)
    assert store.resolve_bot("heur").name == "heur@2"
    assert store.resolve_bot("heur@1").name == "heur"
    assert store.resolve_bot("heur@2").name == "heur@2"
    with pytest.raises(UnknownBot, match=r"^bot 'heur' has versions 1, 2; no version 5$"):
        store.resolve_bot("heur@5")
    for bad in ("heur@0", "heur@x", "heur@", "@2"):
        with pytest.raises(
            UnknownBot, match="name a bot as NAME .* or one of its versions as NAME@N"
        ):
            store.resolve_bot(bad)
    with pytest.raises(UnknownBot, match="there is no bot called 'nobody'; see arena bot list"):
        store.resolve_bot("nobody@1")
    # Removing the latest version rolls the bot back: NAME is the latest left.
    store.remove_bot("heur@2")
    assert store.resolve_bot("heur").name == "heur"
    with pytest.raises(UnknownBot, match="version 2 of bot 'heur' was removed"):
        store.resolve_bot("heur@2")
    store.update_bot("heur", RANDOM)  # numbers are never reused
    assert store.resolve_bot("heur").name == "heur@3"
    # NAME removes every version.
    store.remove_bot("heur")
    assert [b.removed is not None for b in store.versions("heur")] == [True, True, True]
    with pytest.raises(UnknownBot, match="bot 'heur' was removed"):
        store.resolve_bot("heur")


def test_serve_plays_the_latest_version_or_the_one_its_members_name(tmp_path):
    store = new_store(tmp_path)
    for name in ("a", "b"):
        store.add_bot(name, RANDOM)
    store.update_bot("a", RANDOM)
    bots = store.list_bots()
    assert [b.name for b in playing_versions(bots, None)] == ["a@2", "b"]
    assert [b.name for b in playing_versions(bots, {"a@1", "b", "ghost", "b@7"})] == ["a", "b"]
    assert [b.name for b in playing_versions(bots, {"a"})] == ["a@2"]


# ---------------------------------------------------------------------------- refusals


def test_what_cannot_be_updated_is_refused_saying_why(tmp_path):
    store = new_store(tmp_path)
    store.add_bot("far", remote=True)
    store.add_bot("heur", RANDOM)
    with pytest.raises(RegistryError, match="'far' is remote: it runs on its author's machine"):
        store.update_bot("far", RANDOM)
    with pytest.raises(UnknownBot, match="no bot called 'ghost' to update; register it first"):
        store.update_bot("ghost", RANDOM)
    with pytest.raises(RegistryError, match="'heur@2' names a version; update the bot, 'heur'"):
        store.update_bot("heur@2", RANDOM)
    with pytest.raises(RegistryError, match="note is at most 500 characters, not 501"):
        store.update_bot("heur", RANDOM, note="x" * 501)
    with pytest.raises(InvalidBotCommand, match="does not exist"):
        store.update_bot("heur", directory=tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidBotCommand, match="has no arena-bot.toml"):
        store.update_bot("heur", directory=empty)
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    linked = bot_dir(tmp_path / "linked")
    (linked / "leak.txt").symlink_to(outside)
    with pytest.raises(
        BadSnapshot, match="leak.txt is a symbolic link to .*secret.txt, outside the bot directory"
    ):
        store.update_bot("heur", directory=linked)
    big = bot_dir(tmp_path / "big")
    with open(big / "weights.bin", "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(
        BadSnapshot, match="weights.bin is 64 MB; a file of a bot version is at most 64 MB"
    ):
        store.update_bot("heur", directory=big)
    store.remove_bot("heur")
    with pytest.raises(
        RegistryError, match="'heur' was removed; a removed bot gets no new versions"
    ):
        store.update_bot("heur", RANDOM)
    assert [b.name for b in store.versions("heur")] == ["heur"]  # nothing was added
    assert not any((tmp_path / "arena.db-bots").rglob("*.toml"))  # no snapshot left behind


def test_the_cli_refuses_with_a_message_and_no_traceback(tmp_path):
    db = str(tmp_path / "arena.db")
    cli("bot", "add", "far", "--remote", "--db", db)
    assert (
        "give exactly one of --command or --dir"
        in cli("bot", "update", "far", "--db", db, ok=False).output
    )
    assert (
        "remote: it runs on its author's machine"
        in cli("bot", "update", "far", "--command", RANDOM, "--db", db, ok=False).output
    )
    assert (
        "bot 'far' has versions 1; no version 3"
        in cli("bot", "suspend", "far@3", "--reason", "x", "--db", db, ok=False).output
    )
    assert (
        "there is no bot called 'ghost'" in cli("bot", "show", "ghost", "--db", db, ok=False).output
    )


# ------------------------------------------------------------------------- list and show


def test_list_shows_each_bot_once_and_show_lists_its_versions(tmp_path):
    db = str(tmp_path / "arena.db")
    cli("bot", "add", "heur", "--command", RANDOM, "--db", db)
    cli("bot", "add", "rand", "--command", RANDOM, "--db", db)
    cli("bot", "update", "heur", "--command", RANDOM + " --seed 2", "--note", "seeded", "--db", db)
    assert (
        cli("bot", "suspend", "heur", "--reason", "too slow", "--db", db).output
        == "suspended heur@2: too slow\n"
    )
    lines = cli("bot", "list", "--db", db).output.splitlines()
    assert lines[0].split()[:4] == ["heur", "v2", "(2", "versions)"]
    assert lines[0].endswith("(suspended: too slow)")
    assert lines[1].split()[:4] == ["rand", "v1", "(1", "version)"]
    every = cli("bot", "list", "--versions", "--db", db).output.splitlines()
    assert [line.split()[0] for line in every] == ["heur", "heur@2", "rand"]
    shown = cli("bot", "show", "heur", "--db", db).output
    assert "bot heur: 2 version(s)" in shown
    assert "version 2  heur@2" in shown and "suspended: too slow" in shown
    assert "note: seeded" in shown and "in no ladder yet" in shown
    doc = json.loads(cli("bot", "show", "heur", "--json", "--db", db).output)
    assert doc["bot"] == "heur"
    assert [
        (v["version"], v["name"], v["note"], v["suspended"], v["snapshot"]) for v in doc["versions"]
    ] == [(1, "heur", None, False, False), (2, "heur@2", "seeded", True, False)]
    one = json.loads(cli("bot", "show", "heur@1", "--json", "--db", db).output)
    assert [v["name"] for v in one["versions"]] == ["heur"]
    assert cli("bot", "reinstate", "heur", "--db", db).output == "reinstated heur@2\n"
    assert cli("bot", "rotate-token", "heur@1", "--db", db).output.startswith(
        "new token for heur (shown once): "
    )


# ------------------------------------------------------------------------------ ladders


def test_ladders_naming_version_1_and_the_latest_rate_each_version_apart(tmp_path):
    db = tmp_path / "arena.db"
    run = [
        "--game",
        "balloon",
        "-k",
        "2",
        "--seed",
        "5",
        "--db",
        str(db),
        "--run-dir",
        str(tmp_path / "runs"),
        "--no-progress",
        "-j",
        "2",
        "--move-ms",
        "5000",
    ]
    arena("bot", "add", "a", "--command", RANDOM, "--db", str(db))
    arena("bot", "add", "b", "--command", RANDOM, "--db", str(db))
    arena("bot", "update", "a", "--dir", str(bot_dir(tmp_path / "a2")), "--db", str(db))
    arena("ladder", "run", "old", "--bots", "a@1,b", *run)
    arena("ladder", "run", "new", "--bots", "a,b", *run)
    standings = {
        name: {
            s["bot"]: s
            for s in json.loads(arena("rankings", name, "--json", "--db", str(db)).stdout)[
                "standings"
            ]
        }
        for name in ("old", "new")
    }
    assert set(standings["old"]) == {"a", "b"} and set(standings["new"]) == {"a@2", "b"}
    assert all(
        s["matches"] > 0 and s["faults"] == 0
        for table in standings.values()
        for s in table.values()
    )
    doc = json.loads(arena("bot", "show", "a", "--json", "--db", str(db)).stdout)
    ratings = {v["name"]: {r["ladder"]: r for r in v["ratings"]} for v in doc["versions"]}
    assert set(ratings["a"]) == {"old"} and set(ratings["a@2"]) == {"new"}
    assert ratings["a@2"]["new"]["mu"] == standings["new"]["a@2"]["mu"]
    assert doc["versions"][1]["snapshot"] is True
    # A third version leaves the ladders as they were: the same command resumes each.
    arena("bot", "update", "a", "--command", RANDOM, "--db", str(db))
    arena("ladder", "run", "new", "--bots", "a,b", *run)
    again = json.loads(arena("rankings", "new", "--json", "--db", str(db)).stdout)
    assert {s["bot"] for s in again["standings"]} == {"a@2", "b"}
    assert os.path.isdir(tmp_path / "arena.db-bots" / "a" / "2")
