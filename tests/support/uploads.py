"""Bot directories to upload, and the admin key of the upload tests' servers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli import ROOT
from tests.service.serving import Server, arena
from tests.timing import scaled

ADMIN = "admin-key-for-tests"
BOT_PY = "from arena_sdk import Bot, run\n"


def bot_dir(root: Path, marker: str = "1") -> Path:
    root.mkdir(parents=True)
    (root / "arena-bot.toml").write_text('runtime = "python"\ncommand = ["bot.py"]\n')
    (root / "bot.py").write_text(f"{BOT_PY}# version {marker}\n")
    return root


def owner_key(db: Path, name: str, tmp: Path) -> Path:
    """Register `name` with an owner key (`arena bot add --owner`); the key's file in `tmp`."""
    added = arena("bot", "add", name, "--owner", "--db", str(db)).stdout
    key = next(line for line in added.splitlines() if line.startswith("owner key")).split()[-1]
    path = tmp / f"{name}.key"
    path.write_text(key + "\n")
    return path


def start_submit(
    server: Server, key_file: Path, folder: Path, timeout_s: float, merged: bool = False
) -> subprocess.Popen:
    """`arena submit` of `folder` to `server`, started (several run at once: their
    verifications overlap), waiting for its verdict up to `timeout_s` on a quiet machine
    (scaled); with `merged`, its stderr comes in its stdout."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "submit", "--server", server.web, "--key-file",
         str(key_file), "--timeout", str(int(scaled(timeout_s))), str(folder)],
        cwd=ROOT, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
    )  # fmt: skip
