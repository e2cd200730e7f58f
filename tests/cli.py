"""Running the `arena` command line from tests as a user does: a child process with this
Python, started in the repository's root unless told otherwise."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.timing import scaled

ROOT = Path(__file__).resolve().parent.parent


def arena_command(*args: str) -> list[str]:
    """The command line of `arena ARGS`."""
    return [sys.executable, "-m", "arena", *args]


def run_arena(
    *args: str, cwd: Path = ROOT, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run `arena ARGS` to its end; its exit code and output (as text). `timeout`: seconds on
    a quiet machine, scaled by its load (tests/timing.py)."""
    return subprocess.run(
        arena_command(*args),
        cwd=cwd,
        text=True,
        capture_output=True,
        timeout=scaled(timeout),
        env=env,
    )


def start_arena(*args: str, tmp: Path | None = None, **popen: Any) -> subprocess.Popen:
    """Start `arena ARGS` in the repository's root; `popen` goes to subprocess.Popen (where
    its output goes, above all). `tmp`: the process's TMPDIR, for a run the test kills -9:
    the temporary files it cannot remove then (its referee's socket folder) stay in the
    test's folder, not in /tmp."""
    popen.setdefault("cwd", ROOT)
    if tmp is not None:
        popen["env"] = {**popen.get("env", os.environ), "TMPDIR": str(tmp)}
    return subprocess.Popen(arena_command(*args), **popen)


def dump_stacks_and_kill(proc: subprocess.Popen, wait_s: float = 5.0) -> tuple[str, str]:
    """End an `arena` process that hung, after asking it where it is (SIGUSR1: its threads'
    and asyncio tasks' stacks on its stderr, arena.startup.dump_stacks_on_signal): its whole
    output, the dump included, for the failure message. `proc` was started with its output
    piped as text."""
    proc.send_signal(signal.SIGUSR1)
    try:
        return proc.communicate(timeout=wait_s)  # it may have ended meanwhile
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def serve_args(
    ladder: str | None, *options: str, db: Path | None = None, port: int = 0, web_port: int = 0
) -> list[str]:
    """The arguments of `arena serve` for one ladder (NAME=GAME:K; None: none, the options
    name what it runs) on the given ports (0: the system picks one), on `db` if given, then
    `options`."""
    on_db = ["--db", str(db)] if db is not None else []
    ports = ["--port", str(port), "--web-port", str(web_port)]
    ladders = ["--ladder", ladder] if ladder is not None else []
    return ["serve", *on_db, *ladders, *ports, *options]


def run_match(
    game: str,
    bots: Sequence[str],
    seed: int,
    *options: str,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Play one match with `arena match GAME BOTS... --seed SEED OPTIONS... --json` to its end:
    its result as JSON on stdout."""
    return run_arena(
        "match", game, *bots, "--seed", str(seed), *options, "--json", cwd=cwd, env=env
    )


def ladder_run_args(
    name: str,
    bots: str,
    db: Path,
    options: Sequence[str] = (),
    k: int = 2,
    run_dir: Path | None = None,
) -> list[str]:
    """The arguments of `arena ladder run NAME` for a Balloon ladder among `bots` (comma-
    separated) at tables of `k`, on `db`, without a progress bar, its bots' work directories
    under `run_dir` if given, then `options`."""
    work = ["--run-dir", str(run_dir)] if run_dir is not None else []
    ladder = ["ladder", "run", name, "--game", "balloon", "-k", str(k), "--bots", bots]
    return [*ladder, "--db", str(db), *work, "--no-progress", *options]


# Test servers listen on ports below the kernel's ephemeral range: a port the kernel handed out
# for "any free port" (bind to 0) is one it may hand out again at once as the local end of an
# outgoing connection (a bot connecting to its referee, say), and a fresh clone's run lost a
# server that way ("Failed to bind to address 127.0.0.1:40815"). Below the range, only a
# process that binds that very port can take it.
LISTEN_PORTS = (10000, 32768)


def _listen_range() -> tuple[int, int]:
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return LISTEN_PORTS
    return LISTEN_PORTS[0], max(LISTEN_PORTS[0] + 1000, min(LISTEN_PORTS[1], low))


def free_ports(n: int) -> list[int]:
    """n distinct free ports, drawn at random below the ephemeral range (LISTEN_PORTS) and
    bound to check them: the sockets stay bound until all are chosen, so that no port is
    handed out twice."""
    low, high = _listen_range()
    rng = random.SystemRandom()  # two test workers must not draw alike
    sockets: list[socket.socket] = []
    try:
        for _ in range(200 * n):
            if len(sockets) == n:
                break
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", rng.randrange(low, high)))
            except OSError:  # taken: draw again
                s.close()
                continue
            sockets.append(s)
        if len(sockets) < n:
            raise RuntimeError(f"found only {len(sockets)} free ports of {n} in {low}-{high}")
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()
