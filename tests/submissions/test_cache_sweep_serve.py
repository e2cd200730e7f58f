"""The server's own cache of installed environments and builds (arena.referee.build) is swept as
`arena serve` starts, not only when a new entry makes it full: entries no version uses (their
version removed while the server was stopped, or never recorded), entries a stopped server left
half made, and records whose entry is gone are removed; the entries a version uses are kept. A
cache given with --build-cache (shared by several servers) is left alone."""

from __future__ import annotations

import json
from pathlib import Path

from arena.referee.build import PART
from arena.runtimes import Preparation, write_preparation
from arena.store.snapshots import snapshot_root
from tests.service.serving import Server, wait_until


def entry(cache: Path, kind: str, key: str, record: bool = True) -> Path:
    """A cache entry as a preparation leaves it: its folder, and its record beside it."""
    folder = cache / kind / key
    folder.mkdir(parents=True)
    (folder / "bot").write_bytes(b"\0" * 4096)
    if record:
        prepared = Preparation(True, (), folder, (), (f"{kind}/{key}",))
        folder.with_name(f"{key}.json").write_text(
            json.dumps({**prepared.to_json(), "bytes": 4096})
        )
    return folder


def version(records: Path, bot: str, n: int, uses: str) -> Path:
    """A version of `bot` in the bot store whose recorded preparation uses the entry `uses`."""
    folder = records / bot / str(n)
    folder.mkdir(parents=True)
    write_preparation(folder, Preparation(True, (), None, (), (uses,)))
    return folder


def test_unused_cache_entries_are_swept_when_the_server_starts(tmp_path):
    db = tmp_path / "arena.db"
    records = snapshot_root(db)
    cache = records / ".runtimes"
    used = entry(cache, "builds", "a" * 32)
    version(records, "mine", 1, "builds/" + "a" * 32)
    used_env = entry(cache, "envs", "b" * 32)
    version(records, "other", 2, "envs/" + "b" * 32)
    unused = entry(cache, "builds", "c" * 32)  # no version names it
    removed = entry(cache, "envs", "d" * 32)  # its version's folder is gone (bot removed)
    gone = version(records, "gone", 1, "envs/" + "d" * 32)
    gone.rmdir()
    unrecorded = entry(cache, "builds", "e" * 32, record=False)  # its maker stopped first
    half = entry(cache, "builds", f"{PART}{'f' * 32}-0a1b2c3d", record=False)
    orphan = cache / "envs" / f"{'0' * 32}.json"  # a record whose folder was removed
    orphan.write_text(json.dumps({"ok": True, "steps": [], "uses": [], "bytes": 1 << 30}))
    # A shared cache (--build-cache) with the same unused entries: left as it is.
    shared = tmp_path / "shared"
    shared_unused = entry(shared, "builds", "c" * 32)
    shared_half = entry(shared, "builds", f"{PART}{'f' * 32}-0a1b2c3d", record=False)

    server = Server(tmp_path, db)
    try:
        wait_until(server.up, "the web server", server=server)  # swept before it serves
    finally:
        assert server.stop() == 0, server.log_tail()
    assert used.is_dir() and used.with_name(used.name + ".json").is_file()
    assert used_env.is_dir() and used_env.with_name(used_env.name + ".json").is_file()
    for path in (unused, removed, unrecorded, half):
        assert not path.exists(), path
        assert not path.with_name(path.name + ".json").exists(), path
    assert not orphan.exists()
    assert sorted(p.name for p in cache.glob("*/*")) == sorted(
        [used.name, used.name + ".json", used_env.name, used_env.name + ".json"]
    )
    assert "removed 4 unused installed environments and builds" in server.log.read_text()

    other = Server(tmp_path, db, extra=["--build-cache", str(shared)])
    try:
        wait_until(other.up, "the web server", server=other)
    finally:
        assert other.stop() == 0, other.log_tail()
    assert shared_unused.is_dir() and shared_half.is_dir()
