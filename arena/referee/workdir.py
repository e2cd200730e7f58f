"""A sandboxed bot's work directory: a tmpfs of its own mounted at its path on the host (when
the platform is root), with a size and a file count of its own, owned by the bot's user.

The host sees it while the bot runs (a test or an organiser can look in, as before); the bot's
memory group pays for its pages and inodes, since the bot is what writes them; when the bot
ends, the platform unmounts it and everything in it is gone at once, whatever it holds, with no
walk over its files (`_chown_tree` used to walk them on the event loop before each relaunch).
Where no tmpfs can be mounted (not root), the directory is a plain one on the host disk, whose
files the sandbox's /tmp size and RLIMIT_FSIZE bound only per file (docs/reliability.md).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

MNT_DETACH = 2
# Files a work directory may hold (tmpfs nr_inodes): plenty for a bot, and a file-count bomb
# ends with ENOSPC long before its inodes weigh on the host.
MAX_FILES = 10_000


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def mount_tmpfs(path: Path, size_mb: int, uid: int, files: int = MAX_FILES) -> None:
    """Mount an empty tmpfs at `path` (mode 0700, owned by uid). Raises OSError."""
    options = f"size={size_mb}m,nr_inodes={files},mode=0700,uid={uid},gid={uid}"
    flags = 0x2 | 0x4  # MS_NOSUID | MS_NODEV (not MS_NOEXEC: a bot may run what it writes)
    if _libc().mount(b"arena-bot", os.fsencode(path), b"tmpfs", flags, options.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot mount a tmpfs at {path}: {os.strerror(err)}")


def unmount(path: Path) -> bool:
    """Detach the tmpfs at `path` (its pages are freed once no process holds it); False if
    nothing was mounted there."""
    return _libc().umount2(os.fsencode(path), MNT_DETACH) == 0


def is_mounted(path: Path) -> bool:
    return os.path.ismount(path)
