"""The referee's gRPC server (grpc.aio): bot streams, spectator streams, health.

Thin servicers: `Play` authenticates the bot's Hello, then runs the stream's reader and writer
around a `BotConnection`; `Watch` streams a live match's public events. The matches themselves
are run by whoever owns the server (`arena match`, the ladder runner, `arena serve`) through
`match.play_match` with `RemoteSeat`s from this server's directory.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import shutil
import socket as sockets
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, NoReturn, Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from arena.deadlines import within
from arena.games.base import Event, State
from arena.processes import owned_dir
from arena.results import MALFORMED, MatchResult
from arena.tokens import hash_token

from . import wire
from .admission import BOT_SOCKET_CAPS, TCP_CAPS, Admission
from .connection import BotConnection, BotDirectory
from .lanes import bot_of
from .match import MatchObserver

log = logging.getLogger(__name__)

PROTOCOL_VERSIONS = (1,)
# The referee caps how many requests a bot may have outstanding, whatever it declares.
MAX_CONCURRENT_CAP = 64
# A stream must say Hello this soon after it opens (the SDK writes it at once). Streams that
# have not said it cost a handler each and cannot be charged to a bot: how many each peer may
# hold at once is capped by admission.AdmissionCaps, and beyond, new streams are refused with
# RESOURCE_EXHAUSTED (a bot's own streams are one per bot: a newer one replaces the older).
HELLO_TIMEOUT_S = 5.0
# Spectator streams at once; beyond, Watch answers RESOURCE_EXHAUSTED.
MAX_WATCHERS = 1024
# Bot messages are small (an action reply is tens of bytes); anything larger is refused by gRPC
# with RESOURCE_EXHAUSTED before it reaches us. Observations sent to bots are a few KiB.
MAX_RECEIVE_BYTES = 64 * 1024
MAX_SEND_BYTES = 4 * 1024 * 1024

# Documented keepalive: the server pings an idle stream every 20 s and drops a peer that does not
# answer within 10 s; clients may ping every 10 s at most (the SDK does so).
SERVER_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
    ("grpc.max_send_message_length", MAX_SEND_BYTES),
    ("grpc.so_reuseport", 0),
    # A connection that has not spoken HTTP/2 (sent its settings) within 5 s is closed: a
    # plain connect() that says nothing holds a descriptor for that long at most.
    ("grpc.server_handshake_timeout_ms", 5_000),
)
# The TCP port (remote bots, spectators). Connections at once, whoever they are from: at most
# TCP_MAX_CONNECTIONS and a quarter of the process's descriptor limit (tcp_options); beyond,
# grpc closes a new connection as soon as it is accepted, so the platform's descriptors stay
# bounded. Streams per connection (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS: a client's extra
# streams wait on its side). A connection that holds no stream for 60 s is closed.
TCP_MAX_CONNECTIONS = 1024
TCP_STREAMS_PER_CONNECTION = 16


def tcp_options() -> tuple[tuple[str, int], ...]:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    connections = TCP_MAX_CONNECTIONS
    if soft != resource.RLIM_INFINITY:
        connections = max(16, min(connections, soft // 4))
    return SERVER_OPTIONS + (
        ("grpc.max_allowed_incoming_connections", connections),
        ("grpc.max_concurrent_streams", TCP_STREAMS_PER_CONNECTION),
        ("grpc.max_connection_idle_ms", 60_000),
    )


# A launched bot's own Unix socket: a few connections and streams, all its own.
BOT_SOCKET_OPTIONS = SERVER_OPTIONS + (
    ("grpc.max_allowed_incoming_connections", 4),
    ("grpc.max_concurrent_streams", 4),
    ("grpc.max_connection_idle_ms", 60_000),
)

# token -> bot name, or None for an unknown token; raises Refused for a known bot that may
# not play (suspended).
Authenticator = Callable[[str], Awaitable[str | None]]


# A Unix socket's path is at most 107 bytes; the bots' sockets are named bot-N.sock.
SOCKET_PATH_MAX = 107


SOCKET_DIR_PREFIX = "arena-referee-"


def _socket_base() -> str:
    """Where the bots' sockets go (a private folder is made in it): TMPDIR, unless its path
    is too long for a socket's (seen under pytest's deep temporary folders), then /tmp."""
    base = tempfile.gettempdir()
    longest = os.path.join(base, f"{SOCKET_DIR_PREFIX}9999999-" + "x" * 8, "bot-9999999.sock")
    return base if len(longest.encode()) <= SOCKET_PATH_MAX else "/tmp"


def make_socket_dir(base: str) -> Path:
    """A private folder for one referee's bot sockets, named after this process
    (arena-referee-PID-XXXXXXXX), after removing those of referees that died without removing
    theirs (killed -9: a stop removes its own)."""
    return owned_dir(base, SOCKET_DIR_PREFIX)


class Refused(Exception):
    """A bot may not play (its token was rotated, it is suspended or removed): the status and
    message its stream is refused or ended with."""

    def __init__(self, code: grpc.StatusCode, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


class LiveMatches:
    """Public events of the matches in progress (and recently finished), for spectators.

    A match's events are read from its state, and translated, only when someone watches: most
    matches are never watched, and the referee's time per move is precious."""

    @dataclass
    class _Live:
        game_name: str
        state: State | None  # the match's own state (its events, its latest public view)
        changed: asyncio.Condition
        end: Any = None  # the spectators' last event (wire.match_end_event), once it ended
        context: Any = None  # the MatchContext
        moves: list = field(default_factory=list)  # MoveRecords so far
        watching: int = 0  # spectators waiting for the next change (see _MatchFeed._wake)

        @property
        def events(self) -> Sequence[Event]:
            return self.state.events if self.state is not None else ()

        def replay_so_far(self) -> dict | None:
            """The replay of the match so far (config, seed, seat names, moves): what the web
            pages re-run to show a live match."""
            ctx = self.context
            if ctx is None:
                return None
            return {
                "config": ctx.game.config(),
                "seed": ctx.seed,
                "seat_names": list(ctx.seat_names),
                "moves": [m.to_list() for m in self.moves],
                "faults": [],
                "status": "running",
            }

    def __init__(self, keep_finished: int = 100):
        self._matches: dict[str, LiveMatches._Live] = {}
        self._finished: list[str] = []
        self._keep = keep_finished

    def observer(self, match_id: str, game_name: str, context: Any = None) -> "_MatchFeed":
        live = LiveMatches._Live(game_name, None, asyncio.Condition(), context=context)
        self._matches[match_id] = live
        return _MatchFeed(self, match_id, live)

    def _finish(self, match_id: str) -> None:
        self._finished.append(match_id)
        while len(self._finished) > self._keep:
            self._matches.pop(self._finished.pop(0), None)

    def get(self, match_id: str) -> "_Live | None":
        return self._matches.get(match_id)


