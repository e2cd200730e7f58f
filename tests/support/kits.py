"""The starter kits (example_bots/python_wheel, example_bots/cpp) as the server receives them,
and the cache of their builds kept across test runs.

The C++ build (about 25 s of CPU: gRPC's headers) is cached by content in the user's cache
folder (~/.cache/arena/test-builds): the first test on a machine that needs it builds it, later
ones (of any clone, CI's fresh clones included) reuse it; a changed kit is built again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.cli import ROOT
from tests.support.wheels import make_wheel

KITS = ROOT / "example_bots"


def build_cache_folder() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = root / "arena" / "test-builds"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def wheel_kit(dest: Path, requirements: str | None = None) -> Path:
    """The Python starter kit with its wheel built (README's first command, done here without
    a build backend: tests/support/wheels.py)."""
    shutil.copytree(KITS / "python_wheel", dest, ignore=shutil.ignore_patterns("wheels", "build"))
    make_wheel(dest / "lib" / "lowcard", dest / "wheels", "lowcard", "0.1.0")
    if requirements is not None:
        (dest / "requirements.txt").write_text(requirements)
    return dest


def cpp_kit(dest: Path) -> Path:
    """The C++ starter kit as source (what its build makes left out)."""
    shutil.copytree(KITS / "cpp", dest, ignore=shutil.ignore_patterns("gen", "bot"))
    return dest
