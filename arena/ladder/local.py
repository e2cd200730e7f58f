"""The local executor: one referee on this machine, one long-lived process per bot.

Bots registered with a command are launched once and play all their matches over one stream
(a bot whose process died is launched again before its next match). Remote bots connect by
themselves with their registered token.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Sequence

from arena.games import game_from_config
from arena.referee.host import RefereeHost
from arena import botcommand
from arena.referee.launcher import BotCommandError, ResourceLimits, resolve_command
from arena.referee.sandbox import SandboxUnavailable
from arena.referee.match import Limits
from arena.results import MatchResult
from arena.store import AsyncStore, Bot, Ladder, StoredMatch

from .runner import ExecutorSetupError, InfrastructureError

# How many times a crashed bot is launched again during one run before its seats are left to
# fault (each crash is already a fault of the matches it was in).
MAX_RELAUNCHES = 20


class LocalExecutor:
    def __init__(self, store: AsyncStore, run_dir: Path, host: str = "127.0.0.1",
                 port: int = 0, resource_limits: ResourceLimits = ResourceLimits()):
        self.store = store
        self.run_dir = run_dir
        self.node = socket.gethostname()
        self.referee = RefereeHost(run_dir, authenticate=self._authenticate, host=host,
                                   port=port, resource_limits=resource_limits)
        self._bots: dict[str, Bot] = {}
        self._relaunches: dict[str, int] = {}
        self._launch_lock = asyncio.Lock()
        self._started = False

    async def _authenticate(self, token: str) -> str | None:
        name = await self.referee.tokens.authenticate(token)
        if name is not None:
            return name
        bot = await self.store.bot_for_token(token)  # a remote bot with its registered token
        return bot.name if bot is not None and not bot.suspended else None

    async def start(self, bots: Sequence[Bot]) -> None:
        if not self._started:
            await self.referee.server.start()
            self._started = True
        for bot in bots:
            self._bots[bot.name] = bot
            if bot.command and bot.name not in self.referee.bots:
                await self._launch(bot)

    async def _launch(self, bot: Bot) -> None:
        try:
            command = resolve_command(bot.directory if _is_manifest_bot(bot) else bot.command,
                                      Path(bot.directory) if bot.directory else None)
        except BotCommandError as err:
            raise InfrastructureError(f"bot {bot.name} cannot be launched: {err}") from None
        old = self.referee.bots.pop(bot.name, None)
        if old is not None:
            await old.stop()
        try:
            await self.referee.launch(bot.name, command)
        except SandboxUnavailable as err:  # this machine cannot launch bots: no match can run
            raise ExecutorSetupError(f"cannot launch bot {bot.name}: {err}") from None

    async def _ensure_running(self, names: Sequence[str]) -> None:
        async with self._launch_lock:
            for name in names:
                proc = self.referee.bots.get(name)
                if proc is None or proc.exit_info() is None:
                    continue
                count = self._relaunches.get(name, 0)
                if count < MAX_RELAUNCHES:
                    self._relaunches[name] = count + 1
                    await self._launch(self._bots[name])

    async def play(self, ladder: Ladder, match: StoredMatch, limits: Limits,
                   match_id: str) -> tuple[MatchResult, str]:
        await self._ensure_running(match.seats)
        game = game_from_config(ladder.config)
        try:
            result = await self.referee.run_match(game, match.seed, match.seats, limits,
                                                  match_id=match_id)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the referee itself failed: not a bot's fault
            raise InfrastructureError(f"the referee failed: {type(err).__name__}: {err}") \
                from err
        return result, self.node

    async def close(self) -> None:
        if self._started:
            await self.referee.close()


def _is_manifest_bot(bot: Bot) -> bool:
    """A bot registered from a directory runs in that directory (its manifest's command);
    a bot registered with a command gets a fresh work directory of its own."""
    if not bot.directory or not bot.command:
        return False
    try:
        return botcommand.read_manifest(bot.directory) == bot.command
    except botcommand.BotCommandError:
        return False
