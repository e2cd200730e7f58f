"""Hostile installs and builds are contained like hostile bots (arena.referee.build): a step
that runs for ever, writes without bound, forks without bound or reaches for the network fails
with a sentence saying which limit it met, and leaves nothing behind: no process, no control
group, no mounted or leftover folder, no cache entry."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import cgroups, sandbox, workdir
from arena.referee.build import BuildBox, BuildLimits, Preparer
from arena.referee.launcher import group_layout
from arena.runtimes import find_preparation
from tests.timing import scaled

pytestmark = pytest.mark.skipif(
    sandbox.unavailable_reason() is not None,
    reason=f"no sandbox here: {sandbox.unavailable_reason()}",
)

LIMITS = BuildLimits(time_s=1.0, memory_mb=256, processes=16, disk_mb=8, output_bytes=64 << 10)
# Steps that end by themselves get the time a loaded machine needs to start a sandbox.
ENDING = dataclasses.replace(LIMITS, time_s=scaled(10))


def _groups() -> set[str]:
    """This process's build groups now (arena.referee.cgroups; a bot's launched meanwhile by
    another fixture of this process is none of this test's)."""
    where = group_layout()
    if where is None:
        return set()
    return {
        g.name
        for d in where.owner_dirs(os.getpid())
        if d.is_dir()
        for g in d.iterdir()
        if g.name.startswith("build-")
    }


def _build_dirs(prefix: str) -> list[Path]:
    where = group_layout()
    if where is None:
        return []
    return [
        g
        for d in where.owner_dirs(os.getpid())
        if d.is_dir()
        for g in d.iterdir()
        if g.name.startswith(prefix)
    ]


def _mounts() -> str:
    return Path("/proc/self/mounts").read_text()


async def _step(tmp_path: Path, script: str, limits: BuildLimits = LIMITS):
    """Run `sh -c script` as a build step; (its outcome, the box's folder)."""
    async with BuildBox(limits, True, (), "hostile", parent=tmp_path) as box:
        outcome = await box.run(["sh", "-c", script], limits.time_s)
        folder = box.path
    return outcome, folder


@pytest.mark.parametrize(
    "script, said",
    [
        ("echo started; sleep 600", "did not finish within the build's 1 s"),
        ("echo started; exec yes building", "printed more than 64 KB"),
        ("dd if=/dev/zero of=big bs=1M count=100", "a build's folder holds at most 8 MB"),
        (
            # Each shell forks two more, for ever: the group's process limit stops them, and
            # the step ends then, not when its time is up: stopped by the platform, or exited
            # on its own when its shell could not fork (both seen; both name the limit).
            "f() { f | f & }; f; sleep 600",
            "more than 16 processes at once (its limit)",
        ),
        (
            # A route lookup that sends nothing (connect() of a UDP socket) to a documentation
            # address (RFC 5737): unreachable in the sandbox; it would pass silently outside.
            'python3 -c "import socket; socket.socket(socket.AF_INET, '
            "socket.SOCK_DGRAM).connect(('192.0.2.1', 9))\"",
            "exited with code 1",
        ),
    ],
    ids=["forever", "output", "disk", "fork-bomb", "network"],
)
def test_a_hostile_step_fails_saying_why_and_leaves_nothing(tmp_path, script, said):
    groups = _groups()
    # Only the first case waits for its time limit; the others meet theirs, or fail, first.
    limits = LIMITS if script.endswith("sleep 600") and "f()" not in script else ENDING
    outcome, folder = asyncio.run(_step(tmp_path, script, limits))
    assert not outcome.ok and said in outcome.detail, (outcome.detail, outcome.output)
    if "f()" in script:
        assert "did not finish within" not in outcome.detail, outcome.detail
    if "socket" in script:  # no network in the sandbox: its own empty loopback only
        assert "Network is unreachable" in outcome.output, outcome.output
    assert not folder.exists() and str(folder) not in _mounts()
    assert _groups() <= groups  # its control group is gone, with every process in it
    assert not any(name.startswith("build-hostile") for name in _groups())
    assert list(tmp_path.iterdir()) == []


