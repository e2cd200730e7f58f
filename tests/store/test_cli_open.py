"""The command line's one way to the database (arena/cli/common.py): the --db option every
command shares, and open_store, on bad input: a missing directory, a missing file opened for
reading, an unwritable database opened for writing, a refusal inside the block."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.cli.common import open_store
from arena.store import Store, StoreError
from tests.cli import ROOT
from tests.store.helpers import digest
from tests.support.unprivileged import unprivileged

# Every command with --db, with the arguments it needs to get as far as opening the database.
COMMANDS_WITH_DB = [
    ["rankings"],
    ["ladder", "list"],
    ["bot", "list"],
    ["bot", "add", "x", "--remote"],
    ["bot", "remove", "x"],
    ["bot", "rotate-token", "x"],
    ["bot", "suspend", "x", "--reason", "r"],
    ["bot", "reinstate", "x"],
    ["web"],
    ["report", "--out", "{tmp}/site"],
    ["ladder", "run", "l", "--game", "balloon", "-k", "2", "--bots", "a,b", "--no-sandbox"],
    ["serve", "--ladder", "l=balloon:2", "--no-sandbox"],
]


@pytest.mark.parametrize("args", COMMANDS_WITH_DB, ids=" ".join)
def test_every_command_refuses_a_database_in_a_missing_directory_the_same_way(tmp_path, args):
    db = tmp_path / "nope" / "arena.db"
    args = [a.format(tmp=tmp_path) for a in args]
    result = CliRunner().invoke(main, [*args, "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert (
        f"cannot use database {db}: directory {db.parent} does not exist; create it "
        f"(mkdir -p {db.parent}), or choose another path with --db"
    ) in result.output
    assert not db.parent.exists()


def test_reading_a_missing_database_says_so_and_creates_nothing(tmp_path):
    db = tmp_path / "arena.db"
    with pytest.raises(click.ClickException) as err:
        with open_store(db):
            pytest.fail("a missing database was opened")
    assert f"there is no database at {db}" in err.value.message
    assert "arena bot add" in err.value.message  # what to do
    assert list(tmp_path.iterdir()) == []


def test_writing_creates_the_database_and_reading_then_finds_it(tmp_path):
    db = tmp_path / "arena.db"
    with open_store(db, write=True) as store:
        store.add_bot("owner", remote=True)
    with open_store(db) as store:
        assert [b.name for b in store.list_bots()] == ["owner"]
        assert store.readonly


def test_a_refusal_inside_the_block_is_a_cli_error_and_the_store_is_closed(tmp_path):
    db = tmp_path / "arena.db"
    Store(db).close()
    with pytest.raises(click.ClickException) as err:
        with open_store(db, write=True) as store:
            store.remove_bot("ghost")
    assert "ghost" in err.value.message
    with pytest.raises(StoreError, match="closed database"):  # closed: refuses any use
        store.list_bots()


def test_an_unwritable_database_is_refused_for_writing_and_read_as_it_is(readonly_copy):
    db, _ = readonly_copy
    before = digest(db)
    script = (
        "import sys, click\n"
        "from pathlib import Path\n"
        "from arena.cli.common import open_store\n"
        "db = Path(sys.argv[1])\n"
        "with open_store(db) as store:\n"
        "    print('read', len(store.list_bots()))\n"
        "try:\n"
        "    with open_store(db, write=True) as store:\n"
        "        store.add_bot('x', remote=True)\n"
        "except click.ClickException as err:\n"
        "    print('refused', err.message)\n"
    )
    proc = subprocess.run(
        unprivileged([])[:-3] + [sys.executable, "-c", script, str(db)],
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "read 6"
    assert lines[1].startswith(f"refused database {db} is not writable"), lines
    assert "check the permissions" in lines[1]
    assert digest(db) == before
