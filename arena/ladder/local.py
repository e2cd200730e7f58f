"""The local executor: one referee on this machine, a process per launched bot and lane.

A bot registered with a command plays rotation r of a duplicate set only in its lane r, a
process and sandbox of its own (arena.referee.lanes, docs/bots.md#lanes): lane 0 is launched
when the bot is first started, other lanes when a seat first needs them; a lane whose process
died is launched again before its next match, and a lane idle for `idle_stop_s` is ended and
launched again when seated. Remote bots connect by themselves with their registered token, and
have no lanes.

A bot's access can be revoked while it plays, often by another process sharing the database
(`arena bot rotate-token`, `suspend`, `remove`): every ACCESS_CHECK_S the executor checks its
connected and launched bots against the store in one query, ends the streams whose token no
longer belongs to their bot or whose bot is suspended or removed (their seats in running
matches fault as disconnected), and stops such launched bots (every lane) for good; a bot whose
registered token was rotated has its lanes stopped, to be launched again with new tokens.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import logging
import socket
from pathlib import Path
from typing import Awaitable, Mapping, Sequence

import grpc

from arena import botcommand
from arena.deadlines import within
from arena.games import game_from_config
from arena.referee.host import RefereeHost
from arena.referee.lanes import IDLE_STOP_S, LanePool, bot_of, lane_key
from arena.referee.launcher import BotCommandError, BotProcess, ResourceLimits, resolve_command
from arena.referee.match import Limits
from arena.referee.sandbox import SandboxUnavailable
from arena.referee.server import Refused
from arena.results import DISCONNECT, MatchResult
from arena.store import FAULT_LOG_BYTES, AsyncStore, Bot, BotAccess, Ladder, Store, StoredMatch

from .runner import BotUnlaunchable, ExecutorSetupError, InfrastructureError

log = logging.getLogger(__name__)

# How often the connected and launched bots' access is checked against the store (one query).
ACCESS_CHECK_S = 0.25
# A check whose query waits longer than this (the store's writer is busy) is given up; the next
# one tries again.
ACCESS_QUERY_TIMEOUT_S = 5.0


def retired(name: str) -> Refused:
    return Refused(
        grpc.StatusCode.PERMISSION_DENIED,
        f"bot {name} can no longer be seated by any ladder here (a retired version, or one a "
        "newer version replaces: see arena bot show); it plays no matches",
    )


def suspended(name: str, reason: str | None) -> Refused:
    return Refused(
        grpc.StatusCode.PERMISSION_DENIED,
        f"bot {name} is suspended ({reason or 'no reason given'}); it plays no "
        "matches until the organiser reinstates it (arena bot reinstate)",
    )


def refusal(name: str, access: BotAccess | None, token_hash: str, issued: bool) -> Refused | None:
    """Why a stream of bot `name` that presented a token with this hash may not play on, or
    None if it may. `access` is the bot's row now (None: removed); `issued`: the token is one
    the referee itself issued to the bot it launched (the registered token is not)."""
    if access is None:
        return Refused(
            grpc.StatusCode.UNAUTHENTICATED,
            f"bot {name} was removed (arena bot remove); its tokens no longer work",
        )
    if access.suspended:
        return suspended(name, access.suspended_reason)
    if issued or (
        access.token_hash is not None and hmac.compare_digest(access.token_hash, token_hash)
    ):
        return None
    return Refused(
        grpc.StatusCode.UNAUTHENTICATED,
        f"the token of bot {name} was rotated (arena bot rotate-token); the old one "
        "no longer works: connect with the new one",
    )


class LocalExecutor:
    def __init__(
        self,
        store: AsyncStore,
        run_dir: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        resource_limits: ResourceLimits = ResourceLimits(),
        refuse_remote: str | None = None,
        idle_stop_s: float = IDLE_STOP_S,
        one_process: bool = False,
    ):
        self.store = store
        self.refuse_remote = refuse_remote  # why registered tokens are refused (None: not)
        self.run_dir = run_dir
        self.node = socket.gethostname()
        self.referee = RefereeHost(
            run_dir,
            authenticate=self._authenticate,
            host=host,
            port=port,
            resource_limits=resource_limits,
        )
        self._bots: dict[str, Bot] = {}
        self.lanes = LanePool(
            self.referee, self._launch, self._launchable, idle_stop_s, one_process
        )
        self._launched: set[str] = set()  # bots whose lane 0 start() launched in this run
        self._started = False
        self._closing = False  # close() began: the access watch ends
        self._access_watch: asyncio.Task | None = None
        # A launched bot's registered token (its hash) as the first check after its launch saw
        # it: once the token is rotated, the process is replaced by one with a new token of the
        # referee's. (A rotation within that first 0.25 s leaves the process, whose token is
        # that young, as it is.)
        self._launched_with: dict[str, str | None] = {}
        self._background: set[asyncio.Task] = set()  # revoked bots being stopped or replaced

    async def _authenticate(self, token: str) -> str | None:
        name = await self.referee.tokens.authenticate(token)
        if name is not None:
            return name
        # A remote bot with its registered token.
        bot = await self.store.run(Store.bot_for_token, token)
        if bot is not None and self.refuse_remote is not None:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, self.refuse_remote)
        if bot is not None and bot.suspended:
            raise suspended(bot.name, bot.suspended_reason)
        if bot is not None and bot.name in self.lanes.retired:
            raise retired(bot.name)
        return bot.name if bot is not None else None

    async def start(self, bots: Sequence[Bot]) -> None:
        # Under the lanes' lock: two callers at once (the service's ladders and a verification
        # seat the same opponents) start the referee's server and its access watch once, and
        # launch a bot once, not twice with the second launch stopping the first process while
        # its seat waits for it. Lane 0 (every set's first rotation) is launched here once per
        # run; later lanes, and lanes ended as idle, when a seat needs them (LanePool.acquire).
        async with self.lanes.lock:
            if not self._started:
                await self.referee.server.start()
                self._started = True
                self._access_watch = asyncio.ensure_future(self._watch_access())
                self.lanes.start()
            for bot in bots:
                self._bots[bot.name] = bot
                if (
                    bot.command
                    and not bot.suspended
                    and bot.name not in self._launched
                    and bot.name not in self.referee.bots
                ):
                    await self._launch(bot.name, 0)
                    self._launched.add(bot.name)

    def _launchable(self, name: str) -> bool:
        bot = self._bots.get(name)
        return bot is not None and bool(bot.command) and not bot.suspended

    async def _watch_access(self) -> None:
        # Ended by close(): cancelled, and told by the flag too, so that a cancellation lost
        # deeper down (arena.deadlines) cannot keep close() waiting for ever.
        while not self._closing:
            await asyncio.sleep(ACCESS_CHECK_S)  # a period, not a synchronisation
            if self.store.closed or self._closing:  # nothing left to check, or closing
                return
            try:
                await self.check_access()
            except Exception:  # the check must go on: revocations depend on it
                log.exception(
                    "checking the bots' access failed; trying again in %.2f s", ACCESS_CHECK_S
                )

    async def check_access(self) -> None:
        """End the streams of bots that may no longer play (token rotated, bot suspended or
        removed) and stop such bots that were launched here, never to be launched again in
        this run: one store query for every connected or launched bot."""
        referee = self.referee
        conns = referee.server.directory.connections()
        launched = {bot_of(key) for key in referee.bots}
        names = {bot_of(c.bot_name) for c in conns} | launched
        if not names:
            return
        # Taken before the query: a lane launched while it runs is of a bot not asked about.
        keys = {c.bot_name for c in conns} | referee.bots.keys() | names
        access = await within(
            self.store.run(Store.bot_access, sorted(names)), ACCESS_QUERY_TIMEOUT_S
        )
        for key in keys:
            bot = access.get(bot_of(key))
            if bot is None or bot.suspended:  # its next seats fault at once, not after connect_ms
                await referee.server.directory.bar(key)
        # Launched bots first: their streams are then ended below with the tokens revoked here.
        for name in launched:
            bot = access.get(name)
            if bot is None or bot.suspended:
                referee.tokens.revoke(name)
                self._launched_with.pop(name, None)
                self._launched.discard(name)  # start() launches it again once reinstated
                self._bots.pop(name, None)  # no seat launches it meanwhile
                self._in_background(self.lanes.stop_bot(name))
            elif bot.token_hash != self._launched_with.setdefault(name, bot.token_hash):
                # The registered token was rotated: whoever may have taken a lane's token
                # loses it too; new processes with new tokens take over when next seated.
                referee.tokens.revoke(name)
                self._launched_with[name] = bot.token_hash
                self._in_background(self.lanes.stop_bot(name))
        for conn in conns:
            issued = referee.tokens.issued(conn.token_hash, conn.bot_name)
            refused = refusal(
                bot_of(conn.bot_name),  # the bot's name, not its lane's key
                access.get(bot_of(conn.bot_name)),
                conn.token_hash,
                issued,
            )
            if refused is None and bot_of(conn.bot_name) in self.lanes.retired and not issued:
                refused = retired(bot_of(conn.bot_name))  # its registered token, used remotely
            if refused is not None and not conn.closed.is_set():
                log.warning("cut off bot %s (%s): %s", conn.bot_name, conn.peer, refused.detail)
                conn.close(refused.detail, DISCONNECT, refused.code)

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("stopping or replacing a revoked bot failed: %s", task.exception())

    async def _launch(self, name: str, lane: int) -> None:
        """Launch bot `name`'s lane `lane` (the caller holds the lanes' lock)."""
        bot = self._bots[name]
        spec = bot.directory if is_manifest_bot(bot) else bot.command
        if spec is None:
            raise InfrastructureError(
                f"bot {bot.name} is a remote bot (it connects by itself); nothing launches it"
            )
        try:
            command = resolve_command(spec, Path(bot.directory) if bot.directory else None)
        except BotCommandError as err:
            raise BotUnlaunchable(bot.name, str(err)) from None
        key = lane_key(name, lane)
        await self.referee.stop_lane(key)
        self.referee.server.directory.unbar(key)  # its seats wait for it to connect
        try:
            await self.referee.launch(bot.name, command, lane=lane)
        except SandboxUnavailable as err:  # this machine cannot launch bots: no match can run
            raise ExecutorSetupError(f"cannot launch bot {bot.name}: {err}") from None
        except OSError as err:  # out of descriptors, processes or memory: not the bot's fault
            raise InfrastructureError(f"cannot launch bot {bot.name}: {err}") from err

    async def retire(self, names: Sequence[str]) -> None:
        """These bots may no longer be seated (retired versions): their lanes and tokens end
        as soon as they play no match (LanePool.retire); start() with one of them again seats
        it anew."""
        for name in names:
            self._launched.discard(name)
        self.lanes.retire(names)
        await self.lanes.stop_idle()

    async def play(
        self, ladder: Ladder, match: StoredMatch, limits: Limits
    ) -> tuple[MatchResult, str]:
        lane = self.lanes.lane(match.rotation)
        await self.lanes.acquire(match.seats, lane)
        game = game_from_config(ladder.config)
        try:
            result = await self.referee.run_match(
                game,
                match.seed,
                match.seats,
                limits,
                match_id=match.match_key,
                bot_seeds=match.bot_seeds or None,
                lane=lane,
            )
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the referee itself failed: not a bot's fault
            raise InfrastructureError(f"the referee failed: {type(err).__name__}: {err}") from err
        finally:
            self.lanes.release(match.seats, lane)
        return with_log_excerpts(result, self.referee.bots, lane), self.node

    async def close(self) -> None:
        self._closing = True
        if self._access_watch is not None:
            self._access_watch.cancel()
            await asyncio.gather(self._access_watch, return_exceptions=True)
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.lanes.close()
        if self._started:
            await self.referee.close()


def with_log_excerpts(
    result: MatchResult, bots: Mapping[str, BotProcess], lane: int = 0
) -> MatchResult:
    """The result with the end of the log of each faulted seat whose bot was launched here
    (remote bots keep their logs on their owners' machines), from the lane that played the
    match, read as the match ends: a crashed bot's last words are in it. The store cleans and
    bounds it (arena.store.log_excerpt)."""
    keys = {name: lane_key(name, lane) for name in result.seat_names}
    excerpts = {
        seat: bots[keys[name]].log_tail(2 * FAULT_LOG_BYTES)  # cleaning shortens it
        for seat, name in enumerate(result.seat_names)
        if seat in result.faulted_seats and keys[name] in bots
    }
    return dataclasses.replace(result, log_excerpts=excerpts) if excerpts else result


def is_manifest_bot(bot: Bot) -> bool:
    """A bot registered from a directory runs in that directory (its manifest's command);
    a bot registered with a command gets a fresh work directory of its own. The Ray
    executor's nodes launch bots the same way."""
    if not bot.directory or not bot.command:
        return False
    try:
        return botcommand.read_manifest(bot.directory).command_line() == bot.command
    except botcommand.BotCommandError:
        return False
