"""The tests' own layout: helpers live in helper modules (tests/support/, tests/cli.py, a
directory's support.py or conftest.py ...), never in a test module another module imports.
Importing a test module runs its collection twice and ties one test file's edits to another's."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def is_test_module(name: str) -> bool:
    """Whether the dotted module name ends in a test module (test_*), as pytest collects them."""
    return name.rsplit(".", 1)[-1].startswith("test_")


def imported_test_modules(source: str, package: str) -> list[str]:
    """The test modules `source` imports (absolute names), `package` being the dotted package
    of its own module (for relative imports)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            names = [f"{base}.{alias.name}" for alias in node.names]
            found += [base] if is_test_module(base) else [n for n in names if is_test_module(n)]
    return found


def test_the_check_finds_absolute_relative_and_submodule_imports_of_test_modules():
    source = (
        "import tests.ladder.test_run_ladder\n"
        "from tests.service.test_serve import Server\n"
        "from .test_fuzz_wire import mutate\n"
        "from . import test_plan\n"
        "from tests.support.ladders import arena\n"
        "from .conftest import ROOT\n"
    )
    assert imported_test_modules(source, "tests.reliability") == [
        "tests.ladder.test_run_ladder",
        "tests.service.test_serve",
        "tests.reliability.test_fuzz_wire",
        "tests.reliability.test_plan",
    ]


def test_no_module_under_tests_imports_a_test_module():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        package = ".".join(path.relative_to(TESTS.parent).parent.parts)
        for name in imported_test_modules(path.read_text(), package):
            offenders.append(f"{path.relative_to(TESTS.parent)} imports {name}")
    assert offenders == [], (
        "test modules are imported for their helpers; move the helpers into tests/support/ "
        "(or the directory's support.py or conftest.py) and import them from there:\n"
        + "\n".join(offenders)
    )
