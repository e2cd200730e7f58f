"""Helpers for the reliability suite: a real referee on a free loopback port, real bot
processes (tests/bots), and a way to read what a hostile bot reported."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from arena.referee.launcher import BotCommand
from arena.referee.match import Limits
from tests.timing import scaled

BOTS = Path(__file__).resolve().parent.parent / "bots"
ROOT = Path(__file__).resolve().parents[2]

# Short deadlines keep the suite fast; the connect allowance (a bot process starting: CPU-bound)
# covers a loaded CI machine, scaled by its load (tests/timing.py).
FAST = Limits(move_ms=400, time_bank_ms=300, max_strikes=2, connect_ms=round(scaled(15_000)))


def hostile(mode: str, arg: str = "") -> BotCommand:
    return BotCommand(
        (sys.executable, str(BOTS / "hostile_bot.py"), mode, *([arg] if arg else [])), None
    )


def good() -> BotCommand:
    return BotCommand((sys.executable, str(BOTS / "fault_bot.py"), "good"), None)


def report_of(run_dir: Path, name: str) -> dict | None:
    """A hostile bot's last report: its report.json while it runs, else the last REPORT line of
    its log (its work directory is gone once it has ended: a tmpfs, unmounted)."""
    path = run_dir / "bots" / name / "report.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    log = run_dir / "logs" / f"{name}.log"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    reports = [line[len("REPORT ") :] for line in lines if line.startswith("REPORT {")]
    return json.loads(reports[-1]) if reports else None


async def reported(run_dir: Path, name: str, timeout_s: float = 30.0) -> dict:
    """Wait (bounded) until a hostile bot has written its report; the report. A bot that acts
    at its first request may still be at it when its match ends on a loaded machine: the test
    must not end the bot before it could report."""
    limit = scaled(timeout_s)
    deadline = asyncio.get_running_loop().time() + limit
    while (found := report_of(run_dir, name)) is None:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{name} wrote no report within {limit:.0f} s")
        await asyncio.sleep(0.01)  # polling the file under a deadline
    return found


async def exited(proc, timeout_s: float = 30.0) -> int:
    """Wait for a launched bot's process to end by itself."""
    return await asyncio.wait_for(proc.wait(), scaled(timeout_s))


def kinds(result, seat: int) -> list[str]:
    return [f.kind for f in result.faults if f.seat == seat]


def first_legal_policy_holds(result, seat: int) -> bool:
    """Every move the seat made itself is the first legal action of the state it was asked in:
    what the good test bot plays. Replays the match through the engine to check."""
    from arena.games import game_from_config
    from arena.referee.match import action_from_json

    state = game_from_config(result.config).new_match(result.seed)
    for move in result.moves:
        if move.seat == seat and not move.default:
            if action_from_json(move.action) != state.legal_actions(seat)[0]:
                return False
        state.apply_action(move.seat, action_from_json(move.action))
    return True


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


class DescriptorSampler:
    """The most descriptors this process (the referee's) held, sampled every 20 ms."""

    def __init__(self) -> None:
        self.base = open_descriptors()
        self.most = self.base
        self._task: asyncio.Task | None = None

    async def _sample(self) -> None:
        while True:
            self.most = max(self.most, open_descriptors())
            await asyncio.sleep(0.02)  # a sampling period, not a synchronisation

    def __enter__(self) -> "DescriptorSampler":
        self._task = asyncio.ensure_future(self._sample())
        return self

    def __exit__(self, *exc) -> None:
        assert self._task is not None
        self._task.cancel()
