"""Running a bot: connect to the referee, say hello, serve matches, reconnect when dropped.

`run(bot)` is all a bot script calls. It finds the referee's address and the bot's token (from
its arguments, else `--address`/`--token` on the command line, else the ARENA_ADDRESS and
ARENA_TOKEN environment variables that the launcher sets), then runs `serve` on an asyncio loop
until SIGTERM or SIGINT.

`serve` keeps one Referee.Play stream open. Each incoming message becomes a job of its match;
jobs of one match run in order, jobs of different matches run at once in a pool of
`bot.max_concurrent` threads, so a slow act() never stalls the stream (a `quick` bot's jobs run
on the loop itself, in the order their messages came). Replies go through one
writer task. When the connection drops, it reconnects with exponential backoff and jitter;
a refusal (unknown token, unsupported protocol version) ends it with RefusedError instead.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import grpc

from . import wire
from .bot import Bot
from .proto import arena_pb2 as pb
from .proto import arena_pb2_grpc
from .types import Match

log = logging.getLogger("arena_sdk")

# The referee allows a client keepalive ping every 10 s at most. Pinging every 20 s keeps clear
# of that limit even when timers jitter (a ping that arrives early counts as a strike, and a few
# strikes make the server close the connection with "too_many_pings"), while still noticing a
# dead connection within half a minute.
KEEPALIVE_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    # A bot waiting for its next match sends no data for long stretches; keep pinging anyway.
    ("grpc.http2.max_pings_without_data", 0),
    # No ping while no stream is open (between reconnect attempts there is nothing to keep).
    ("grpc.keepalive_permit_without_calls", 0),
)

# Each connection attempt gets a subchannel (a TCP connection) of its own instead of one from
# gRPC's process-wide pool, which channels with the same target and options share: a reconnect
# then never rides on the connection of an earlier attempt, nor inherits its reconnect backoff.
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    *KEEPALIVE_OPTIONS,
    ("grpc.use_local_subchannel_pool", 1),
)

# Refusals that a retry cannot fix: report them and stop.
FATAL_CODES = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)

WELCOME_TIMEOUT_S = 30.0

# A stream the referee refused for capacity (RESOURCE_EXHAUSTED, "refused for capacity": too
# many streams of its peer or its socket were open or waiting for Hello) says nothing about
# this bot: it retries within this many seconds, however many attempts failed before, so that a
# slot freed is taken in time for the match that waits for it.
CAPACITY_RETRY_S = 2.0


class RefusedError(Exception):
    """The referee refused this bot for good (unknown token, unsupported protocol version...)."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Backoff:
    """Reconnect delays: `initial` seconds, times `factor` per failed attempt, at most `maximum`,
    each drawn from [d/2, d] so that many bots dropped at once do not return in lockstep."""

    initial: float = 0.5
    factor: float = 2.0
    maximum: float = 30.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        d = min(self.maximum, self.initial * self.factor**attempt)
        return rng.uniform(d / 2, d)


@dataclass
class _MatchSlot:
    match: Match
    tail: asyncio.Future[Any] | None = None  # the match's last scheduled job


@dataclass
class _Connection:
    """The state of one Play stream: its matches and the queue of messages to write."""

    outbox: asyncio.Queue[pb.ActionReply] = field(default_factory=asyncio.Queue)
    matches: dict[str, _MatchSlot] = field(default_factory=dict)
    jobs: set[asyncio.Future[Any]] = field(default_factory=set)


