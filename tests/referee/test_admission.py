"""Unit tests of admission.Admission: the streams of one socket counted by peer."""

from arena.referee.admission import Admission, AdmissionCaps, peer_host

CAPS = AdmissionCaps(
    streams_per_peer=6, connections_per_peer=3, awaiting_hello_per_peer=2, awaiting_hello=5
)


def test_peer_host_drops_the_port_only():
    assert peer_host("ipv4:10.0.0.7:51234") == "ipv4:10.0.0.7"
    assert peer_host("ipv6:[::1]:51234") == "ipv6:[::1]"
    assert peer_host("ipv6:%5B::1%5D:80") == "ipv6:%5B::1%5D"
    assert peer_host("unix:/tmp/x/bot-1.sock") == "unix:/tmp/x/bot-1.sock"
    assert peer_host("unix:") == "unix:"


def test_streams_waiting_for_hello_are_capped_per_peer_and_not_for_others():
    a = Admission(CAPS)
    for port in (1, 2):
        assert a.refusal(f"ipv4:10.0.0.1:{port}", hello=True) is None
        a.open(f"ipv4:10.0.0.1:{port}", hello=True)
    refusal = a.refusal("ipv4:10.0.0.1:3", hello=True)
    assert refusal is not None and "2 streams from ipv4:10.0.0.1" in refusal
    # Another peer is not touched by the first one's silent streams.
    assert a.refusal("ipv4:10.0.0.2:1", hello=True) is None
    # A Watch stream says no Hello: only the other caps apply.
    assert a.refusal("ipv4:10.0.0.1:1", hello=False) is None
    # Once one says Hello, the peer may open another.
    a.said_hello("ipv4:10.0.0.1:1")
    assert a.refusal("ipv4:10.0.0.1:3", hello=True) is None


def test_the_socket_wide_hello_cap_holds_across_peers():
    a = Admission(CAPS)
    for n in range(5):
        peer = f"ipv4:10.0.1.{n}:1"
        assert a.refusal(peer, hello=True) is None
        a.open(peer, hello=True)
    refusal = a.refusal("ipv4:10.0.1.9:1", hello=True)
    assert refusal is not None and "5 streams are already waiting" in refusal


def test_connections_and_streams_per_peer():
    a = Admission(CAPS)
    for port in (1, 2, 3):
        a.open(f"ipv4:10.0.0.1:{port}", hello=False)
    # A fourth connection of the peer is refused; another stream on a connection it holds is not.
    refusal = a.refusal("ipv4:10.0.0.1:4", hello=False)
    assert refusal is not None and "3 connections" in refusal
    assert a.refusal("ipv4:10.0.0.1:3", hello=False) is None
    for _ in range(3):
        a.open("ipv4:10.0.0.1:3", hello=False)
    refusal = a.refusal("ipv4:10.0.0.1:3", hello=False)
    assert refusal is not None and "6 streams are open" in refusal
    # Closing a connection's only stream frees that connection's slot.
    a.close("ipv4:10.0.0.1:1")
    assert a.connections["ipv4:10.0.0.1"] == 2
    a.close("ipv4:10.0.0.1:3")
    assert a.refusal("ipv4:10.0.0.1:4", hello=False) is None


def test_a_peer_that_left_costs_nothing():
    a = Admission(CAPS)
    a.open("ipv6:[::1]:5", hello=True)
    a.said_hello("ipv6:[::1]:5")
    a.close("ipv6:[::1]:5")
    assert a.peers() == 0
    assert not a.awaiting and not a.by_connection and not a.connections
    assert a.awaiting_total == 0
