"""The composition root: builds the referee, launcher, store and runners from settings.

CLI commands parse and validate, then call one function here; nothing else constructs these
objects, so there are no module-level singletons.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from arena.games.base import Game
from arena.referee.host import RefereeHost
from arena.referee.launcher import BotCommand, ResourceLimits
from arena.referee.match import Limits
from arena.results import MatchResult


@dataclass(frozen=True)
class MatchSettings:
    game: Game
    bots: tuple[tuple[str, BotCommand], ...]  # (seat name, command) in seat order
    seed: int
    limits: Limits = Limits()
    resource_limits: ResourceLimits = ResourceLimits()
    run_dir: Path | None = None  # where bot logs and work directories go; a temp dir if None


def seat_names_for(commands: Sequence[str]) -> list[str]:
    """Readable, distinct seat names from the bots' commands (random_bot, random_bot#2, ...)."""
    names: list[str] = []
    for spec in commands:
        parts = spec.split()
        base = Path(parts[-1] if parts else spec).stem or "bot"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}#{n}"
        names.append(name)
    return names


def run_match(settings: MatchSettings) -> MatchResult:
    """Start a referee on a free local port, launch the bots, play one match, end everything."""
    return asyncio.run(_run_match(settings))


async def _run_match(settings: MatchSettings) -> MatchResult:
    with tempfile.TemporaryDirectory(prefix="arena-match-") as tmp:
        run_dir = settings.run_dir or Path(tmp)
        async with RefereeHost(run_dir, resource_limits=settings.resource_limits) as host:
            for name, command in settings.bots:
                await host.launch(name, command)
            names = [name for name, _ in settings.bots]
            task = asyncio.ensure_future(host.run_match(settings.game, settings.seed, names,
                                                        settings.limits))
            loop = asyncio.get_running_loop()
            # Ctrl-C or SIGTERM: stop the match, and let the host end every bot it started.
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, task.cancel)
            try:
                return await task
            finally:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(sig)


def random_seed() -> int:
    return random.SystemRandom().randrange(1 << 31)


def default_run_dir() -> Path:
    return Path(os.environ.get("ARENA_RUN_DIR", "runs"))