async def serve(
    bot: Bot,
    address: str,
    token: str,
    *,
    credentials: grpc.ChannelCredentials | None = None,
    backoff: Backoff = Backoff(),
    stop: asyncio.Event | None = None,
) -> None:
    """Serve the referee at `address` as the bot with `token` until `stop` is set.

    Reconnects whenever the connection drops; raises RefusedError when the referee refuses the
    bot in a way that a retry cannot fix.
    """
    stop = stop or asyncio.Event()
    workers = _check_bot(bot)
    name = bot.name or type(bot).__name__
    rng = random.Random()  # jitter only: must differ between bots, so not seeded
    attempt = 0
    # Not a `with` block: its exit would join threads still inside act() and block the loop.
    pool = (
        None
        if bot.quick
        else ThreadPoolExecutor(max_workers=workers, thread_name_prefix="arena-bot")
    )
    stopping = asyncio.ensure_future(stop.wait())
    playing: asyncio.Future[bool] | None = None
    try:
        while not stop.is_set():
            welcomed = False
            playing = asyncio.ensure_future(
                _play(bot, name, workers, address, token, credentials, pool)
            )
            await asyncio.wait([playing, stopping], return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set():
                playing.cancel()
                await asyncio.wait([playing])
                break
            at_capacity = False
            try:
                welcomed = playing.result()
                if welcomed:
                    log.warning("the referee at %s ended the stream", address)
            except grpc.aio.AioRpcError as e:
                if e.code() in FATAL_CODES:
                    raise RefusedError(_refusal_message(address, e), e.code()) from None
                at_capacity = _refused_for_capacity(e)
                log.warning("connection to %s failed: %s: %s", address, e.code().name, e.details())
            except RefusedError:
                raise
            except Exception:  # keep a long-running bot alive through the unforeseen
                log.exception("connection to %s broke", address)
            _let_go(playing)
            playing = None
            if welcomed:
                attempt = 0
            delay = backoff.delay(attempt, rng)
            if at_capacity:
                delay = min(delay, rng.uniform(CAPACITY_RETRY_S / 2, CAPACITY_RETRY_S))
            attempt += 1
            log.info("reconnecting in %.2f s", delay)
            try:  # asyncio.timeout, not wait_for: on 3.11 wait_for can lose a cancellation
                async with asyncio.timeout(delay):
                    await asyncio.shield(stopping)
            except TimeoutError:
                pass
    finally:
        stopping.cancel()
        if playing is not None:
            playing.cancel()
        # Jobs still queued would answer a stream that is gone; running ones finish alone.
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


async def _play(
    bot: Bot,
    name: str,
    workers: int,
    address: str,
    token: str,
    credentials: grpc.ChannelCredentials | None,
    pool: ThreadPoolExecutor | None,
) -> bool:
    """One connection, from Hello to the end of the stream. Returns whether it was welcomed;
    raises grpc.aio.AioRpcError when the stream ends with an error status."""
    options = list(CHANNEL_OPTIONS)
    channel = (
        grpc.aio.secure_channel(address, credentials, options=options)
        if credentials
        else grpc.aio.insecure_channel(address, options=options)
    )
    conn = _Connection()
    tasks: list[asyncio.Task[Any]] = []
    async with channel:
        call = arena_pb2_grpc.RefereeStub(channel).Play()
        try:
            await call.write(wire.hello(token, name, workers))
            try:
                async with asyncio.timeout(WELCOME_TIMEOUT_S):
                    first = await call.read()
            except TimeoutError:
                log.warning("no Welcome from %s within %.0f s", address, WELCOME_TIMEOUT_S)
                return False
            if first is grpc.aio.EOF:
                await _raise_for_status(call)
                return False
            if first.WhichOneof("kind") != "welcome":
                raise RefusedError(
                    f"the server at {address} answered Hello with {first.WhichOneof('kind')!r}, "
                    "not Welcome: is it an Arena referee speaking protocol version "
                    f"{wire.PROTOCOL_VERSION}?"
                )
            w = first.welcome
            log.info(
                "connected to %s as %s (protocol %d, up to %d requests at once)",
                address,
                w.bot_name or name,
                w.protocol_version,
                w.max_concurrent,
            )
            tasks = [
                asyncio.create_task(_read_loop(bot, call, conn, pool)),
                asyncio.create_task(_write_loop(call, conn.outbox)),
            ]
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            await _raise_for_status(call)
            for t in done:
                if not t.cancelled() and t.exception() is not None:
                    log.warning("stream to %s broke: %r", address, t.exception())
            return True
        finally:
            for t in tasks:
                t.cancel()
            for job in conn.jobs:
                job.cancel()
            call.cancel()


def _let_go(playing: asyncio.Future[bool]) -> None:
    """Release what a finished connection attempt still holds, so that its channel and TCP
    connection close now rather than whenever the garbage collector runs.

    Closing a grpc.aio channel only destroys it once its last call is freed. The error that
    ended a stream keeps, through its traceback, the frames that hold the call (`_play`,
    grpc's `read`, asyncio's `wait_for`), and `wait_for`'s frame holds the task that holds the
    error: a reference cycle that only the cyclic garbage collector frees. Until it runs, the
    old channel's subchannel stays connected, and a new channel to the same target took that
    same connection from gRPC's shared subchannel pool. Clearing the frames' locals (the
    traceback keeps its lines for the log) breaks the cycle."""
    error = None if playing.cancelled() else playing.exception()
    if error is not None:
        traceback.clear_frames(error.__traceback__)


async def _raise_for_status(call: grpc.aio.StreamStreamCall) -> None:
    code = await call.code()
    if code not in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED, None):
        raise grpc.aio.AioRpcError(
            code,
            await call.initial_metadata(),
            await call.trailing_metadata(),
            await call.details(),
        )


