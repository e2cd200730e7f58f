"""Ladders run through the `arena` command line for tests: run a command to its end (saying
what hung), register random bots, the standard interrupted-and-resumed ladder, and reading
back what a ladder stored."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from arena.store import Store
from tests.cli import ROOT, arena_command, dump_stacks_and_kill, ladder_run_args
from tests.procs import descendants
from tests.store.helpers import use_seed_key
from tests.timing import scaled

RANDOM = "python example_bots/random_bot.py"


def arena(*args: str, cwd: Path = ROOT, check: bool = True, timeout: float = 100):
    """Run `arena ARGS` to its end. One that has not ended within `timeout` seconds on a quiet
    machine, scaled by its load (tests/timing.py; below pytest's 120 s, scaled alike, so that
    this says what hung) is killed, and the error shows its output so far, the processes it
    had left running, and where its threads and tasks were (tests/cli.dump_stacks_and_kill)."""
    limit = scaled(timeout)
    proc = subprocess.Popen(
        arena_command(*args),
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        stdout, stderr = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        running = [_cmdline(pid) for pid in descendants(proc.pid)]
        stdout, stderr = dump_stacks_and_kill(proc)
        raise AssertionError(
            f"arena {' '.join(args)} did not end within {limit:.0f} s (killed); it ran "
            f"{running}; its output:\n{stdout}\n{stderr}"
        ) from None
    if check and proc.returncode != 0:
        raise AssertionError(
            f"arena {' '.join(args)} failed ({proc.returncode}):\n{stdout}\n{stderr}"
        )
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return f"{pid} (gone)"


def register(db: Path, names: list[str]) -> None:
    """Register launched random bots (in this process, as `arena bot add NAME --command RANDOM`
    run from the repository's root does: a test's set-up, not the command under test, which
    tests/store tests; a subprocess each cost a fresh interpreter's start). Every database made
    here has the same bot-seed key, so that runs in two of them can be compared
    (tests/store/helpers.py, use_seed_key)."""
    with Store(db) as store:
        for name in names:
            store.add_bot(name, RANDOM, cwd=ROOT)
    use_seed_key(db)


def ladder_args(db: Path, tmp: Path, name: str = "l1") -> list[str]:
    return ladder_run_args(
        name,
        "a,b,c,d",
        db,
        ["--seed", "11", "--rounds", "2", "-j", "3", "--move-ms", "5000"],
        k=3,
        run_dir=tmp / "runs",
    )


def results(db: Path) -> dict:
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT m.idx, r.seat, r.score, r.rank FROM matches m JOIN results r "
        "ON r.match_id = m.id ORDER BY m.idx, r.seat"
    ).fetchall()
    counts = con.execute("SELECT count(*) FROM results").fetchone()[0]
    con.close()
    return {"rows": rows, "count": counts}


def wait_for_completed(db: Path, n: int, proc: subprocess.Popen, timeout_s: float = 120) -> int:
    """Wait on the condition itself (n matches stored), not on time; stop early if the
    ladder's process ends. Returns how many were completed. `timeout_s` is for a quiet
    machine, scaled by its load."""
    deadline = time.monotonic() + scaled(timeout_s)
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            con = sqlite3.connect(db, timeout=5)
            done = con.execute("SELECT count(*) FROM matches WHERE status='completed'").fetchone()[
                0
            ]
            con.close()
        except sqlite3.OperationalError:  # not created yet
            done = 0
        if done >= n:
            break
        time.sleep(0.02)  # polling a condition, with a deadline
    return done


def rankings(db: Path) -> list[dict]:
    doc = json.loads(arena("rankings", "--json", "--db", str(db)).stdout)
    return [
        {k: s[k] for k in ("bot", "mu", "sigma", "matches", "wins", "faults")}
        for s in doc["standings"]
    ]


def count(db: Path, status: str) -> int:
    try:
        con = sqlite3.connect(db, timeout=5)
        try:
            return con.execute(
                "SELECT count(*) FROM matches WHERE status = ?", (status,)
            ).fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:  # the ladder is not created yet
        return 0


def kill_when(proc: subprocess.Popen, condition, timeout_s: float = 120) -> None:
    """kill -9 the runner as soon as `condition()` holds (checked on the database itself);
    `timeout_s` is for a quiet machine, scaled by its load."""
    deadline = time.monotonic() + scaled(timeout_s)
    while time.monotonic() < deadline and proc.poll() is None:
        if condition():
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return
        time.sleep(0.005)  # polling the database: the condition has no event to wait on
    ended = proc.poll()
    proc.kill()
    proc.wait()
    raise AssertionError(
        "the kill condition never held: the ladder "
        + (f"ended first (exit {ended})" if ended is not None else "was still running (hung?)")
    )
