"""Lanes: a launched bot plays rotation r of a duplicate set only in its lane r, a process of its
own (docs/bots.md#lanes). Over a set of k rotations one deal is dealt k times with the seats
rotated, so one process that played two rotations would have seen two seats' hands of one deal.

A lane is named by its key (`lane_key`): the bot's name for lane 0 (what `arena match` and a
match of no set use), NAME+laneR for lane R ('+' is never in a bot's name). The key is what the
lane's token authenticates as, what the referee's directory routes its seats to, and the name of
its work directory (bots/KEY) and log (logs/KEY.log); results, ratings and seat names keep the
bot's public name.

`LanePool` keeps one referee's launched lanes: launched when a seat first needs them, launched
again after a crash (at most MAX_RELAUNCHES per bot and run), ended after `idle_stop_s` without
a match (and at once when the bot may no longer be seated: `retire`). Shared by LocalExecutor
and the Ray executor's node actors.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable, Iterable, Sequence

if TYPE_CHECKING:
    from .host import RefereeHost

log = logging.getLogger(__name__)

LANE_MARK = "+lane"
# How many times a bot's crashed lanes are launched again during one run, all lanes together
# (each crash is already a fault of the matches it was in, counted per bot).
MAX_RELAUNCHES = 20
# Default for RunSettings.idle_stop_s: a launched lane that played nothing for this long ends.
IDLE_STOP_S = 120.0
# How long a relaunch's Hello is waited for, for the record (the seat has its own connect_ms).
HELLO_WAIT_S = 60.0


def lane_key(name: str, lane: int) -> str:
    """The key of bot `name`'s lane `lane` (module docstring)."""
    if lane < 0:
        raise ValueError(f"a lane is a rotation, 0 or more; got {lane}")
    return name if lane == 0 else f"{name}{LANE_MARK}{lane}"


def bot_of(key: str) -> str:
    """The bot a lane key belongs to (a bot's name is its own key)."""
    return key.partition(LANE_MARK)[0]


@dataclass
class LaneStats:
    """What a pool did, for the benchmark and the logs."""

    launches: int = 0
    idle_stops: int = 0
    # Seconds from a seat needing a lane that had been ended (idle or retired) to that lane's
    # Hello: what a relaunch costs a match.
    relaunch_hello_s: list[float] = field(default_factory=list)