async def _write_loop(
    call: grpc.aio.StreamStreamCall, outbox: asyncio.Queue[pb.ActionReply]
) -> None:
    # Replies that are ready together go out as one message: a write costs more than a reply.
    while True:
        ready = [await outbox.get()]
        while not outbox.empty():
            ready.append(outbox.get_nowait())
        await call.write(wire.replies(ready))


async def _read_loop(
    bot: Bot, call: grpc.aio.StreamStreamCall, conn: _Connection, pool: ThreadPoolExecutor | None
) -> None:
    while True:
        msg = await call.read()
        if msg is grpc.aio.EOF:
            return
        kind = msg.WhichOneof("kind")
        if kind == "action_request":
            _on_request(bot, conn, pool, msg.action_request, time.monotonic())
        elif kind == "action_requests":  # several at once (the Hello said `batches`)
            received_at = time.monotonic()
            for req in msg.action_requests.requests:
                _on_request(bot, conn, pool, req, received_at)
        elif kind == "match_start":
            start = msg.match_start
            m = wire.match(start)
            slot = conn.matches[start.match_id] = _MatchSlot(m)
            _schedule(conn, slot, pool, _call_hook, "on_match_start", bot.on_match_start, m)
        elif kind == "match_end":
            _on_match_end(bot, conn, pool, msg.match_end)
        elif kind == "rejected":
            _on_rejected(bot, conn, pool, msg.rejected)
        # Welcome again, Pong, or a kind newer than this SDK: nothing to do.


def _on_request(
    bot: Bot,
    conn: _Connection,
    pool: ThreadPoolExecutor | None,
    req: pb.ActionRequest,
    received_at: float,
) -> None:
    slot = conn.matches.get(req.match_id)
    if slot is None:
        log.warning(
            "request %d of match %s, whose start this connection never saw: "
            "playing it with a stand-in Match (bot_seed 0)",
            req.request_id,
            req.match_id,
        )
        slot = conn.matches[req.match_id] = _MatchSlot(wire.stand_in_match(req))
    job = _schedule(conn, slot, pool, _decide, bot, slot.match, req, received_at)
    if job.done():  # a quick bot's, decided already
        conn.outbox.put_nowait(job.result())
    else:

        def send(decided: asyncio.Future[pb.ActionReply]) -> None:
            if not decided.cancelled():
                conn.outbox.put_nowait(decided.result())

        job.add_done_callback(send)


def _on_match_end(
    bot: Bot, conn: _Connection, pool: ThreadPoolExecutor | None, end: pb.MatchEnd
) -> None:
    slot = conn.matches.get(end.match_id)
    if slot is None:
        log.warning("end of match %s, which this connection never started", end.match_id)
        return
    # Forget the match now; its hook still runs after the match's earlier jobs.
    del conn.matches[end.match_id]
    _schedule(
        conn, slot, pool, _call_hook, "on_match_end", bot.on_match_end, slot.match, wire.result(end)
    )


