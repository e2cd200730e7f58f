"""Security: tokens kept hashed and compared in constant time; no seat ever receives a card
hidden from it (recorded traffic of real matches of every variant, checked against the engine's
true state at the moment of sending); TLS for remote bots.

That a bot can act only for its own seats is shown by the hostile zoo
(test_hostile_bots.py: forge, other_match, thief).
"""

from __future__ import annotations

import asyncio
import contextvars
import hmac
import sqlite3
import sys

import grpc

from arena.games import balloon, boom
from arena.referee import host as referee_host
from arena.referee import wire
from arena.referee.connection import BotConnection
from arena.referee.host import RefereeHost, TokenBook
from arena.referee.launcher import BotCommand, ResourceLimits
from arena.referee.match import Limits
from arena.referee.seat import RemoteSeat
from arena.referee.server import TlsFiles
from arena.tokens import hash_token
from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc
from tests.tls import self_signed_loopback_certificate
from tests.variants import VARIANTS, game_of

from .conftest import ROOT

RANDOM_BOT = ROOT / "example_bots" / "random_bot.py"
LIMITS = Limits(move_ms=3000, time_bank_ms=3000, max_strikes=3, connect_ms=20_000)


def random_bot(*args: str) -> BotCommand:
    return BotCommand((sys.executable, str(RANDOM_BOT), *args), None)


# ---------------------------------------------------------------- tokens


