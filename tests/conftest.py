"""Make the repository's packages importable when the project is not installed; fixtures
shared by several test directories."""

import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent
for path in (_ROOT, _ROOT / "sdk"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


@pytest.fixture(scope="session")
def clean_ladder(tmp_path_factory):
    """The uninterrupted run of the ladder tests/ladder/test_run_ladder.py's ladder_args
    describes (24 matches), played once per session: every interrupted run must equal it. Its
    database's path ("db"), results and rankings; read it, never write it."""
    from tests.ladder.test_run_ladder import arena, ladder_args, rankings, register, results

    tmp = tmp_path_factory.mktemp("clean-ladder")
    db = tmp / "clean.db"
    register(db, ["a", "b", "c", "d"])
    arena(*ladder_args(db, tmp))
    return {"db": db, "results": results(db), "rankings": rankings(db)}
