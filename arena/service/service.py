"""The arena service's shell: one process holding the store, the referee (or a Ray cluster),
the web server and the loops that carry out what the scheduler (scheduler.py) decides.

For each configured open ladder it keeps up to `concurrency` duplicate sets in flight among the
ladder's available bots (registered, not suspended, and for remote bots connected), at tables
the scheduler chooses, each set one seed with the seats rotated. Results are stored and rated as
in ladders (by default each set as one result: see arena/ratings.py). A bot the fault
policy condemns is suspended with a reason its owner can read (and an organiser can reinstate
it). SIGTERM or Ctrl-C stops it gracefully: no new matches, matches in flight get `grace_s` to
finish, the rest are recorded as abandoned (never rated), then bots, referee and web server are
stopped. A restart carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from arena.deadlines import within
from arena.ladder import lease, remote
from arena.ladder.executors import RunSettings
from arena.ladder.runner import BotUnlaunchable, InfrastructureError, MatchExecutor
from arena.ratings import DEFAULT_RATING_MODE, Rater
from arena.runtimes import Runtimes
from arena.stopsignals import on_stop_signals
from arena.store import (
    DEFAULT_UPLOADS_PER_DAY,
    RUNNABLE,
    AsyncStore,
    Bot,
    Competition,
    Ladder,
    Store,
    StoredMatch,
    parse_bot_spec,
    playing_versions,
)
from arena.store.registry import VERIFYING
from arena.store.scrimmages import DEFAULT_SCRIMMAGE_SETS_PER_DAY
from arena.submissions.archive import Limits as UploadLimits

from .competitions import CompetitionDriver, open_ladders
from .scheduler import Scheduler, SchedulerSettings, Step
from .scrimmages import Scrimmager
from .scrimmages import plan as plan_scrimmage
from .tables import FaultPolicy
from .verification import VerificationSettings, Verifier

log = logging.getLogger(__name__)
# How long a set whose match failed for the platform's own reasons keeps its place (seconds).
INFRA_BACKOFF_S = 1.0

ALLOW_REMOTE = "--allow-remote"  # the option of `arena serve` that seats remote bots


@dataclass(frozen=True)
class LadderSpec:
    name: str
    game: str
    table_size: int
    options: dict[str, Any] = field(default_factory=dict)
    # The bots that may play in it (None: every registered bot), for bots of one game only.
    members: frozenset[str] | None = None


@dataclass(frozen=True)
class ServiceSettings:
    db: Path
    ladders: tuple[LadderSpec, ...]
    referee_host: str = "127.0.0.1"
    referee_port: int = 50051
    web_host: str = "127.0.0.1"
    web_port: int = 8000
    admin_key: str | None = None
    # How matches are played (concurrency: matches in flight per ladder).
    run: RunSettings = RunSettings(run_dir=Path("runs/serve"))
    grace_s: float = 30.0
    fault_policy: FaultPolicy = FaultPolicy()
    share_cap: float = 1.5
    max_matches: int | None = None  # stop after this many (tests, demos); None = until stopped
    seed: int | None = None
    rating_mode: str = DEFAULT_RATING_MODE  # of a new ladder; an existing one keeps its own
    upload_limits: UploadLimits | None = None  # of submitted archives (None: the defaults)
    # Uploads a bot may have in 24 hours; None: the store's setting (the last one given), else
    # arena.store.DEFAULT_UPLOADS_PER_DAY. A value given is stored for later starts.
    uploads_per_day: int | None = None
    # Scrimmage sets (scrimmages.py) a bot may have in 24 hours; None: the store's setting (the
    # last one given), else arena.store.scrimmages.DEFAULT_SCRIMMAGE_SETS_PER_DAY; stored.
    scrimmage_sets_per_day: int | None = None
    verification: VerificationSettings = VerificationSettings()
    # Seat remote bots (they run on their owners' machines, where lanes cannot be enforced:
    # arena/ladder/remote.py). Off by default: a public server seats only bots it launches.
    allow_remote: bool = False
    # Competitions to run (arena competition create makes them): their open ladders join
    # `ladders` while they are open; their finals are played here (competitions.py).
    competitions: tuple[str, ...] = ()
    # The rotation of the bots' match logs (docs/web.md#match-logs): those older than this
    # many days removed, then the oldest until they hold at most this many MB (None: no bound
    # of that kind); checked at start and every MATCH_LOG_ROTATION_S.
    match_logs_days: float | None = 30.0
    match_logs_mb: float | None = 1024.0


# How often arena serve applies the match logs' rotation.
MATCH_LOG_ROTATION_S = 3600.0


class ArenaService:
    """The shell that runs the scheduler (scheduler.py): the store, the executor, the web
    server, the loops of the ladders, the matches in flight, and the graceful stop."""

    def __init__(self, settings: ServiceSettings):
        self.settings = settings
        self.scheduler = Scheduler(
            SchedulerSettings(
                concurrency=settings.run.concurrency,
                share_cap=settings.share_cap,
                fault_policy=settings.fault_policy,
                max_matches=settings.max_matches,
                seed=settings.seed,
                allow_remote=settings.allow_remote,
            )
        )
        self.store: AsyncStore | None = None
        self.executor: MatchExecutor | None = None
        self.web = None
        self._stopping = asyncio.Event()
        self._in_flight: dict[str, set[asyncio.Task]] = {}  # ladder -> its sets playing
        self._running: dict[tuple[str, int], str] = {}  # (ladder, index) -> referee match id
        self._specs = {spec.name: spec for spec in settings.ladders}
        self.ladders = settings.ladders  # and the competitions' open ladders, once read
        self.competitions: CompetitionDriver | None = None
        self.ready = asyncio.Event()  # set once the referee and web server listen
        self._lost: Exception | None = None  # why it stopped: a lease taken over, a ladder's error
        self._ladders: dict[str, Ladder] = {}
        self.verifier: Verifier | None = None  # submitted versions' verification
        # The upload limit in force: settings.uploads_per_day, or the store's once it is open.
        self.uploads_per_day = settings.uploads_per_day or DEFAULT_UPLOADS_PER_DAY
        self.scrimmager: Scrimmager | None = None  # owners' scrimmages
        self.scrimmage_sets_per_day = (
            settings.scrimmage_sets_per_day
            if settings.scrimmage_sets_per_day is not None
            else DEFAULT_SCRIMMAGE_SETS_PER_DAY
        )

    # ------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Serve until stopped: by `stop()`, SIGINT or SIGTERM, or the match quota."""
        with on_stop_signals(self.stop):
            await self._serve()

    async def _serve(self) -> None:
        s = self.settings
        self.store = await AsyncStore.open(s.db)
        leases = contextlib.AsyncExitStack()  # one run per ladder: see arena/ladder/lease.py
        try:
            self.uploads_per_day = await self.store.run(Store.uploads_per_day, s.uploads_per_day)
            self.scrimmage_sets_per_day = await self.store.run(
                Store.scrimmage_sets_per_day, s.scrimmage_sets_per_day
            )
            competitions = await self._read_competitions()
            finals = [c.finals_ladder for c in competitions]
            await leases.enter_async_context(
                lease.held(
                    self.store, [ladder.name for ladder in self.ladders] + finals, self._fail
                )
            )
            self.executor = s.run.make_executor(
                self.store,
                host=s.referee_host,
                port=s.referee_port,
                refuse_remote=None if s.allow_remote else remote.refused_at_hello(ALLOW_REMOTE),
            )
            await self._say_remote()
            if competitions:  # before the web server: uploads are checked against them
                self.competitions = CompetitionDriver(
                    competitions, self.store, self.executor, s.run, self._stopping
                )
            ladders = [
                await self.store.run(
                    Store.ensure_open_ladder,
                    ladder.name,
                    ladder.game,
                    ladder.table_size,
                    options=ladder.options,
                    rating_mode=s.rating_mode,
                )
                for ladder in self.ladders
            ]
            self._ladders = {ladder.name: ladder for ladder in ladders}
            await self.executor.start([])
            self.verifier = Verifier(
                self.store,
                self.executor,
                # Installs and builds are confined as the bots are (--no-sandbox: neither).
                dataclasses.replace(s.verification, confined=s.run.resource_limits.sandbox),
                self._ladder_for,
                self._opponents,
                self.scheduler.rng,
                playing=lambda: any(self._in_flight.values()),  # a build then yields to them
            )
            await self.verifier.sweep()  # before any verification makes an entry
            self.scrimmager = Scrimmager(
                self.store, self.executor, s.run.limits, self._ladders.get, self._barred
            )
            self.web = await self._start_web()
            self.ready.set()
            log.info(
                "arena serving: %s, web on http://%s:%d/; uploads: %d per bot per 24 h",
                self._where(),
                s.web_host,
                s.web_port,
                self.uploads_per_day,
            )
            loops = [asyncio.ensure_future(self._ladder_loop(ladder)) for ladder in ladders]
            if self.competitions is not None:
                loops.append(asyncio.ensure_future(self.competitions.run()))
                loops[-1].add_done_callback(self._competitions_ended)
            loops.append(asyncio.ensure_future(self._rotate_match_logs()))
            for name in await self.store.run(Store.versions_verifying):  # left by a stop
                self.verify_later(name)
            await self.scrimmager.start()  # and the scrimmages a stop left unfinished
            await self._stopping.wait()
            for task in loops:
                task.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            await self._drain()
            if self._lost is not None:
                raise self._lost
        finally:
            if self.scrimmager is not None:
                await self.scrimmager.close()
            if self.verifier is not None:
                await self.verifier.close()
            if self.web is not None:
                await self.web.stop()
            if self.executor is not None:
                await self.executor.close()
            await leases.aclose()
            await self.store.close()

    async def _read_competitions(self) -> list[Competition]:
        """The competitions to run, their open ladders added to the service's ladders."""
        found = await self._db.run(open_ladders, self.settings.competitions)
        specs = tuple(
            LadderSpec(
                ladder,
                c.game,
                c.table_size,
                dict(c.options),
                frozenset(c.bots) if c.bots is not None else None,
            )
            for c, ladder in found
        )
        self.ladders = self.settings.ladders + specs
        self._specs.update({spec.name: spec for spec in specs})
        return [c for c, _ in found]

    def _competitions_ended(self, task: asyncio.Task) -> None:
        if not task.cancelled() and (err := task.exception()) is not None:
            log.error("the competitions stopped: %s", err)
            self._fail(err)  # type: ignore[arg-type]

    def _fail(self, err: Exception) -> None:
        """Stop the service; `run()` then raises `err` (the first one)."""
        if self._lost is None:
            self._lost = err
        self._stopping.set()

    async def _rotate_match_logs(self) -> None:
        """The organiser's rotation of the bots' match logs, at start and then hourly."""
        s = self.settings
        if s.match_logs_days is None and s.match_logs_mb is None:
            return
        while True:
            removed = await self._db.run(Store.prune_match_logs, s.match_logs_days, s.match_logs_mb)
            if removed:
                log.info("match logs: %d removed by the rotation", removed)
            await asyncio.sleep(MATCH_LOG_ROTATION_S)

    @property
    def _db(self) -> AsyncStore:
        """The store, open while the service runs (every method below runs only then)."""
        assert self.store is not None, "the service's store is open only while it runs"
        return self.store

    @property
    def _executor(self) -> MatchExecutor:
        """The executor, made when the service starts (as the store)."""
        assert self.executor is not None, "the service's executor exists only while it runs"
        return self.executor

    def _referee(self):
        """The local referee (None on Ray: its referees are on the nodes)."""
        return getattr(self.executor, "referee", None)

    def _directory(self):
        """The local referee's connected bots (None on Ray)."""
        referee = self._referee()
        return referee.server.directory if referee is not None else None

    def _where(self) -> str:
        referee = self._referee()
        if referee is None:
            return f"matches on the Ray cluster at {self.settings.run.ray_address}"
        return f"referee on {referee.server.address}"

    def stop(self) -> None:
        """Begin a graceful stop (what SIGTERM and Ctrl-C do)."""
        self._stopping.set()

    async def _drain(self) -> None:
        tasks = [t for group in self._in_flight.values() for t in group]
        if not tasks:
            return
        log.info("waiting up to %.0f s for %d matches in flight", self.settings.grace_s, len(tasks))
        done, pending = await asyncio.wait(tasks, timeout=self.settings.grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _start_web(self):
        from .webserver import WebServer

        web = WebServer(self, self.settings.web_host, self.settings.web_port)
        await web.start()
        return web

    # ------------------------------------------------------------ running the scheduler

    async def _ladder_loop(self, ladder: Ladder) -> None:
        """Run the ladder's scheduler until the service stops. It never ends silently: an
        error that is not a match's (the executor cannot start its bots, a bug) is logged and
        stops the service with that error, as a lost lease does, instead of leaving it serving
        pages with no ladder running."""
        try:
            await self._schedule(ladder)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            log.error("the ladder %s stopped: %s", ladder.name, err, exc_info=True)
            self._fail(err)

    async def _schedule(self, ladder: Ladder) -> None:
        name = ladder.name
        self._in_flight[name] = set()
        self.scheduler.open_ladder(name, Rater(ladder.rating_params), self._specs[name].members)
        await self._resume(ladder)
        while not self._stopping.is_set():
            if self.competitions is not None and not self.competitions.ladder_open(name):
                return  # a competition's open ladder, frozen: its sets in flight end on their own
            step = self.scheduler.next_step(len(self._in_flight[name]))
            if step is Step.STOP:
                self.stop()
                return
            if step is Step.CHOOSE:
                try:
                    table = await self._next_table(ladder)
                except BotUnlaunchable as err:  # that bot's fault: the others play on
                    # The public reason names no path of this machine; the log has the detail.
                    reason = "its command cannot be launched (the server's log says why)"
                    await self._db.run(Store.suspend_bot, err.bot, reason)
                    log.warning("suspended %s: %s", err.bot, err)
                    continue
                except InfrastructureError as err:  # the executor could not start the bots
                    log.warning(
                        "ladder %s: cannot start its bots (%s); trying again in %.0f s",
                        name,
                        err,
                        INFRA_BACKOFF_S,
                    )
                    with contextlib.suppress(TimeoutError):
                        await within(self._stopping.wait(), INFRA_BACKOFF_S)
                    continue
                if table is not None:
                    await self._start_set(ladder, table)
                    continue
            await self._wait_for_change(name)

    async def _wait_for_change(self, ladder: str) -> None:
        # Woken by a match ending, or after a short while to see newly connected bots.
        tasks = self._in_flight[ladder] | {asyncio.ensure_future(self._stopping.wait())}
        done, _ = await asyncio.wait(tasks, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            if t not in self._in_flight[ladder] and not t.done():
                t.cancel()

    async def _resume(self, ladder: Ladder) -> None:
        """Matches left pending or running by a previous run are abandoned: the service chooses
        tables afresh from the bots available now."""
        await self._db.run(Store.reset_running, ladder.name)
        for match in await self._db.run(Store.matches, ladder.name, RUNNABLE):
            await self._db.run(
                Store.record_infra_failure,
                ladder.name,
                match.index,
                "abandoned: the server stopped before it ran",
                give_up=True,
            )

    async def _next_table(self, ladder: Ladder) -> tuple[str, ...] | None:
        name = ladder.name
        directory = self._directory()
        connected = None if directory is None else lambda bot: directory.get(bot) is not None
        registered = await self._db.run(Store.list_bots)
        await self._stop_unseatable(registered)
        bots = self.scheduler.available(name, registered, connected)
        if len(bots) < ladder.table_size:
            return None
        await self._executor.start(bots)  # launches command bots not running yet
        for bot in self.scheduler.newcomers(name, [b.name for b in bots]):
            await self._db.run(Store.join_ladder, name, bot)
            self.scheduler.joined(name, bot, time.monotonic())
        standings = (await self._db.run(Store.rankings, name)).standings
        return self.scheduler.choose_table(
            name, ladder.table_size, [b.name for b in bots], standings
        )

    async def _start_set(self, ladder: Ladder, table: tuple[str, ...]) -> None:
        """Play the table as a duplicate set: one seed, the seats rotated through every
        position, one match after another."""
        matches = await self._db.run(Store.add_set, ladder.name, table, self.scheduler.new_seed())
        self.scheduler.set_started(ladder.name, table, len(matches), time.monotonic())
        task = asyncio.ensure_future(self._play_set(ladder, table, matches))
        self._in_flight[ladder.name].add(task)
        task.add_done_callback(self._in_flight[ladder.name].discard)

    async def _play_set(
        self, ladder: Ladder, table: tuple[str, ...], matches: list[StoredMatch]
    ) -> None:
        try:
            for i, match in enumerate(matches):
                if self._stopping.is_set() and i > 0:
                    raise asyncio.CancelledError
                await self._play_one(ladder, match)
        except asyncio.CancelledError:
            for match in matches:
                await asyncio.shield(
                    self._db.run(
                        Store.record_infra_failure,
                        ladder.name,
                        match.index,
                        "abandoned: the server was stopping",
                        give_up=True,
                    )
                )
        finally:
            self.scheduler.set_ended(ladder.name, table, len(matches))

    async def _play_one(self, ladder: Ladder, match: StoredMatch) -> None:
        barred = await self._barred(match.seats)
        if barred is not None:  # suspended or removed since its table was chosen
            await self._db.run(
                Store.record_infra_failure,
                ladder.name,
                match.index,
                f"abandoned: {barred}",
                give_up=True,
            )
            return
        running = await self._db.run(Store.start_match, ladder.name, match.index)
        assert running.match_key is not None  # start_match gives every attempt its id
        self._running[(ladder.name, match.index)] = running.match_key
        try:
            result, node = await self._executor.play(ladder, running, self.settings.run.limits)
        except InfrastructureError as err:
            self._running.pop((ladder.name, match.index), None)
            await self._db.run(
                Store.record_infra_failure, ladder.name, match.index, str(err), give_up=True
            )
            log.warning("match %s of %s not played: %s", match.index, ladder.name, err)
            # The platform itself failed (out of descriptors, say): this set's place stays taken
            # a moment, so the scheduler does not start set after set into the same failure.
            with contextlib.suppress(TimeoutError):
                await within(self._stopping.wait(), INFRA_BACKOFF_S)
            return
        await asyncio.shield(
            self._db.run(Store.record_result, ladder.name, match.index, result, node=node)
        )
        self._running.pop((ladder.name, match.index), None)
        for bot, reason in self.scheduler.match_played(result.seat_names, result.faulted_seats):
            await self._db.run(Store.suspend_bot, bot, reason)
            log.warning("suspended %s: %s", bot, reason)

    async def _say_remote(self) -> None:
        """Whether this server seats remote bots, said once at start (its log: stderr)."""
        names = remote.remote_names(await self._db.run(Store.list_bots))
        if self.settings.allow_remote:
            log.warning(
                "%s",
                remote.warning(
                    "arena serve (--allow-remote)",
                    names or ["none registered yet"],
                    f"restart without {ALLOW_REMOTE}",
                ),
            )
        elif names:
            log.warning(
                "remote bots are not seated (%s): they cannot connect; pass %s to seat them (%s)",
                ", ".join(names),
                ALLOW_REMOTE,
                remote.UNFAIR,
            )

    async def _stop_unseatable(self, registered: list[Bot]) -> None:
        """Stop the processes and tokens of launched versions no ladder here can seat any
        more (retired by a newer version or a rollback, an older active version), and refuse
        their registered tokens (LocalExecutor._authenticate); remote bots are not launched
        here and are left as they are. A version plays where its ladder's members name it
        (NAME: the newest active, NAME@N: that one, retired or not; store.playing_versions).
        A version being verified is the verifier's. Its lanes end once their matches in
        flight are over; seated again, it is launched again. (Processes merely unused end
        after the idle time: RunSettings.idle_stop_s.)"""
        seatable = {
            b.name for spec in self.ladders for b in playing_versions(registered, spec.members)
        }
        if self.competitions is not None:
            seatable |= self.competitions.seatable()
        unseatable = [
            b.name
            for b in registered
            if not b.remote and b.status != VERIFYING and b.name not in seatable
        ]
        if unseatable:
            await self._executor.retire(unseatable)

    async def _barred(self, seats) -> str | None:
        """Why one of these bots may not play now (suspended or removed), or None."""
        access = await self._db.run(Store.bot_access, seats)
        for bot in seats:
            if bot not in access:
                return f"bot {bot} was removed"
            if access[bot].suspended:
                return f"bot {bot} is suspended ({access[bot].suspended_reason})"
        return None

    # ------------------------------------------------------------ submitted versions

    def verify_later(self, name: str) -> None:
        """Verify the submitted version `name` in the background (verification.py)."""
        assert self.verifier is not None, "versions are submitted only while the service runs"
        self.verifier.start(name)

    async def plan_scrimmage(
        self, family: str, opponents: Sequence[str]
    ) -> tuple[Ladder, Bot, list[Bot]]:
        """A scrimmage's ladder, bot and opponents (scrimmages.plan: the bots that ladder may
        seat now)."""
        assert self.store is not None, "scrimmages are asked for only while the service runs"
        return await plan_scrimmage(
            self.store, family, opponents, self._ladder_for, self._opponents
        )

    def scrimmage_later(self, scrimmage_id: int, family: str) -> None:
        assert self.scrimmager is not None, "scrimmages are asked for only while it runs"
        self.scrimmager.play_later(scrimmage_id, family)

    def _ladder_for(self, bot: Bot) -> Ladder | None:
        """The ladder a version of `bot` is verified for: the first it may play in."""
        for spec in self.ladders:
            if spec.members is None or any(
                parse_bot_spec(m)[0] == bot.family for m in spec.members
            ):
                return self._ladders[spec.name]
        return None

    async def _opponents(self, ladder: Ladder, bot: Bot) -> list[Bot]:
        """The bots `ladder` may seat now (none while its loop has not opened it)."""
        if ladder.name not in self._in_flight:
            return []
        directory = self._directory()
        connected = None if directory is None else lambda b: directory.get(b) is not None
        return self.scheduler.available(ladder.name, await self._db.run(Store.list_bots), connected)

    # ------------------------------------------------------------ for the web server
    # (the admin and owners' APIs ask for these: backends.py)

    @property
    def admin_key(self) -> str | None:
        return self.settings.admin_key

    @property
    def db(self) -> Path:
        return self.settings.db

    async def upload_terms(self, family: str) -> int:
        """The uploads the bot `family` may have in 24 hours now; UploadsClosed once a
        competition it enters is frozen (competitions.py)."""
        if self.competitions is None:
            return self.uploads_per_day
        return await self.competitions.upload_terms(family, self.uploads_per_day)

    @property
    def upload_limits(self) -> UploadLimits:
        return self.settings.upload_limits or UploadLimits()

    @property
    def runtimes(self) -> Runtimes:
        return self.settings.verification.runtimes

    async def check_access(self) -> None:
        """End the streams of bots revoked just now (the admin API calls it after a change,
        rather than wait for the referee's periodic check). On Ray, bots are launched on the
        nodes and are not checked."""
        check = getattr(self.executor, "check_access", None)
        if check is not None:
            await check()

    def live_replay(self, ladder: str, index: int) -> dict[str, Any] | None:
        """The replay so far of a match this service is playing (the web's LiveSource). Called
        from the web server's worker threads: it returns a fresh snapshot."""
        match_id = self._running.get((ladder, index))
        referee = getattr(self.executor, "referee", None)
        if match_id is None or referee is None:
            return None  # on Ray the match is played on a node: shown when it is stored
        live = referee.server.live.get(match_id)
        return live.replay_so_far() if live is not None else None
