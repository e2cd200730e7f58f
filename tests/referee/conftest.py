"""Helpers for referee tests: a real referee on a free loopback port with real bot processes."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from arena.games import make_game
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, ResourceLimits
from arena.referee.match import Limits

FAULT_BOT = Path(__file__).resolve().parent.parent / "bots" / "fault_bot.py"

FAST = Limits(move_ms=400, time_bank_ms=300, max_strikes=2, connect_ms=8000)


def fault_bot(mode: str) -> BotCommand:
    return BotCommand((sys.executable, str(FAULT_BOT), mode), None)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes only if reaped, so check.
    try:
        with open(f"/proc/{pid}/stat") as f:
            # The state follows the command name, which may hold spaces: split after ')'.
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def play(
    tmp_path: Path,
    game_name: str,
    modes: list[str],
    seed: int = 7,
    limits: Limits = FAST,
    resource_limits: ResourceLimits = ResourceLimits(),
    **options,
):
    """Launch one fault_bot per seat, play one match, stop everything. Returns (result, pids)."""
    game = make_game(game_name, len(modes), **options)
    async with RefereeHost(tmp_path, resource_limits=resource_limits) as host:
        names = [f"{m}-{i}" for i, m in enumerate(modes)]
        procs = [await host.launch(n, fault_bot(m)) for n, m in zip(names, modes)]
        result = await host.run_match(game, seed, names, limits)
    return result, [p.proc.pid for p in procs]


@pytest.fixture
def run():
    return lambda coro: asyncio.run(coro)
