"""Snapshots of bot directories: a version registered from a directory (`arena bot update NAME
--dir DIR`) runs from a copy kept beside the database (for arena.db, arena.db-bots/NAME/N/: one
folder per database file, as its -wal and -shm files), so later edits of DIR do not change it.
The copy refuses what would make it unsafe or unbounded: symbolic links that lead out of DIR,
files that are not regular files, files or totals over the limits (the checks of uploaded bots,
arena.submissions.archive, with links inside DIR allowed)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from arena.submissions.archive import Limits, SubmissionRefused, check_tree

from .errors import RegistryError

SNAPSHOT_SUFFIX = "-bots"  # the database file's name and this: the folder of its snapshots
MAX_FILE_BYTES = 64 << 20  # one file of a bot directory
MAX_TOTAL_BYTES = 256 << 20  # a whole bot directory
MAX_FILES = 10_000
SNAPSHOT_LIMITS = Limits(
    unpacked_bytes=MAX_TOTAL_BYTES,
    files=MAX_FILES,
    file_bytes=MAX_FILE_BYTES,
    depth=256,  # a directory on this machine: only its size matters
    path_chars=4096,
)


class BadSnapshot(RegistryError):
    """A bot directory that cannot be snapshotted (what is wrong with it is said)."""


def snapshot_root(db_path: str | os.PathLike[str]) -> Path:
    db = Path(db_path).resolve()
    return db.parent / f"{db.name}{SNAPSHOT_SUFFIX}"


def snapshot_dir(db_path: str | os.PathLike[str], family: str, version: int) -> Path:
    return snapshot_root(db_path) / family / str(version)


def _check_tree(source: Path) -> None:
    """Refuse, before anything is copied, what the copy would not keep safe and small: the
    checks an uploaded bot gets (arena.submissions.archive), links inside the directory
    allowed."""
    try:
        check_tree(source, SNAPSHOT_LIMITS, links_inside=True)
    except SubmissionRefused as exc:
        raise BadSnapshot(str(exc)) from None


def copy_to_staging(source: str | os.PathLike[str], root: Path) -> Path:
    """Copy the bot directory `source` into a new staging folder under `root` and return it
    (the caller moves it into place, or removes it). Symbolic links inside the directory are
    copied as the files they lead to."""
    src = Path(source).resolve()
    if not src.is_dir():
        raise BadSnapshot(f"bot directory {source} does not exist or is not a directory")
    _check_tree(src)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    try:
        shutil.copytree(src, staging / "bot", symlinks=False)
    except OSError as exc:  # shutil.Error too: a file it may not read, say
        shutil.rmtree(staging, ignore_errors=True)
        raise BadSnapshot(f"cannot copy bot directory {src}: {exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging / "bot"


def discard_staging(copy: Path) -> None:
    discard(copy.parent)


def discard(path: Path) -> None:
    """Remove a snapshot (or a staging folder) that no version uses."""
    shutil.rmtree(path, ignore_errors=True)


def is_snapshot_version(directory: Path) -> bool:
    """Whether `directory` is a version's snapshot, NAME/N in a database's snapshots folder."""
    return directory.name.isdigit() and directory.parent.parent.name.endswith(SNAPSHOT_SUFFIX)


def is_snapshot(db_path: str | os.PathLike[str], directory: str) -> bool:
    """Whether a bot's directory is a version's snapshot kept beside this database."""
    return Path(directory).is_relative_to(snapshot_root(db_path))
