"""A referee with its bots: starts the server, launches bot processes, runs matches, and ends
everything it started. Used by `arena match` and the ladder runner.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import os
import uuid
from pathlib import Path
from typing import Sequence

from arena.games.base import Game
from arena.results import MatchResult
from arena.tokens import hash_token, new_token

from .launcher import BotCommand, BotProcess, ResourceLimits, bot_environment
from .match import Limits, MatchContext, MatchObserver, play_match
from .seat import RemoteSeat
from .server import Authenticator, RefereeServer, TlsFiles

# Whether a starting referee moves every object alive (modules, protobuf descriptors, grpc's
# objects: they live as long as the process) out of the garbage collector's reach with
# gc.freeze(), so that its full passes no longer walk them while replies wait unread and their
# bots' clocks run. Objects frozen by an earlier host are not walked again. What it buys
# (scripts/measure_gc_freeze.py --seconds 10 --runs 3; 2026-12-01, 2 cores at a load average
# near 10): without it, sequential play met a full pass every 8-10 s, of 15-43 ms; with it,
# none in 10 s. It freezes ~28,500 objects, and a full pass then walks ~39,000 instead of
# ~61,000 (36 ms against 112 ms, medians). Time per decision was too noisy there to compare.
FREEZE_STARTUP_OBJECTS = True


class TokenBook:
    """Tokens known to this referee, kept only as SHA-256 hashes (a token is shown once, to the
    bot it is issued to). A presented token is hashed and its hash compared with each known one
    in constant time (hmac.compare_digest), so timing tells nothing about a real token."""

    def __init__(self) -> None:
        self._by_hash: dict[str, str] = {}

    def issue(self, bot_name: str) -> str:
        token = new_token()
        self._by_hash[hash_token(token)] = bot_name
        return token

    async def authenticate(self, token: str) -> str | None:
        digest = hash_token(token)
        for known, name in self._by_hash.items():
            if hmac.compare_digest(known, digest):
                return name
        return None

    def issued(self, digest: str, bot_name: str) -> bool:
        """Whether the token with this hash was issued to that bot (and is not revoked). A
        dict lookup, not compare_digest: it rechecks streams that authenticated already, in the
        referee's own periodic check, whose timing no client sees."""
        return self._by_hash.get(digest) == bot_name

    def revoke(self, bot_name: str) -> None:
        """Every token issued to the bot stops working."""
        self._by_hash = {h: n for h, n in self._by_hash.items() if n != bot_name}


class RefereeHost:
    """Owns one RefereeServer and the bot processes it launched."""

    def __init__(
        self,
        run_dir: Path,
        authenticate: Authenticator | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        resource_limits: ResourceLimits = ResourceLimits(),
        tls: TlsFiles | None = None,
    ):
        # Absolute: bots' work directories are bound into their sandboxes by path, and their
        # HOME must not depend on the directory a process happens to run in.
        self.run_dir = Path(os.path.abspath(run_dir))
        self.tokens = TokenBook()
        self.server = RefereeServer(authenticate or self.tokens.authenticate, host, port, tls)
        self.resource_limits = resource_limits
        self.bots: dict[str, BotProcess] = {}

    async def __aenter__(self) -> "RefereeHost":
        await self.server.start()
        if FREEZE_STARTUP_OBJECTS:
            gc.collect()  # first, so that no garbage is kept forever
            gc.freeze()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        # Every match's MatchEnd is written to its bots before they are told to stop.
        await self.server.directory.flush(timeout_s=1.0)
        await asyncio.gather(*(bot.stop() for bot in self.bots.values()))
        await self.server.stop(grace_s=1.0)

    async def launch(
        self,
        name: str,
        command: BotCommand,
        token: str | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> BotProcess:
        """Start a bot process that will connect with `token` (issued here when None), with
        `extra_env` added to its environment (a Ray node's PYTHONPATH to the shipped SDK)."""
        if name in self.bots:
            raise ValueError(f"a bot named {name!r} is already running here")
        if not self.server.started:
            raise RuntimeError("the referee is not started: launch bots inside `async with host`")
        token = token or self.tokens.issue(name)
        workdir = self.run_dir / "bots" / name
        proc = BotProcess(
            name,
            command,
            workdir,
            self.run_dir / "logs" / f"{name}.log",
            bot_environment(token, workdir, extra_env),
            await self.server.open_bot_socket(name),
            self.resource_limits,
        )
        await proc.start()
        self.bots[name] = proc
        return proc

    def seat_for(self, name: str) -> RemoteSeat:
        proc = self.bots.get(name)
        return RemoteSeat(self.server.directory, name, proc)

    async def run_match(
        self,
        game: Game,
        seed: int,
        seat_names: Sequence[str],
        limits: Limits = Limits(),
        match_id: str | None = None,
        observer: MatchObserver | None = None,
    ) -> MatchResult:
        if len(set(seat_names)) != len(seat_names):
            raise ValueError(
                "a bot can hold only one seat of a match; launch it twice under "
                "two names to make it play itself"
            )
        match_id = match_id or uuid.uuid4().hex[:12]
        ctx = MatchContext(match_id, game, seed, tuple(seat_names), limits)
        if observer is None:
            observer = self.server.live.observer(match_id, game.name, ctx)
        return await play_match(ctx, [self.seat_for(n) for n in seat_names], observer)