class LanePool:
    """One referee's launched lanes (module docstring). `launch(name, lane)` starts one lane's
    process through the host (the caller resolves the bot's command); `launchable(name)` says
    whether a bot is launched here at all (a remote bot is not: it has no lanes)."""

    def __init__(
        self,
        host: "RefereeHost",
        launch: Callable[[str, int], Awaitable[None]],
        launchable: Callable[[str], bool],
        idle_stop_s: float = IDLE_STOP_S,
        one_process: bool = False,
    ):
        self.host = host
        self._launch = launch
        self._launchable = launchable
        self.idle_stop_s = idle_stop_s
        # Every rotation in lane 0: one process per bot, as before lanes. For the benchmark
        # only (scripts/benchsuites/ladder.py): it lets one process see every hand of a set.
        self.one_process = one_process
        self.lock = asyncio.Lock()  # held while lanes are launched or stopped
        self.stats = LaneStats()
        self._in_flight: dict[str, int] = {}  # lane key -> matches it plays now
        self._last_used: dict[str, float] = {}  # lane key -> when its last match ended
        self.relaunches: dict[str, int] = {}  # bot -> crashed lanes launched again
        self._ended: set[str] = set()  # lane keys ended by the pool (idle, retired)
        self.retired: set[str] = set()  # bots that may no longer be seated here
        self._watch: asyncio.Task | None = None
        self._closing = False  # close() began: the idle watch ends
        self._background: set[asyncio.Task] = set()

    def lane(self, rotation: int) -> int:
        """The lane that plays a match of this rotation."""
        return 0 if self.one_process else rotation

    def start(self) -> None:
        """Begin ending idle lanes (idle_stop_s 0: never)."""
        if self._watch is None and self.idle_stop_s > 0:
            self._closing = False
            self._watch = asyncio.ensure_future(self._watch_idle())

    async def close(self) -> None:
        self._closing = True
        tasks = [t for t in (self._watch, *self._background) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._watch = None

    # ------------------------------------------------------------ seating

    async def acquire(self, names: Sequence[str], lane: int) -> None:
        """Make sure each launched bot of `names` has its lane `lane` running (launched the
        first time, after an idle stop, or again after a crash within MAX_RELAUNCHES), and
        count the match as in flight on it until `release`."""
        counted: list[str] = []
        async with self.lock:
            try:
                for name in names:
                    if not self._launchable(name):
                        continue
                    self.retired.discard(name)
                    key = lane_key(name, lane)
                    self._in_flight[key] = self._in_flight.get(key, 0) + 1
                    counted.append(name)
                    await self._ensure(name, lane, key)
            except BaseException:  # no match will release what was counted
                self.release(counted, lane)
                raise

    async def _ensure(self, name: str, lane: int, key: str) -> None:
        proc = self.host.bots.get(key)
        if proc is None:
            needed_at = time.monotonic()
            await self._launch(name, lane)
            self.stats.launches += 1
            if key in self._ended:
                self._ended.discard(key)
                self._time_hello(key, needed_at)
        elif proc.exit_info() is not None:
            count = self.relaunches.get(name, 0)
            if count < MAX_RELAUNCHES:  # else its seats fault as crashed
                self.relaunches[name] = count + 1
                await self.host.stop_lane(key)  # what the crashed bot left
                await self._launch(name, lane)
                self.stats.launches += 1

    def release(self, names: Sequence[str], lane: int) -> None:
        """The match `acquire` counted is over: its lanes' idle time starts now."""
        now = time.monotonic()
        for name in names:
            key = lane_key(name, lane)
            if key in self._in_flight:
                self._in_flight[key] -= 1
                if not self._in_flight[key]:
                    del self._in_flight[key]
                self._last_used[key] = now

    def lanes_of(self, name: str) -> list[str]:
        """The keys of the bot's lanes running here."""
        return [k for k in self.host.bots if bot_of(k) == name]

    # ------------------------------------------------------------ ending lanes

    def retire(self, names: Iterable[str]) -> None:
        """These bots may no longer be seated here (a retired version): their lanes end as soon
        as they play no match, and their tokens with them. Seating one again undoes it."""
        self.retired.update(names)

    async def stop_bot(self, name: str) -> None:
        """End every lane of the bot now, and every token issued to it."""
        async with self.lock:
            self.host.tokens.revoke(name)
            ending = [self._detach(k) for k in self.lanes_of(name)]
        await asyncio.gather(*ending)

    async def stop_idle(self, now: float | None = None) -> list[str]:
        """End the lanes that played nothing for idle_stop_s, and those of retired bots that
        play nothing now; returns their keys."""
        now = time.monotonic() if now is None else now
        async with self.lock:
            idle = [
                key
                for key in self.host.bots
                if key not in self._in_flight
                and (
                    bot_of(key) in self.retired
                    or (
                        self.idle_stop_s > 0
                        and now - self._last_used.setdefault(key, now) >= self.idle_stop_s
                    )
                )
            ]
            # Out of the host's lanes under the lock: a seat taken meanwhile launches anew.
            ending = [self._detach(key) for key in idle]
            self._ended.update(idle)
            self.stats.idle_stops += len(idle)
        if idle:
            log.info("ending idle or retired bot lanes: %s", ", ".join(sorted(idle)))
        await asyncio.gather(*ending)
        return idle

    def _detach(self, key: str) -> Awaitable[None]:
        """Take a lane out of the host (its token revoked, RefereeHost.detach_lane); the caller
        awaits the end of its process and socket."""
        self._last_used.pop(key, None)
        return self.host.detach_lane(key)

    async def _watch_idle(self) -> None:
        period = max(0.05, min(1.0, self.idle_stop_s / 4))
        # Ended by close(): cancelled, and told by the flag too (a cancellation lost deeper
        # down, arena.deadlines, must not keep close() waiting for ever).
        while not self._closing:
            await asyncio.sleep(period)  # a period, not a synchronisation
            if self._closing:
                return
            try:
                await self.stop_idle()
            except Exception:  # the watch must go on: idle lanes would hold memory forever
                log.exception("ending idle bot lanes failed; trying again in %.2f s", period)

    def _time_hello(self, key: str, needed_at: float) -> None:
        async def wait() -> None:
            conn = await self.host.server.directory.wait_for(key, HELLO_WAIT_S)
            if conn is not None:
                waited = time.monotonic() - needed_at
                self.stats.relaunch_hello_s.append(waited)
                log.info(
                    "bot lane %s launched again: its Hello came %.0f ms after a seat needed it",
                    key,
                    waited * 1000,
                )

        task = asyncio.ensure_future(wait())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
