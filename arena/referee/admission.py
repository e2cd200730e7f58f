"""Admission of streams to one listening socket of the referee: how many each peer may hold.

The referee's TCP port is shared by remote bots and spectators from anywhere; each launched bot
has a Unix socket of its own (server.BotSockets). On either, a stream costs a handler from the
moment it opens, and before its Hello it cannot be charged to any bot. `Admission` counts the
open streams of one socket by peer (the address part of `context.peer()`; on a Unix socket every
stream is the same peer, the bot the socket belongs to) and refuses, with a reason, a stream
beyond the caps, so that one peer's silent streams never take another's slots.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class AdmissionCaps:
    """The caps of one listening socket. The defaults are the TCP port's (`TCP_CAPS`)."""

    # Open streams of one peer (remote bots' Play streams and spectators' Watch streams).
    streams_per_peer: int = 64
    # Connections of one peer that hold a stream (a connection with no stream is closed by the
    # server's idle timeout, grpc.max_connection_idle_ms).
    connections_per_peer: int = 16
    # Streams of one peer that have not said Hello yet: a bot opens one at a time.
    awaiting_hello_per_peer: int = 8
    # Streams without Hello on the whole socket, whatever the peer.
    awaiting_hello: int = 512


TCP_CAPS = AdmissionCaps()
# A launched bot's own socket: one process, whose SDK holds one connection and one stream (a
# newer stream of the bot replaces the older). Room for a reconnect while the old one closes.
BOT_SOCKET_CAPS = AdmissionCaps(
    streams_per_peer=8, connections_per_peer=4, awaiting_hello_per_peer=4, awaiting_hello=4
)


def peer_host(peer: str) -> str:
    """The peer without its port: "ipv4:10.0.0.7:51234" -> "ipv4:10.0.0.7",
    "ipv6:[::1]:51234" -> "ipv6:[::1]"; anything else (a Unix socket's "unix:...") as it is."""
    if peer.startswith(("ipv4:", "ipv6:")) and peer.count(":") >= 2:
        return peer.rsplit(":", 1)[0]
    return peer


class Admission:
    """The open streams of one listening socket, by peer and by connection (a peer string with
    its port is one connection)."""

    def __init__(self, caps: AdmissionCaps):
        self.caps = caps
        self.streams: Counter[str] = Counter()  # by peer host
        self.awaiting: Counter[str] = Counter()  # streams without Hello, by peer host
        self.by_connection: Counter[str] = Counter()  # streams, by full peer string
        self.connections: Counter[str] = Counter()  # connections holding a stream, by host
        self.awaiting_total = 0

    def refusal(self, peer: str, hello: bool) -> str | None:
        """Why a new stream from `peer` is refused, or None if it may open. `hello`: whether
        the stream must say Hello (Play) before anything else."""
        host, caps = peer_host(peer), self.caps
        if self.streams[host] >= caps.streams_per_peer:
            return f"{caps.streams_per_peer} streams are open from {host}"
        if not self.by_connection[peer] and self.connections[host] >= caps.connections_per_peer:
            return f"{caps.connections_per_peer} connections hold streams from {host}"
        if hello:
            if self.awaiting[host] >= caps.awaiting_hello_per_peer:
                return (
                    f"{caps.awaiting_hello_per_peer} streams from {host} are already waiting to "
                    "say Hello"
                )
            if self.awaiting_total >= caps.awaiting_hello:
                return f"{caps.awaiting_hello} streams are already waiting to say Hello"
        return None

    def open(self, peer: str, hello: bool) -> None:
        """Count a stream that `refusal` let in."""
        host = peer_host(peer)
        self.streams[host] += 1
        if not self.by_connection[peer]:
            self.connections[host] += 1
        self.by_connection[peer] += 1
        if hello:
            self.awaiting[host] += 1
            self.awaiting_total += 1

    def said_hello(self, peer: str) -> None:
        """The stream's Hello arrived (or it ended without one): it no longer waits."""
        host = peer_host(peer)
        _decrement(self.awaiting, host)
        self.awaiting_total -= 1

    def close(self, peer: str) -> None:
        host = peer_host(peer)
        _decrement(self.streams, host)
        _decrement(self.by_connection, peer)
        if not self.by_connection[peer]:
            _decrement(self.connections, host)

    def peers(self) -> int:
        """Peers holding a stream now."""
        return len(self.streams)


def _decrement(counter: Counter[str], key: str) -> None:
    # Keys at zero are dropped: a peer that left costs nothing.
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]