class _MatchFeed(MatchObserver):
    """The MatchObserver that play_match feeds."""

    def __init__(self, owner: LiveMatches, match_id: str, live):
        self.owner, self.match_id, self.live = owner, match_id, live

    def on_start(self, state: State) -> None:
        self.live.state = state
        self._wake()

    def on_move(self, move, state: State) -> None:
        self.live.moves.append(move)
        self._wake()

    def _wake(self) -> None:
        if self.live.watching:  # only wake spectators that exist
            asyncio.ensure_future(self._notify())

    def on_end(self, result: MatchResult) -> None:
        self.live.end = wire.match_end_event(self.match_id, len(self.live.events), result)
        self.owner._finish(self.match_id)
        self._wake()

    async def _notify(self) -> None:
        async with self.live.changed:
            self.live.changed.notify_all()


async def _abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, detail: str) -> NoReturn:
    """End the RPC with this status (context.abort raises; this says so to the type checker)."""
    await context.abort(code, detail)
    raise AssertionError("ServicerContext.abort returned")


class RefereeServicer:
    """The Referee service (arena.v1.Referee): its messages are read and built by wire.py."""

    def __init__(
        self,
        authenticate: Authenticator,
        directory: BotDirectory,
        live: LiveMatches,
        admission: Admission | None = None,
    ):
        self.authenticate = authenticate
        self.directory = directory
        self.live = live
        # This socket's streams, by peer (the TCP port's caps unless told).
        self.admission = admission or Admission(TCP_CAPS)
        self.watchers = 0

    async def _admit(self, context: grpc.aio.ServicerContext, hello: bool) -> str:
        """Count the new stream against its peer's caps (its peer string), or refuse it."""
        peer = context.peer()
        refusal = self.admission.refusal(peer, hello)
        if refusal is not None:
            await _abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{refusal}; this stream is refused for capacity, not for anything it did: "
                "retry in a second or two"
                + (", and send Hello as soon as the stream opens" if hello else ""),
            )
        self.admission.open(peer, hello)
        return peer

    async def Play(self, request_iterator, context: grpc.aio.ServicerContext):
        peer = await self._admit(context, hello=True)
        try:
            await self._play(peer, context)
        finally:
            self.admission.close(peer)

    async def _play(self, peer: str, context: grpc.aio.ServicerContext) -> None:
        try:
            first = await within(context.read(), HELLO_TIMEOUT_S)
        except TimeoutError:
            await _abort(
                context,
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"send Hello within {HELLO_TIMEOUT_S:.0f} s of opening the stream",
            )
        except asyncio.CancelledError:
            raise
        except Exception as err:  # bytes that do not parse (wire.MalformedMessage), a reset stream
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the first message is not a BotMessage Hello: {err}",
            )
        finally:
            self.admission.said_hello(peer)
        if first is grpc.aio.EOF or first.__class__ is not wire.Hello:
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "the first message on a Play stream must be Hello",
            )
        hello = first
        if hello.protocol_version not in PROTOCOL_VERSIONS:
            await _abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {hello.protocol_version} is not supported; this referee "
                f"speaks {', '.join(map(str, PROTOCOL_VERSIONS))}",
            )
        try:
            name = await self.authenticate(hello.token)
        except Refused as refused:
            await _abort(context, refused.code, refused.detail)
        if name is None:
            await _abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                "unknown bot token; register the bot (arena bot add) and use the token it printed",
            )
        max_concurrent = min(max(hello.max_concurrent, 1), MAX_CONCURRENT_CAP)
        conn = BotConnection(
            name,
            max_concurrent,
            context.write,
            context.peer(),
            batches=hello.batches,
            token_hash=hash_token(hello.token),
        )
        # The bot's public name: a launched bot's lane (its key, lanes.py) is not the bot's to know.
        await context.write(wire.welcome(bot_of(name), hello.protocol_version, max_concurrent))
        # When the referee closes the connection (a flood, a stalled stream, a match's step),
        # end the RPC by cancelling this handler, which is blocked reading; not when the
        # handler is the one closing it (from on_message): it then returns from its read loop
        # by itself.
        handler = asyncio.current_task()

        def on_close() -> None:
            if handler is not None and handler is not asyncio.current_task():
                handler.cancel()

        conn.on_close = on_close
        await self.directory.add(conn)
        # Hello.name is the bot's own word for itself: logged, never its seat name (the token's).
        log.info(
            "bot %s connected from %s (max_concurrent %d, says it is %r)",
            name,
            conn.peer,
            max_concurrent,
            hello.name[:64],
        )
        closed_by_referee = False
        try:
            await self._read(conn, context)
        except asyncio.CancelledError:
            if not conn.closed.is_set():
                raise  # the server is stopping
            closed_by_referee = True
        finally:
            conn.close(conn.close_reason or "the stream ended")
            self.directory.remove(conn)
            log.info("bot %s disconnected: %s", name, conn.close_reason)
        if closed_by_referee or conn.close_code != grpc.StatusCode.CANCELLED:
            # Tell the bot why its stream ends (a flood, bytes that do not parse, a newer
            # connection of the same bot), rather than leaving it a bare CANCELLED.
            await _abort(context, conn.close_code, conn.close_reason)

    async def _read(self, conn: BotConnection, context) -> None:
        try:
            while True:
                msg = await context.read()
                if msg is grpc.aio.EOF:
                    await conn.flush()
                    conn.close("the bot closed its stream")
                    return
                conn.on_message(msg)
                if conn.closed.is_set():  # the message closed it (a flood)
                    return
        except asyncio.CancelledError:
            raise
        except wire.MalformedMessage as err:  # bytes that do not parse
            conn.close(f"{err}; the stream is closed", MALFORMED, grpc.StatusCode.INVALID_ARGUMENT)
        except Exception as err:  # a reset stream
            conn.close(f"the stream failed: {err}", conn.close_fault)

    async def Watch(self, match_id: str, context: grpc.aio.ServicerContext):
        """A live match's public events (the request, read by wire.read_watch_request, names
        the match)."""
        live = self.live.get(match_id)
        if live is None:
            await _abort(
                context, grpc.StatusCode.NOT_FOUND, f"no live or recent match {match_id!r}"
            )
        if self.watchers >= MAX_WATCHERS:
            await _abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_WATCHERS} spectator streams are open; try again later",
            )
        peer = await self._admit(context, hello=False)
        self.watchers += 1
        try:
            async for event in self._watch(match_id, live):
                yield event
        finally:
            self.watchers -= 1
            self.admission.close(peer)

    async def _watch(self, match_id: str, live):
        sent = 0
        while True:
            events = live.events
            available = len(events)
            while sent < available:
                # The public view is that of the newest event; older ones go without it.
                public = live.state.public_observation() if sent == available - 1 else None
                yield wire.event_to_pb(match_id, sent, events[sent], live.game_name, public)
                sent += 1
            if live.end is not None and sent >= len(live.events):
                yield live.end
                return
            live.watching += 1
            try:
                async with live.changed:
                    await live.changed.wait_for(
                        lambda sent=sent: len(live.events) > sent or live.end is not None
                    )
            finally:
                live.watching -= 1