def _on_rejected(
    bot: Bot, conn: _Connection, pool: ThreadPoolExecutor | None, rejected: pb.Rejected
) -> None:
    rejection = wire.rejection(rejected)
    played = f"; the referee played {rejection.played_instead}" if rejection.played_instead else ""
    log.warning(
        "match %s request %d rejected: %s: %s%s",
        rejected.match_id,
        rejection.request_id,
        rejection.fault,
        rejection.detail,
        played,
    )
    slot = conn.matches.get(rejected.match_id)
    if slot is not None:
        _schedule(
            conn, slot, pool, _call_hook, "on_rejected", bot.on_rejected, slot.match, rejection
        )


def _schedule(
    conn: _Connection,
    slot: _MatchSlot,
    pool: ThreadPoolExecutor | None,
    fn: Callable[..., Any],
    *args: Any,
) -> asyncio.Future[Any]:
    """Run fn(*args) in the pool after the match's previous job (jobs of one match stay in
    order); returns its future. Without a pool (a quick bot), run it now, on the loop: every
    job then runs at once in the order its message came, so order holds as well. fn is
    _decide or _call_hook, which never raise."""
    loop = asyncio.get_running_loop()
    if pool is None:
        done: asyncio.Future[Any] = loop.create_future()
        done.set_result(fn(*args))
        return done
    prev = slot.tail
    if prev is None or prev.done():
        job: asyncio.Future[Any] = loop.run_in_executor(pool, fn, *args)
    else:
        job = asyncio.ensure_future(_after(prev, loop, pool, fn, args))
    slot.tail = job
    conn.jobs.add(job)
    job.add_done_callback(conn.jobs.discard)
    return job


async def _after(
    prev: asyncio.Future[Any],
    loop: asyncio.AbstractEventLoop,
    pool: ThreadPoolExecutor | None,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
) -> Any:
    await asyncio.wait([prev])  # wait, but never inherit its failure or cancellation
    return await loop.run_in_executor(pool, fn, *args)


def _decide(bot: Bot, match: Match, req: pb.ActionRequest, received_at: float) -> pb.ActionReply:
    """In a worker thread: the bot's reply to one request. A failing act() is logged and answered
    with an empty action, which the referee rejects at once (see Bot.act)."""
    clock = match.clock
    clock.move_ms, clock.time_bank_ms = req.move_ms, req.time_bank_ms
    clock.received_at = received_at
    action = None
    try:
        obs = wire.observation(req.observation)
        legal = wire.legal_actions(req.legal_actions)
        choice = bot.act(obs, legal, match)  # type: ignore[arg-type]
        try:  # one of the request's own actions: send that back as it came
            if len(legal) != len(req.legal_actions):  # some were of a kind this SDK lacks
                raise ValueError
            action = req.legal_actions[legal.index(choice)]
        except ValueError:
            action = wire.action_to_proto(choice)  # raises TypeError for what is no action
            if choice not in legal:
                log.warning(
                    "match %s request %d: act() returned %s, which is not a legal action",
                    req.match_id,
                    req.request_id,
                    choice,
                )
    except Exception:
        log.exception(
            "match %s request %d: act() failed; sending no action (the referee will "
            "play the default action and count a fault)",
            req.match_id,
            req.request_id,
        )
    return wire.reply(req.match_id, req.request_id, action)


def _call_hook(hook_name: str, hook: Callable[..., None], *args: Any) -> None:
    try:
        hook(*args)
    except Exception:
        log.exception("%s() failed", hook_name)


def _check_bot(bot: Bot) -> int:
    """The bot's max_concurrent, once the bot is known to be playable."""
    if type(bot).act is Bot.act:
        raise TypeError(
            f"{type(bot).__name__} must implement act(observation, legal_actions, match)"
        )
    if not isinstance(bot.quick, bool):
        raise ValueError(f"{type(bot).__name__}.quick must be True or False, not {bot.quick!r}")
    n = bot.max_concurrent
    if not isinstance(n, int) or n < 1:
        raise ValueError(
            f"{type(bot).__name__}.max_concurrent must be a whole number >= 1, not {n!r}"
        )
    return n


def _refused_for_capacity(e: grpc.aio.AioRpcError) -> bool:
    return e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "refused for capacity" in (
        e.details() or ""
    )


