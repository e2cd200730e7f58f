"""Fixtures shared by the store's command-line tests."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from arena.web.sample import build_demo


@pytest.fixture
def readonly_copy():
    """An Arena database in a folder only root may write, under /tmp (pytest's own temporary
    folders are closed to other users); the folder is removed at the end."""
    top = Path(tempfile.mkdtemp(prefix="arena-ro-"))
    try:
        top.chmod(0o755)
        folder = top / "shared"
        folder.mkdir()
        db = folder / "arena.db"
        build_demo(str(db))
        db.chmod(0o444)
        folder.chmod(0o555)
        out = top / "out"
        out.mkdir(mode=0o777)
        out.chmod(0o777)
        yield db, out
    finally:
        (top / "shared").chmod(0o755)
        shutil.rmtree(top)