def test_a_build_yields_to_the_matches_being_played(tmp_path):
    """A build's group is SCHED_IDLE (cpu.idle) where the kernel has it; while matches are
    being played, it runs at its busy quota (its time limit then counting at that share); and
    always on one core of its own: what keeps a spinning build from
    slowing the matches (measured: scripts/bench.py runtimes, (d))."""
    limits = dataclasses.replace(LIMITS, time_s=scaled(0.25), busy_cpus=0.5)
    seen: dict[str, str] = {}

    async def run():
        async with BuildBox(limits, True, (), "yielding", tmp_path, playing=lambda: True) as box:
            step = asyncio.ensure_future(
                box.run(
                    ["sh", "-c", "grep Cpus_allowed_list /proc/self/status; sleep 600"],
                    limits.time_s,
                )
            )
            while not step.done() and not seen:
                for group in _build_dirs("build-yielding"):
                    for name in ("cpu.cfs_quota_us", "cpu.max", "cpu.idle"):
                        if (group / name).is_file():
                            seen[name] = (group / name).read_text().split()[0]
                await asyncio.sleep(0.02)
            return await step

    outcome = asyncio.run(run())
    assert not outcome.ok and "counted at full speed" in outcome.detail, outcome.detail
    # Half its time was given back: at half its quota, its time limit took twice as long.
    assert outcome.extra_s >= limits.time_s / 2 * 0.9 and outcome.seconds >= limits.time_s * 1.8
    if group_layout() is not None:
        quota = seen.get("cpu.cfs_quota_us", seen.get("cpu.max"))
        assert quota == str(int(0.5 * cgroups.CPU_PERIOD_US)), seen
        assert seen.get("cpu.idle", "1") == "1", seen  # SCHED_IDLE where the kernel has it
    if len(os.sched_getaffinity(0)) > 1:
        cpus = outcome.output.split("Cpus_allowed_list:")[1].split()[0]
        assert cpus == str(max(os.sched_getaffinity(0))), outcome.output


def test_a_failed_build_keeps_no_cache_entry_and_records_its_step(tmp_path):
    """Through the Preparer: a C++ bot whose build fails leaves its record (the step, why, its
    output) beside the version, and nothing in the cache."""
    version = tmp_path / "bots" / "mine" / "1"
    version.mkdir(parents=True)
    (version / "arena-bot.toml").write_text(
        'runtime = "cpp"\nbuild = ["sh", "-c", "echo BUILD-MARKER; exit 2"]\ncommand = ["bot"]\n'
    )
    preparer = Preparer(tmp_path / "cache", limits=LIMITS)
    if preparer.runtimes.by_name["cpp"].missing():
        pytest.skip(f"no C++ toolchain here: {preparer.runtimes.by_name['cpp'].missing()}")
    prepared = asyncio.run(preparer.prepare(version))
    assert not prepared.ok
    step = prepared.failed_step()
    assert step is not None and step.name == "build" and step.detail == "it exited with code 2"
    assert "BUILD-MARKER" in step.output
    assert find_preparation(version) == prepared
    builds = tmp_path / "cache" / "builds"
    assert not builds.exists() or not any(builds.iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="a build's folder is a tmpfs only as root")
def test_a_build_folder_left_mounted_by_a_killed_platform_goes_at_the_next_build(tmp_path):
    """A platform killed mid-build (a Ray node's worker) leaves its build folder, a tmpfs of
    up to the build's disk limit in host memory; the next build on the host unmounts and
    removes it (its folder names the dead process), and leaves a live process's alone."""
    code = (
        "import asyncio, os, signal, sys\n"
        "from pathlib import Path\n"
        "from arena.referee.build import BuildBox, BuildLimits\n"
        "async def main():\n"
        "    box = BuildBox(BuildLimits(disk_mb=8), True, (), 'killed', parent=Path(sys.argv[1]))\n"
        "    await box.__aenter__()\n"
        "    (box.path / 'half-built').write_text('x')\n"
        "    print(box.path, box.mounted, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert out.returncode == -signal.SIGKILL, out.stderr
    path, mounted = out.stdout.split()
    left = Path(path)
    assert mounted == "True" and os.path.ismount(left), out.stdout
    alive = tmp_path / f"arena-build-{os.getpid()}-abcdefgh"
    alive.mkdir()

    async def next_build():
        async with BuildBox(LIMITS, True, (), "next", parent=tmp_path) as box:
            return box.path

    try:
        folder = asyncio.run(next_build())
        assert not os.path.ismount(left) and not left.exists()
        assert str(left) not in _mounts()
        assert alive.is_dir() and not folder.exists()
    finally:
        if os.path.ismount(left):  # the sweep failed: not left on the host
            workdir.unmount(left)
