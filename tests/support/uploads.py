"""Bot directories to upload, and the admin key of the upload tests' servers."""

from __future__ import annotations

from pathlib import Path

from tests.service.serving import arena

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
