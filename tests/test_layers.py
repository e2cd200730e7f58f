"""The import contract (pyproject.toml, [tool.importlinter]; docs/architecture.md, "Layers"):
`lint-imports` passes on Arena as it is, and fails, naming the import, on a copy of arena/ given
one deliberate upward import or one new cycle between the modules of a package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports with the project's contracts over the `arena` package found in `root`."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def copy_of_arena(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "arena",
        tmp_path / "arena",
        ignore=shutil.ignore_patterns("__pycache__", "templates", "static"),
    )
    return tmp_path


def add_line(module: Path, line: str) -> None:
    module.write_text(module.read_text() + f"\n{line}\n")


def test_arena_keeps_its_layers():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 2 kept, 0 broken." in done.stdout


def test_an_unchanged_copy_keeps_them(tmp_path):
    # The same contracts over an unchanged copy pass: the failures below are the bad lines'.
    done = lint_imports(copy_of_arena(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    "module, line, said",
    [
        # The store importing the ladder runner: a layer importing one above it.
        (
            "store/records.py",
            "from arena.ladder import runner",
            "arena.store.records -> arena.ladder.runner",
        ),
        # Pure maths importing the store, in a function (deferred imports count too).
        (
            "ratings.py",
            "def _store():\n    from arena.store import Store",
            "arena.ratings -> arena.store",
        ),
    ],
)
def test_an_upward_import_breaks_the_layers(tmp_path, module, line, said):
    root = copy_of_arena(tmp_path)
    add_line(root / "arena" / module, line)
    done = lint_imports(root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "BROKEN" in done.stdout and said in done.stdout, done.stdout


def test_a_new_cycle_inside_a_package_is_broken(tmp_path):
    # arena.store.matches imports records; records importing matches closes a cycle.
    root = copy_of_arena(tmp_path)
    add_line(root / "arena" / "store" / "records.py", "from arena.store import matches")
    done = lint_imports(root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "No cycles are allowed in arena.store" in done.stdout, done.stdout
