"""Bots with their own dependencies and in C++, for real: `arena serve` running, owners upload
with `arena submit`. The Python starter bot (example_bots/python_wheel) ships its dependency as
a wheel, installed offline on the server, and plays; the C++ starter bot (example_bots/cpp) is
uploaded as source, built on the server in the sandbox, verified and plays a ladder match; a
version whose requirement is in no shipped wheel, and one whose build fails, are refused, and
`arena submit` prints the failing step and its last lines.

The C++ build (about 20 s of CPU: gRPC's headers) is cached by content in pytest's cache folder
(`--build-cache`): the first run of this test on a machine builds it on the server, later runs
reuse it. Without a C++ toolchain (scripts/setup installs one) the C++ half is skipped, saying
what is missing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.runtimes import Runtimes
from tests.cli import ROOT
from tests.service.serving import RANDOM, Server, arena, wait_until
from tests.submissions.test_submit_serve import played
from tests.support.wheels import make_wheel
from tests.timing import scaled

KITS = ROOT / "example_bots"
CPP_MISSING = Runtimes().by_name["cpp"].missing()


@pytest.fixture(scope="session")
def build_cache(request: pytest.FixtureRequest) -> Path:
    """Built C++ bots kept across test runs (by content: a changed kit is built again)."""
    return Path(request.config.cache.mkdir("arena-build-cache"))


def owner_key(db: Path, name: str, tmp: Path) -> Path:
    added = arena("bot", "add", name, "--owner", "--db", str(db)).stdout
    key = next(line for line in added.splitlines() if line.startswith("owner key")).split()[-1]
    path = tmp / f"{name}.key"
    path.write_text(key + "\n")
    return path


def submit(server: Server, key_file: Path, folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", "submit", "--server", server.web, "--key-file",
         str(key_file), "--timeout", str(int(scaled(400))), str(folder)],
        cwd=ROOT, text=True, capture_output=True, timeout=scaled(480),
    )  # fmt: skip


def wheel_kit(dest: Path, requirements: str | None = None) -> Path:
    """The Python starter kit with its wheel built (README's first command, done here without
    a build backend: tests/support/wheels.py)."""
    shutil.copytree(KITS / "python_wheel", dest, ignore=shutil.ignore_patterns("wheels", "build"))
    make_wheel(dest / "lib" / "lowcard", dest / "wheels", "lowcard", "0.1.0")
    if requirements is not None:
        (dest / "requirements.txt").write_text(requirements)
    return dest


# The first run on a machine builds the C++ bot (minutes on a loaded one); later runs reuse it.
@pytest.mark.timeout(scaled(900))
def test_a_wheel_bot_and_a_cpp_bot_are_prepared_on_the_server_and_play(tmp_path, build_cache):
    db = tmp_path / "arena.db"
    for name in ("r1", "r2"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    wheel_key = owner_key(db, "lowcard", tmp_path)  # the kits' manifests name them
    cpp_key = owner_key(db, "cpp-random", tmp_path)
    server = Server(tmp_path, db, extra=["--build-cache", str(build_cache)])
    try:
        wait_until(server.up, "the web server", server=server)
        good = submit(server, wheel_key, wheel_kit(tmp_path / "wheel"))
        assert good.returncode == 0, good.stdout + good.stderr + server.log_tail()
        assert "install `pip install --no-index" in good.stdout and "verdict: passed" in good.stdout

        missing = submit(
            server,
            wheel_key,
            wheel_kit(tmp_path / "missing", "lowcard==0.1.0\nnot-shipped-anywhere==1.0\n"),
        )
        assert missing.returncode == 1, missing.stdout + missing.stderr
        assert "install `pip install" in missing.stdout and "FAILED: it exited" in missing.stdout
        assert "No matching distribution found for not-shipped-anywhere" in missing.stdout
        assert "verdict: failed: install" in missing.stdout

        if not CPP_MISSING:
            source = tmp_path / "cpp"
            shutil.copytree(KITS / "cpp", source, ignore=shutil.ignore_patterns("gen", "bot"))
            built = submit(server, cpp_key, source)
            assert built.returncode == 0, built.stdout + built.stderr + server.log_tail()
            assert "build `make`: ok" in built.stdout and "verdict: passed" in built.stdout

            broken = tmp_path / "broken"
            broken.mkdir()
            (broken / "arena-bot.toml").write_text(
                'name = "cpp-random"\nruntime = "cpp"\nbuild = ["g++", "-o", "bot", "bot.cpp"]\ncommand = ["bot"]\n'
            )
            (broken / "bot.cpp").write_text("int main( { return 0; }\n")
            failed = submit(server, cpp_key, broken)
            assert failed.returncode == 1, failed.stdout + failed.stderr
            assert "build `g++ -o bot bot.cpp`: FAILED: it exited with code 1" in failed.stdout
            assert "bot.cpp:1" in failed.stdout and "error" in failed.stdout  # g++'s own lines
            wait_until(lambda: played(db, "cpp-random") >= 1, "a ladder match of cpp-random", server=server)
        wait_until(lambda: played(db, "lowcard") >= 1, "a ladder match of lowcard", server=server)
    finally:
        assert server.stop() == 0, server.log_tail()
    if CPP_MISSING:
        pytest.skip(f"the C++ half needs a C++ toolchain (scripts/setup): {CPP_MISSING}")