@dataclass
class TlsFiles:
    cert: bytes
    key: bytes


class RefereeServer:
    """Owns the referee's grpc.aio servers: start on a port, open a socket per launched bot,
    stop gracefully.

    Its TCP port is for remote bots and spectators. Each launched bot gets a Unix domain socket
    of its own (`open_bot_socket`), in a private temporary directory, which the launcher binds
    into that bot's sandbox: sandboxed bots have no network. Each such socket is a small grpc.aio
    server of its own (grpc cannot add a port to a started server), sharing this one's bot
    directory, live matches and authentication, with its own caps on connections and streams
    (BOT_SOCKET_OPTIONS, admission.BOT_SOCKET_CAPS): what one bot opens on it never takes a
    slot another bot needs. A socket is plain text, like loopback TCP without TLS: only
    processes that can reach the file can connect."""

    def __init__(
        self,
        authenticate: Authenticator,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: TlsFiles | None = None,
    ):
        self.directory = BotDirectory()
        self.live = LiveMatches()
        self.host = host
        self._requested_port = port
        self._tls = tls
        self._authenticate = authenticate
        self.port = 0
        self.socket_dir: Path | None = None  # the bot sockets' directory, once started
        self._bot_sockets: dict[str, tuple[Path, grpc.aio.Server]] = {}
        self._socket_serial = 0
        self.servicer = RefereeServicer(
            authenticate, self.directory, self.live, Admission(TCP_CAPS)
        )
        self._server = grpc.aio.server(options=tcp_options())
        _add_referee_service(self._server, self.servicer, watch=True)
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def started(self) -> bool:
        return self.socket_dir is not None

    async def start(self) -> None:
        target = f"{self.host}:{self._requested_port}"
        if self._tls is not None:
            creds = grpc.ssl_server_credentials([(self._tls.key, self._tls.cert)])
            self.port = self._server.add_secure_port(target, creds)
        else:
            self.port = self._server.add_insecure_port(target)
        if self.port == 0:
            raise OSError(
                f"cannot listen on {target}: the port is taken or the address is "
                "not local; choose another with --port"
            )
        await self._server.start()
        self.socket_dir = make_socket_dir(_socket_base())
        await _set_health(self._health, health_pb2.HealthCheckResponse.SERVING)

    async def open_bot_socket(self, key: str) -> Path:
        """The Unix socket of the launched bot process `key` (a bot's name, or its lane's),
        listening from now on; the same socket while it stays open (a relaunch under the same
        key reuses it)."""
        if self.socket_dir is None:
            raise RuntimeError("the referee is not started: open bot sockets after start()")
        if key in self._bot_sockets:
            return self._bot_sockets[key][0]
        self._socket_serial += 1
        # Named by a serial, not by the key: a key is any string, a socket's path is short.
        socket = self.socket_dir / f"bot-{self._socket_serial}.sock"
        # Out of descriptors (a flood of connections elsewhere), say so here, before gRPC: its
        # core would log a line of its own per attempt, past the platform's RepeatLimiter.
        sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM).close()
        server = grpc.aio.server(options=BOT_SOCKET_OPTIONS)
        servicer = RefereeServicer(
            self._authenticate, self.directory, self.live, Admission(BOT_SOCKET_CAPS)
        )
        _add_referee_service(server, servicer, watch=False)
        try:
            bound = server.add_insecure_port(f"unix:{socket}")
        except RuntimeError as err:  # grpcio raises where older releases returned 0
            raise OSError(f"cannot listen on the Unix socket {socket}: {err}") from None
        if bound == 0:
            raise OSError(f"cannot listen on the Unix socket {socket}")
        # The start is shielded: a gRPC server whose start is cancelled cannot be shut down
        # (its shutdown, then or at garbage collection, fails on the cancelled loop: "Task
        # exception was never retrieved ... InvalidStateError"). Cancelled meanwhile (a lane
        # launched as the run is stopped), it finishes starting, is stopped, and the
        # cancellation goes on.
        starting = asyncio.ensure_future(server.start())
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError:
            await asyncio.wait([starting])
            await server.stop(0)
            socket.unlink(missing_ok=True)
            raise
        # Inside a sandbox the bot runs as a user of its own, and connecting to a Unix socket
        # needs write permission on it; its directory keeps everyone else out.
        os.chmod(socket, 0o666)
        self._bot_sockets[key] = (socket, server)
        return socket

    async def close_bot_socket(self, key: str, grace_s: float = 1.0) -> None:
        """Stop listening on the socket of `key` and end its streams (after `grace_s`); nothing
        if it is not open."""
        await self.detach_bot_socket(key, grace_s)

    def detach_bot_socket(self, key: str, grace_s: float = 1.0) -> Awaitable[None]:
        """Take the socket of `key` out now (a later open_bot_socket(key) makes a new one); the
        returned awaitable stops listening on it and ends its streams (after `grace_s`)."""
        entry = self._bot_sockets.pop(key, None)

        async def close() -> None:
            if entry is not None:
                socket, server = entry
                await server.stop(grace_s)
                socket.unlink(missing_ok=True)

        return close()

    def bot_sockets(self) -> dict[str, Path]:
        """The open bot sockets, by key."""
        return {key: socket for key, (socket, _) in self._bot_sockets.items()}

    async def stop(self, grace_s: float = 5.0) -> None:
        await _set_health(self._health, health_pb2.HealthCheckResponse.NOT_SERVING)
        await asyncio.gather(
            self._server.stop(grace_s),
            *(self.close_bot_socket(key, grace_s) for key in list(self._bot_sockets)),
        )
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
            self.socket_dir = None


def _add_referee_service(server: grpc.aio.Server, servicer: RefereeServicer, watch: bool) -> None:
    """The Referee service on `server`, as the generated add_RefereeServicer_to_server, but the
    messages are read and written by wire.py (Play's serializer also takes the action requests
    it encodes directly). Without `watch`, Play only (a bot's own socket)."""
    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=wire.read_bot_message,
            response_serializer=wire.serialize_referee_message,
        ),
    }
    if watch:
        handlers["Watch"] = grpc.unary_stream_rpc_method_handler(
            servicer.Watch,
            request_deserializer=wire.read_watch_request,
            response_serializer=wire.serialize_match_event,
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("arena.v1.Referee", handlers),)
    )
    if hasattr(server, "add_registered_method_handlers"):  # grpcio >= 1.63
        server.add_registered_method_handlers("arena.v1.Referee", handlers)


async def _set_health(servicer, status) -> None:
    for service in ("", "arena.v1.Referee"):
        await servicer.set(service, status)