def test_token_book_keeps_only_hashes_and_compares_in_constant_time(monkeypatch):
    book = TokenBook()
    token = book.issue("alice")
    other = book.issue("bob")
    assert token not in repr(vars(book)) and other not in repr(vars(book))
    assert set(book._by_hash) == {hash_token(token), hash_token(other)}
    compared = []
    real = hmac.compare_digest

    def recording_compare(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(referee_host.hmac, "compare_digest", recording_compare)
    assert asyncio.run(book.authenticate(token)) == "alice"
    assert asyncio.run(book.authenticate(other)) == "bob"
    assert asyncio.run(book.authenticate(token[:-1] + "x")) is None
    assert asyncio.run(book.authenticate("")) is None
    # Every check went through the constant-time comparison, on hashes, never on tokens.
    assert compared and all(len(a) == len(b) == 64 for a, b in compared)
    assert not any(token in pair or other in pair for pair in compared)


def test_the_store_keeps_only_token_hashes_and_compares_in_constant_time(tmp_path, monkeypatch):
    from arena.store import Store

    db = tmp_path / "arena.db"
    store = Store(db)
    try:
        token = store.add_bot("remote-one", remote=True)
        compared = []
        real = hmac.compare_digest  # the store looks it up when it compares
        monkeypatch.setattr(
            hmac, "compare_digest", lambda a, b: compared.append((a, b)) or real(a, b)
        )
        assert store.bot_for_token(token).name == "remote-one"
        assert store.bot_for_token(token + "x") is None
        assert compared == [(hash_token(token), hash_token(token))]
        rotated = store.rotate_token("remote-one")
        assert store.bot_for_token(token) is None
        assert store.bot_for_token(rotated).name == "remote-one"
    finally:
        store.close()
    # The raw tokens are nowhere in the database file, its journal included.
    for path in tmp_path.iterdir():
        data = path.read_bytes()
        assert token.encode() not in data and rotated.encode() not in data
    con = sqlite3.connect(db)
    hashes = [r[0] for r in con.execute("SELECT token_hash FROM bots")]
    con.close()
    assert hashes == [hash_token(rotated)]


# ---------------------------------------------------------------- hidden information


def card_ids(msg) -> list[int]:
    """Every card id anywhere in a message (observations, actions, nested tables)."""
    out = []
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        values = value if field.is_repeated else [value]
        for v in values:
            if field.message_type.name == "Card":
                out.append(v.id)
            else:
                out.extend(card_ids(v))
    return out


def hidden_from(state, seat: int) -> set[int]:
    """The cards `seat` may not know, from the engine's true state."""
    others = [s for s in range(state.game.num_players) if s != seat]
    if isinstance(state, balloon.BalloonState):
        hidden = set(state.undealt())
        for s in others:
            hidden.update(state.hand(s))
        return hidden
    hidden = set(state.hidden_discards())
    for s in others:
        hidden.update(state.hand(s))
        hidden.update(c for c in (state.pending_choice(s) or ()) if c != boom.RUSE)
    return hidden


CURRENT = contextvars.ContextVar("current_seat_state", default=None)


class Recorder:
    """Wraps the referee's sending: every message to every bot, with the true state at that
    moment for the messages that carry an observation."""

    def __init__(self, monkeypatch):
        self.checked = {"action_request": 0, "match_end": 0}
        self.other = 0
        self.failures: list[str] = []
        decide, end, queue = RemoteSeat.decide, RemoteSeat.end, BotConnection._queue
        recorder = self

        async def wrapped_decide(seat_obj, state, seat, clock):
            token = CURRENT.set((state, seat, seat_obj.bot_name, seat_obj.ctx.game.name))
            try:
                return await decide(seat_obj, state, seat, clock)
            finally:
                CURRENT.reset(token)

        async def wrapped_end(seat_obj, state, scores, ranks, reason):
            # end() queues its message for the bot while this context is current.
            token = CURRENT.set((state, seat_obj.seat, seat_obj.bot_name, seat_obj.ctx.game.name))
            try:
                return await end(seat_obj, state, scores, ranks, reason)
            finally:
                CURRENT.reset(token)

        def wrapped_queue(conn, msg, pending, allowed_s):
            # Every message to a bot is queued here, in the context of the code sending it; an
            # action request as the ActionRequest that wire.py encoded.
            seen = (
                pb.RefereeMessage(action_request=pb.ActionRequest.FromString(msg))
                if isinstance(msg, bytes)
                else msg
            )
            recorder.record(conn.bot_name, seen, CURRENT.get())
            return queue(conn, msg, pending, allowed_s)

        monkeypatch.setattr(RemoteSeat, "decide", wrapped_decide)
        monkeypatch.setattr(RemoteSeat, "end", wrapped_end)
        monkeypatch.setattr(BotConnection, "_queue", wrapped_queue)

    def record(self, bot_name: str, msg: pb.RefereeMessage, current) -> None:
        kind = msg.WhichOneof("kind")
        if kind not in self.checked:
            self.other += 1  # match start, rejections: no observation of the state
            return
        if current is None:
            self.failures.append(f"{kind} to {bot_name} sent outside a seat's turn")
            return
        state, seat, seat_bot, game_name = current
        body = getattr(msg, kind)
        obs = body.observation if kind == "action_request" else body.final_observation
        if seat_bot != bot_name:
            self.failures.append(f"seat {seat}'s {kind} went to {bot_name}, not {seat_bot}")
        # Exactly the seat's own observation, as the engine's observer builds it.
        if obs != wire.observation_to_pb(game_name, state.observation(seat)):
            self.failures.append(f"{kind} to seat {seat} is not that seat's observation")
        leaked = set(card_ids(body)) & hidden_from(state, seat)
        if leaked:
            self.failures.append(f"{kind} to seat {seat} holds hidden cards {sorted(leaked)}")
        if game_name == "boom":
            order = state.guard_order()
            used = list(obs.boom.guards_used)
            if used != list(order[: len(used)]) or len(used) + obs.boom.guards_left != 8:
                self.failures.append(f"{kind} to seat {seat} shows unrevealed guards")
        self.checked[kind] += 1


def test_no_seat_ever_receives_a_card_hidden_from_it(tmp_path, monkeypatch):
    recorder = Recorder(monkeypatch)
    names = [f"random-{i}" for i in range(5)]

    async def main():
        async with RefereeHost(tmp_path) as host:
            for name in names:
                await host.launch(name, random_bot())
            results = []
            for variant in VARIANTS:
                game = game_of(variant)
                for seed in (1, 2):
                    seats = names[seed % 2 :][: game.num_players]
                    if len(seats) < game.num_players:
                        seats = names[: game.num_players]
                    results.append(await host.run_match(game, seed, seats, LIMITS))
            return results

    results = asyncio.run(main())
    assert all(r.faults == () for r in results), [r.faults for r in results if r.faults]
    assert recorder.failures == []
    moves = sum(len(r.moves) for r in results)
    assert recorder.checked["action_request"] == moves  # no seat was played by default
    assert recorder.checked["match_end"] == sum(len(r.seat_names) for r in results)
    print(
        f"FIGURE leak: {len(VARIANTS)} variants x 2 seeds, "
        f"{recorder.checked['action_request']} requests and {recorder.checked['match_end']} "
        "match ends checked, no hidden card sent"
    )


def test_the_leak_check_catches_a_leak(monkeypatch):
    # The check is only worth something if it fails on a leak: send seat 0 seat 1's view.
    recorder = Recorder(monkeypatch)
    game = game_of(("balloon", 3, {}))
    state = game.new_match(3)
    msg = pb.RefereeMessage(
        action_request=pb.ActionRequest(
            observation=wire.observation_to_pb("balloon", state.observation(1))
        )
    )
    recorder.record("bot-0", msg, (state, 0, "bot-0", "balloon"))
    assert any("hidden cards" in f for f in recorder.failures)


# ---------------------------------------------------------------- TLS


def test_remote_bots_play_over_tls_and_plain_text_is_refused(tmp_path):
    cert, key = self_signed_loopback_certificate()
    ca = tmp_path / "ca.pem"
    ca.write_bytes(cert)

    async def main():
        # The bots play the part of remote bots, on their owners' machines: unconfined, over
        # the network (a sandboxed bot has none).
        async with RefereeHost(
            tmp_path,
            tls=TlsFiles(cert=cert, key=key),
            resource_limits=ResourceLimits(sandbox=False),
        ) as host:
            for name in ("tls-a", "tls-b"):
                await host.launch(
                    name, random_bot("--tls-ca", str(ca), "--address", host.server.address)
                )
            result = await host.run_match(game_of(("boom", 2, {})), 4, ["tls-a", "tls-b"], LIMITS)
            # A plain-text client cannot even start a stream.
            async with grpc.aio.insecure_channel(host.server.address) as channel:
                call = pb_grpc.RefereeStub(channel).Play(timeout=5)
                try:
                    await call.write(pb.BotMessage(hello=pb.Hello(token="x", protocol_version=1)))
                    await call.read()
                except grpc.aio.AioRpcError:
                    pass
                plain = await call.code()
            return result, plain

    result, plain = asyncio.run(main())
    assert result.faults == () and any(not m.default for m in result.moves)
    assert plain == grpc.StatusCode.UNAVAILABLE
