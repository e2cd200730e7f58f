"""A referee with its bots: starts the server, launches bot processes, runs matches, and ends
everything it started. Used by `arena match` and the ladder runner.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import hmac
import os
from pathlib import Path
from typing import Awaitable, Sequence

from arena import seeds
from arena.games.base import Game
from arena.results import BotLog, MatchResult
from arena.tokens import hash_token, new_token

from .lanes import bot_of, lane_key
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
        """Every token issued to the bot (each of its lanes') stops working."""
        self._by_hash = {h: n for h, n in self._by_hash.items() if bot_of(n) != bot_name}

    def revoke_lane(self, key: str) -> None:
        """The token issued to one lane's process (lanes.lane_key) stops working."""
        self._by_hash = {h: n for h, n in self._by_hash.items() if n != key}


class RefereeHost:
    """Owns one RefereeServer and the bot processes it launched: one per (bot, lane), in
    `bots` by lane key (lanes.lane_key: the bot's name for lane 0, as `arena match` uses)."""

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
        self.server.directory.on_connect = self._connected
        # The key of the bot seeds of matches run without seeds given (`arena match`, a
        # verification match): drawn per host, never kept.
        self._seed_key = seeds.new_key()

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
        lane: int = 0,
    ) -> BotProcess:
        """Start the process of bot `name`'s lane `lane` (docs/bots.md#lanes), which will
        connect with `token` (issued here, for this lane only, when None), with `extra_env`
        added to its environment (a Ray node's PYTHONPATH to the shipped SDK). Each lane has
        a work directory (its HOME and /tmp) and a log of its own: bots/KEY and logs/KEY.log."""
        key = lane_key(name, lane)
        if key in self.bots:
            raise ValueError(f"bot {name!r} is already running here in lane {lane}")
        if not self.server.started:
            raise RuntimeError("the referee is not started: launch bots inside `async with host`")
        socket = await self.server.open_bot_socket(key)  # the lane's own (its caps)
        token = token or self.tokens.issue(key)
        workdir = self.run_dir / "bots" / key
        proc = BotProcess(
            key,
            command,
            workdir,
            self.run_dir / "logs" / f"{key}.log",
            bot_environment(token, workdir, extra_env),
            socket,
            self.resource_limits,
        )
        await proc.start()
        self.bots[key] = proc
        return proc

    def _connected(self, key: str) -> None:
        # A launched bot that said Hello has started: its CPU is capped as an idle bot's.
        proc = self.bots.get(key)
        if proc is not None:
            proc.started()

    async def stop_lane(self, key: str) -> None:
        """End one lane's process, its token and its socket (a lane that is not running:
        nothing)."""
        await self.detach_lane(key)

    def detach_lane(self, key: str) -> Awaitable[None]:
        """Take one lane out of this host now: its token revoked, its process and socket no
        longer this host's (a launch under the same key makes new ones); the returned awaitable
        ends the process, then the socket."""
        self.tokens.revoke_lane(key)
        proc = self.bots.pop(key, None)
        closing = self.server.detach_bot_socket(key)

        async def end() -> None:
            if proc is not None:
                await proc.stop()
            await closing

        return end()

    def seat_for(self, name: str, lane: int = 0) -> RemoteSeat:
        """A seat of bot `name` played by its lane `lane` when launched here, else by the
        bot's own (remote) connection, which has no lanes."""
        key = lane_key(name, lane)
        proc = self.bots.get(key)
        return RemoteSeat(self.server.directory, key if proc is not None else name, proc)

    async def run_match(
        self,
        game: Game,
        seed: int,
        seat_names: Sequence[str],
        limits: Limits = Limits(),
        match_id: str | None = None,
        observer: MatchObserver | None = None,
        bot_seeds: Sequence[int] | None = None,
        lane: int = 0,
    ) -> MatchResult:
        """Play one match among launched or connected bots. `bot_seeds` (by seat) are the
        seeds the bots get, made by the caller's key (a ladder's store); without them this
        host's own key makes them (arena.seeds). `match_id` is what the bots are told: opaque
        (arena.seeds.new_match_id, the default). Each launched bot plays it in its lane `lane`
        (the rotation of a duplicate set; 0 for a match of no set). Results name the bots,
        never their lanes."""
        if len(set(seat_names)) != len(seat_names):
            raise ValueError(
                "a bot can hold only one seat of a match; launch it twice under "
                "two names to make it play itself"
            )
        if bot_seeds is None:
            bot_seeds = seeds.bot_seeds(self._seed_key, seed, len(seat_names))
        elif len(bot_seeds) != len(seat_names):
            raise ValueError(f"{len(seat_names)} seats need as many bot seeds, got {bot_seeds}")
        match_id = match_id or seeds.new_match_id()
        ctx = MatchContext(match_id, game, seed, tuple(seat_names), limits, tuple(bot_seeds))
        if observer is None:
            observer = self.server.live.observer(match_id, game.name, ctx)
        seats = [self.seat_for(n, lane) for n in seat_names]
        # Each launched bot's log from where its previous match's ended (its start-up's
        # lines go with its first match).
        starts = {
            i: s.process.log_read for i, s in enumerate(seats) if isinstance(s.process, BotProcess)
        }
        result = await play_match(ctx, seats, observer)
        logs = {i: bot_log(seats[i], start, result) for i, start in starts.items()}
        return dataclasses.replace(result, bot_logs=logs) if logs else result


# How much of a launched bot's log one match keeps at most (bytes, read from its end): the
# store keeps less (arena.store.MATCH_LOG_BYTES) once cleaned.
MATCH_LOG_READ = 256 * 1024


def bot_log(seat: RemoteSeat, start: int, result: MatchResult) -> BotLog:
    """What the seat's launched bot wrote during the match, split by its moves: its k-th
    mark (seat.log_marks) ends what it wrote while deciding its k-th move of the match. At most
    the last MATCH_LOG_READ bytes are read. Blocking, but a bounded read of a local file."""
    proc = seat.process
    assert isinstance(proc, BotProcess)
    end = proc.log_size()
    proc.log_read = max(proc.log_read, end)
    first = max(start, end - MATCH_LOG_READ)
    data = proc.read_log(first, end)
    marks = [min(max(m, first), end) - first for m in seat.log_marks]
    own_moves = [i for i, move in enumerate(result.moves) if move.seat == seat.seat]

    def text(a: int, b: int) -> str:
        return data[a:b].decode("utf-8", "replace")

    moves, at = [], 0
    for index, mark in zip(own_moves, marks):
        mark = max(mark, at)
        moves.append((index, text(at, mark)))
        at = mark
    return BotLog(moves=tuple(moves), tail=text(at, len(data)))
