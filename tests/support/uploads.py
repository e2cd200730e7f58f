"""Bot directories to upload, and the admin key of the upload tests' servers."""

from __future__ import annotations

from pathlib import Path

ADMIN = "admin-key-for-tests"
BOT_PY = "from arena_sdk import Bot, run\n"


def bot_dir(root: Path, marker: str = "1") -> Path:
    root.mkdir(parents=True)
    (root / "arena-bot.toml").write_text('runtime = "python"\ncommand = ["bot.py"]\n')
    (root / "bot.py").write_text(f"{BOT_PY}# version {marker}\n")
    return root