def _refusal_message(address: str, e: grpc.aio.AioRpcError) -> str:
    code, details = e.code(), e.details() or ""
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return (
            f"the referee at {address} does not know this bot's token ({details}). "
            "Check --token or ARENA_TOKEN: it must be a token the referee issued."
        )
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return (
            f"the referee at {address} does not speak protocol version "
            f"{wire.PROTOCOL_VERSION}, the one this arena-sdk speaks ({details}). "
            "Install an arena-sdk that speaks a version the referee does."
        )
    return f"the referee at {address} refused this bot: {code.name}: {details}"


# ------------------------------------------------------------------------------ run()


@dataclass(frozen=True)
class Settings:
    """Where to connect and as whom, resolved by `settings_from`."""

    address: str
    token: str
    tls_ca: str | None = None


def _joined(argv: Sequence[str]) -> list[str]:
    """`--option VALUE` as `--option=VALUE` for this runner's options, so that a value starting
    with "-" (a token issued before tokens had a prefix starts so one time in 64) is read as the
    value, not as an option."""
    out: list[str] = []
    args = iter(argv)
    for arg in args:
        value = next(args, None) if arg in ("--address", "--token", "--tls-ca") else None
        out.append(arg if value is None else f"{arg}={value}")
    return out


def settings_from(
    address: str | None = None,
    token: str | None = None,
    tls_ca: str | None = None,
    argv: Sequence[str] | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Each setting from the argument, else the command line, else the environment. Exits with
    a usage message when the address or the token is missing."""
    environ = dict(os.environ if environ is None else environ)
    parser = argparse.ArgumentParser(
        description="Run an Arena bot against a referee.",
        epilog="Without options, the environment variables ARENA_ADDRESS, ARENA_TOKEN and "
        "ARENA_TLS_CA are used (the launcher sets the first two).",
    )
    parser.add_argument("--address", help="the referee's HOST:PORT")
    parser.add_argument("--token", help="this bot's token, issued by the referee's owner")
    parser.add_argument(
        "--tls-ca",
        metavar="FILE",
        help="PEM root certificate to connect with TLS (default: plain text)",
    )
    args = parser.parse_args(_joined(sys.argv[1:] if argv is None else argv))
    address = address or args.address or environ.get("ARENA_ADDRESS")
    token = token or args.token or environ.get("ARENA_TOKEN")
    tls_ca = tls_ca or args.tls_ca or environ.get("ARENA_TLS_CA") or None
    if not address:
        parser.error("no referee address: pass --address HOST:PORT or set ARENA_ADDRESS")
    if not token:
        parser.error("no bot token: pass --token TOKEN or set ARENA_TOKEN")
    return Settings(address, token, tls_ca)


def run(
    bot: Bot,
    address: str | None = None,
    token: str | None = None,
    *,
    tls_ca: str | None = None,
    argv: Sequence[str] | None = None,
) -> None:
    """Run `bot` until SIGTERM or SIGINT: the one call a bot script makes.

    `address` (HOST:PORT) and `token` come from the arguments, else from `--address` and
    `--token` on the command line, else from ARENA_ADDRESS and ARENA_TOKEN. With `tls_ca`
    (`--tls-ca FILE`, ARENA_TLS_CA) it connects over TLS trusting that PEM root certificate.
    `argv` is the command line to read (default sys.argv[1:]; pass [] if your script parses its
    own). Exits with status 1 and a message on stderr when the referee refuses the bot.
    """
    settings = settings_from(address, token, tls_ca, argv)
    credentials = None
    if settings.tls_ca:
        try:
            with open(settings.tls_ca, "rb") as f:
                credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
        except OSError as e:
            sys.exit(f"arena-sdk: cannot read the TLS root certificate {settings.tls_ca}: {e}")
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO,
            stream=sys.stderr,
            format="%(asctime)s arena_sdk %(levelname)s %(message)s",
        )
    try:
        asyncio.run(_run(bot, settings, credentials))
    except RefusedError as e:
        print(f"arena-sdk: {e}", file=sys.stderr, flush=True)
        sys.exit(1)


async def _run(bot: Bot, settings: Settings, credentials: grpc.ChannelCredentials | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # not the main thread, or not POSIX
            pass
    await serve(bot, settings.address, settings.token, credentials=credentials, stop=stop)
    log.info("stopped")
