"""Bots with their own dependencies and in C++, for real: `arena serve` running, owners upload
with `arena submit`. The Python starter bot (example_bots/python_wheel) ships its dependency as
a wheel, installed offline on the server, and plays; the C++ starter bot (example_bots/cpp) is
uploaded as source, built on the server in the sandbox, verified and plays a ladder match; a
version whose requirement is in no shipped wheel, and one whose build fails, are refused, and
`arena submit` prints the failing step and its last lines. The runtimes the server offers are
listed (GET /api/runtimes and the bot page's upload form), and an upload naming one it lacks,
or one it does not know, is refused saying what is missing. Two hostile builds (one reaching
for the network, one printing without end) fail saying why.

The C++ build (about 25 s of CPU: gRPC's headers) is cached by content in the user's cache
folder (~/.cache/arena/test-builds, `--build-cache`): the first run of this test on a machine
builds it on the server, later runs (of any clone) reuse it. Without a C++ toolchain
(scripts/setup installs one) the C++ half is skipped, saying what is missing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from arena.runtimes import Runtimes
from tests.service.serving import RANDOM, Server, arena, played, wait_until
from tests.support.kits import build_cache_folder, cpp_kit, wheel_kit
from tests.support.uploads import owner_key, start_submit
from tests.timing import scaled

CPP_MISSING = Runtimes().by_name["cpp"].missing()


@pytest.fixture(scope="session")
def build_cache() -> Path:
    """Built C++ bots kept across test runs and clones (tests/support/kits.py)."""
    return build_cache_folder()


def submit(server: Server, key_file: Path, folder: Path) -> subprocess.Popen:
    return start_submit(server, key_file, folder, 400)


def finished(proc: subprocess.Popen) -> tuple[int, str]:
    """A started submit's exit code and everything it printed."""
    out, err = proc.communicate(timeout=scaled(480))
    return proc.returncode, out + err


# The first run on a machine builds the C++ bot (minutes on a loaded one); later runs reuse it.
@pytest.mark.timeout(scaled(900))
def test_a_wheel_bot_and_a_cpp_bot_are_prepared_on_the_server_and_play(tmp_path, build_cache):
    db = tmp_path / "arena.db"
    for name in ("r1", "r2"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    wheel_key = owner_key(db, "lowcard", tmp_path)  # the kits' manifests name them
    cpp_key = owner_key(db, "cpp-random", tmp_path)
    # An organiser's runtime whose wheelhouse is not there: offered by name, refused at upload.
    offered = tmp_path / "runtimes.toml"
    offered.write_text('[python-lost]\npackages = ["numpy"]\nwheelhouse = "no-such-folder"\n')
    server = Server(
        tmp_path, db, extra=["--build-cache", str(build_cache), "--runtimes", str(offered)]
    )
    try:
        wait_until(server.up, "the web server", server=server)
        listed = {r["name"]: r for r in httpx.get(f"{server.web}/api/runtimes").json()}
        assert list(listed) == ["python", "node", "cpp", "python-lost"]
        assert "the wheelhouse" in listed["python-lost"]["missing"][0]
        assert listed["cpp"]["missing"] == CPP_MISSING
        # The upload form on the bot's page lists them, as `arena runtime list` does.
        page = httpx.get(f"{server.web}/bots/r1").text
        for name in listed:
            assert f'data-runtime="{name}"' in page, name
        assert "not offered: lacks the wheelhouse" in page
        refused = {
            "this server has no python-lost runtime: it lacks the wheelhouse": "python-lost",
            "which Arena does not know; the runtimes are python, node, cpp, python-lost": "rust",
        }
        uploads = {}
        for said, runtime in refused.items():  # uploaded at once, refused before any check
            lacking = tmp_path / runtime
            lacking.mkdir()
            (lacking / "arena-bot.toml").write_text(
                f'name = "lowcard"\nruntime = "{runtime}"\ncommand = ["bot.py"]\n'
            )
            (lacking / "bot.py").write_text("import numpy\n")
            uploads[said] = submit(server, wheel_key, lacking)
        for said, proc in uploads.items():
            code, out = finished(proc)
            assert code != 0 and said in out, out
        cpp = cpp_kit(tmp_path / "cpp")
        broken = tmp_path / "broken"
        broken.mkdir()
        (broken / "arena-bot.toml").write_text(
            'name = "cpp-random"\nruntime = "cpp"\nbuild = ["g++", "-o", "bot", "bot.cpp"]\n'
            'command = ["bot"]\n'
        )
        (broken / "bot.cpp").write_text("int main( { return 0; }\n")
        # Each bot's good version, then its bad one (a bot's uploads are verified in turn).
        good = [submit(server, wheel_key, wheel_kit(tmp_path / "wheel"))]
        if not CPP_MISSING:
            good.append(submit(server, cpp_key, cpp))
        code, said = finished(good[0])
        assert code == 0, said + server.log_tail()
        assert "install `pip install --no-index" in said and "verdict: passed" in said
        bad = [
            submit(
                server,
                wheel_key,
                wheel_kit(tmp_path / "missing", "lowcard==0.1.0\nnot-shipped-anywhere==1.0\n"),
            )
        ]
        if not CPP_MISSING:
            code, said = finished(good[1])
            assert code == 0, said + server.log_tail()
            assert "build `make`: ok" in said and "verdict: passed" in said
            bad.append(submit(server, cpp_key, broken))
            # Hostile builds, contained: one reaches for the network, one prints without end.
            for i, build in enumerate(
                [
                    # a route lookup that sends nothing (UDP connect, RFC 5737 address)
                    'python3 -c "import socket; socket.socket(socket.AF_INET, '
                    "socket.SOCK_DGRAM).connect(('192.0.2.1', 9))\"",
                    "yes flooding",
                ]
            ):
                hostile = tmp_path / f"hostile{i}"
                hostile.mkdir()
                (hostile / "arena-bot.toml").write_text(
                    'name = "cpp-random"\nruntime = "cpp"\ncommand = ["bot"]\n'
                    f"build = {json.dumps(['sh', '-c', build])}\n"
                )
                bad.append(submit(server, cpp_key, hostile))
        code, said = finished(bad[0])
        assert code == 1, said
        assert "install `pip install" in said and "FAILED: it exited" in said
        assert "No matching distribution found for not-shipped-anywhere" in said
        assert "verdict: failed: install" in said
        if not CPP_MISSING:
            code, said = finished(bad[1])
            assert code == 1, said
            assert "build `g++ -o bot bot.cpp`: FAILED: it exited with code 1" in said
            assert "bot.cpp:1" in said and "error" in said  # g++'s own lines
            code, said = finished(bad[2])
            assert code == 1 and "FAILED: it exited with code 1" in said, said
            assert "Network is unreachable" in said, said  # the sandbox has no network
            code, said = finished(bad[3])
            assert code == 1, said
            assert "FAILED: it printed more than 2048 KB (the build's output limit)" in said, said
            wait_until(
                lambda: played(db, "cpp-random") >= 1, "a ladder match of cpp-random", server=server
            )
    finally:
        assert server.stop() == 0, server.log_tail()
    if CPP_MISSING:
        pytest.skip(f"the C++ half needs a C++ toolchain (scripts/setup): {CPP_MISSING}")
