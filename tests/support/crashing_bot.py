"""A launched bot that writes a long log, plays two moves and crashes: its owner's fault-log
excerpt must end with its last words."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli import ROOT

CRASHING_BOT = """
import runpy, sys
print("\\x1b[33mwarming up\\x1b[0m", file=sys.stderr)
for i in range(300):
    print(f"thinking {i}", file=sys.stderr)
print("last words: out of ideas", file=sys.stderr, flush=True)
sys.argv = ["fault_bot.py", "crash_mid"]  # plays two moves, then exits with code 3
runpy.run_path("fault_bot.py", run_name="__main__")
"""


LAST_WORDS = "thinking 299\nlast words: out of ideas\n"  # how its log ends, each time


def crashing_bot(path: Path) -> Path:
    """A bot directory whose bot prints 302 lines to stderr, plays two moves and exits."""
    path.mkdir()
    shutil.copy(ROOT / "tests" / "bots" / "fault_bot.py", path)
    (path / "bot.py").write_text(CRASHING_BOT)
    (path / "arena-bot.toml").write_text('command = "python bot.py"\n')
    return path
