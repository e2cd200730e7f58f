"""Snapshots of bot directories: a version registered from a directory (`arena bot update NAME
--dir DIR`) runs from a copy kept beside the database (for arena.db, arena.db-bots/NAME/N/: one
folder per database file, as its -wal and -shm files), so later edits of DIR do not change it.
The copy refuses what would make it unsafe or unbounded: symbolic links that lead out of DIR,
files that are not regular files, files or totals over the limits."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from .errors import RegistryError

SNAPSHOT_SUFFIX = "-bots"  # the database file's name and this: the folder of its snapshots
MAX_FILE_BYTES = 64 << 20  # one file of a bot directory
MAX_TOTAL_BYTES = 256 << 20  # a whole bot directory
MAX_FILES = 10_000


class BadSnapshot(RegistryError):
    """A bot directory that cannot be snapshotted (what is wrong with it is said)."""


def snapshot_root(db_path: str | os.PathLike[str]) -> Path:
    db = Path(db_path).resolve()
    return db.parent / f"{db.name}{SNAPSHOT_SUFFIX}"


def snapshot_dir(db_path: str | os.PathLike[str], family: str, version: int) -> Path:
    return snapshot_root(db_path) / family / str(version)


def _check_tree(source: Path) -> None:
    """Refuse, before anything is copied, what the copy would not keep safe and small."""
    total = files = 0
    for dirpath, dirnames, filenames in os.walk(source, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                target = path.resolve()
                if not target.is_relative_to(source):
                    raise BadSnapshot(
                        f"{path} is a symbolic link to {target}, outside the bot directory "
                        f"{source}; a version keeps only the directory's own files: copy what "
                        "it needs into the directory"
                    )
                if path.parent.is_relative_to(target):
                    raise BadSnapshot(
                        f"{path} is a symbolic link to {target}, a folder that "
                        "holds it (a loop); remove it"
                    )
                if not target.exists():
                    raise BadSnapshot(
                        f"{path} is a symbolic link to {target}, which does "
                        "not exist; remove it or fix it"
                    )
                st = target.stat()
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                raise BadSnapshot(
                    f"{path} is not a regular file (a socket, pipe or device); "
                    "a bot directory holds files and folders only"
                )
            files += 1
            total += st.st_size
            if st.st_size > MAX_FILE_BYTES:
                raise BadSnapshot(
                    f"{path} is {st.st_size >> 20} MB; a file of a bot version is at most "
                    f"{MAX_FILE_BYTES >> 20} MB: leave big data out of the bot directory"
                )
            if total > MAX_TOTAL_BYTES or files > MAX_FILES:
                raise BadSnapshot(
                    f"bot directory {source} holds more than {MAX_TOTAL_BYTES >> 20} MB or "
                    f"{MAX_FILES} files; a bot version is its code and small data: leave the "
                    "rest (virtual environments, data sets, logs) out of it"
                )


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


def is_snapshot(db_path: str | os.PathLike[str], directory: str) -> bool:
    """Whether a bot's directory is a version's snapshot kept beside this database."""
    return Path(directory).is_relative_to(snapshot_root(db_path))
