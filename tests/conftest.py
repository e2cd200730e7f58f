"""Make the repository's packages importable when the project is not installed; fixtures
shared by several test directories."""

import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent
for path in (_ROOT, _ROOT / "sdk"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from tests.timing import ENV, load_factor  # noqa: E402  (importable once the root is on the path)


def pytest_report_header(config: pytest.Config) -> str:
    return f"load factor {load_factor():.1f} (tests/timing.py; {ENV} sets it)"


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """pytest-timeout's limit (pyproject's `timeout`, or --timeout) guards against a hung
    test, not a slow machine: scale it by the load factor when the test starts, as
    tests/timing.py scales the tests' own deadlines. A test's own timeout marker is kept."""
    base = item.config.getoption("timeout", None) or item.config.getini("timeout")
    if base and float(base) > 0 and item.get_closest_marker("timeout") is None:
        item.add_marker(pytest.mark.timeout(float(base) * load_factor()))
    yield


# Tiers whose tests start many processes, a cluster or a browser: under pytest-xdist they share
# one worker, so that no two of them run at once (each is sized for the machine to itself).
HEAVY_TIERS = ("ray", "browser", "strength", "load")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for pytest-xdist's `--dist loadgroup` (`scripts/test -n 2`): the tests of a module
    that share a module fixture stay on one worker (it is built once; the others go to
    whichever worker is free, one by one), the heavy tiers share one worker,
    and so do the tests of each costly session fixture (the clean ladder, the web database, the
    launched ladder).
    Without xdist the groups change nothing. scripts/test runs the suite with `-n 2` (measured
    2026-12-02 on the 2-core machine: 16.5 min in one process, quiet; 12 min in two, its own
    load only, a 197 s stall of a test fixture left out, since fixed)."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        # (tests/web/conftest.py marks the tests that use its browser fixture after this runs)
        if any(item.get_closest_marker(tier) for tier in HEAVY_TIERS) or "browser" in fixtures:
            group = "heavy"
        elif "clean_ladder" in fixtures:
            group = "clean_ladder"
        elif "web_db" in fixtures:  # tests/web/conftest.py's session database
            group = "web_db"
        elif "launched_ladder" in fixtures:  # and its ladder of launched bots
            group = "launched_ladder"
        elif _shares_a_module_fixture(item):
            group = item.nodeid.split("::", 1)[0]
        else:
            continue  # a test of its own: xdist sends it to whichever worker is free
        item.add_marker(pytest.mark.xdist_group(group))


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a fixture built once for its module, class or package (which
    each worker running one of those tests would build again)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return True
    return any(
        defs and defs[-1].scope in ("module", "class", "package")
        for defs in info.name2fixturedefs.values()
    )


@pytest.fixture(scope="session")
def clean_ladder(tmp_path_factory):
    """The uninterrupted run of the ladder tests/ladder/test_run_ladder.py's ladder_args
    describes (24 matches), played once per session: every interrupted run must equal it. Its
    database's path ("db"), results and rankings; read it, never write it."""
    from tests.support.ladders import arena, ladder_args, rankings, register, results

    tmp = tmp_path_factory.mktemp("clean-ladder")
    db = tmp / "clean.db"
    register(db, ["a", "b", "c", "d"])
    arena(*ladder_args(db, tmp))
    return {"db": db, "results": results(db), "rankings": rankings(db)}
