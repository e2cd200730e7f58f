"""A small scripted referee for the SDK tests: a real grpc.aio server on a free loopback port.

It checks the Hello, then hands each connection to a script (an async function of a `Session`)
that sends MatchStart / ActionRequest / MatchEnd / Rejected and reads the replies. `play_matches`
is the standard script: two concurrent matches (one Balloon, one Boom) with hand-made
observations and legal actions; it checks every reply is tagged with an outstanding request and
is one of that request's legal actions, and records any problem in `Referee.problems`.
"""

from __future__ import annotations

import asyncio
import itertools
import pathlib
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import AsyncIterator

import grpc

from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc
from tests.timing import scaled

ROOT = pathlib.Path(__file__).resolve().parents[2]

TOKEN = "good-token"
# Seconds any single wait in a test may take before the test fails: 20 on a quiet machine,
# scaled by its load when the tests are collected (tests/timing.py).
TIMEOUT = scaled(20.0)

COLOURS = ("red", "blue", "water", "yellow", "grey")


@dataclass
class Session:
    """One bot connection as the script sees it."""

    number: int  # 1 for the first connection of this referee, 2 for the next...
    hello: pb.Hello
    context: grpc.aio.ServicerContext

    async def send(self, **kind: object) -> None:
        await self.context.write(pb.RefereeMessage(**kind))

    async def recv(self) -> pb.BotMessage:
        msg = await asyncio.wait_for(self.context.read(), TIMEOUT)
        if msg is grpc.aio.EOF:
            raise EOFError("the bot closed the stream")
        return msg


class HangUp(Exception):
    """Raised by a script to end the stream from the referee's side with status OK."""


Script = Callable[["Referee", Session], Awaitable[None]]


@dataclass
class Referee(arena_pb2_grpc.RefereeServicer):
    script: Script
    versions: tuple[int, ...] = (1,)
    hellos: list[pb.Hello] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    replies: list[pb.ActionReply] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)  # the size of each ActionReplies received

    async def Play(self, request_iterator: object, context: grpc.aio.ServicerContext) -> None:
        first = await context.read()
        if first is grpc.aio.EOF or first.WhichOneof("kind") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello")
        hello = first.hello
        self.hellos.append(hello)
        if hello.token != TOKEN:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"unknown token {hello.token!r}")
        if hello.protocol_version not in self.versions:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {hello.protocol_version} is not spoken here; "
                f"this referee speaks: {', '.join(map(str, self.versions))}",
            )
        try:
            await self.script(self, Session(len(self.hellos), hello, context))
        except HangUp:
            return
        # Keep the stream open until the bot goes, as a real referee between matches would.
        while await context.read() is not grpc.aio.EOF:
            pass


@asynccontextmanager
async def serving(
    referee: Referee, tls: grpc.ServerCredentials | None = None
) -> AsyncIterator[str]:
    """Run `referee` on a free loopback port (over TLS with `tls`); yields its address."""
    server = grpc.aio.server()
    arena_pb2_grpc.add_RefereeServicer_to_server(referee, server)
    port = (
        server.add_secure_port("127.0.0.1:0", tls)
        if tls
        else server.add_insecure_port("127.0.0.1:0")
    )
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


# ------------------------------------------------------------------------------ observations


def balloon_card(card_id: int) -> pb.Card:
    if card_id < 40:
        return pb.Card(id=card_id, colour=COLOURS[card_id // 8], value=card_id % 8)
    return pb.Card(id=card_id, colour="black", value=card_id - 40)


def boom_card(card_id: int) -> pb.Card:
    return pb.Card(
        id=card_id,
        colour=COLOURS[card_id // 10],
        value=(1, 2, 2, 3, 3, 4, 4, 5, 5, 6)[card_id % 10],
    )


def balloon_request(match_id: str, request_id: int, k: int) -> pb.ActionRequest:
    """A Balloon Challenge decision for seat 1 of 3; the hand shrinks as k grows."""
    hand = [balloon_card(c) for c in range(3 * k % 50, 3 * k % 50 + 7 - k % 5)]
    obs = pb.BalloonObservation(
        seat=1,
        num_players=3,
        round=1 + k // 4,
        turn=1 + k % 4,
        start_seat=0,
        to_act=1,
        hand=hand,
        hand_sizes=[len(hand), len(hand), len(hand) - 1],
        table=[pb.BalloonPlayed(seat=0, card=balloon_card(49 - k % 10), turn=1 + k % 4)],
        dropped_out=[0, 0, 0],
        chips=[0, k % 2, 0],
        chips_in_middle=5,
        first_drop_out_chip=True,
        totals=[3, k, 7],
    )
    legal = [pb.Action(balloon=pb.BalloonAction(play=c)) for c in hand]
    legal.append(pb.Action(balloon=pb.BalloonAction(drop_out=True)))
    return action_request(match_id, request_id, pb.Observation(balloon=obs), legal)


def action_request(
    match_id: str, request_id: int, observation: pb.Observation, legal: list[pb.Action]
) -> pb.ActionRequest:
    """A request with the fake referee's limits (1 s a move, a 5 s bank)."""
    return pb.ActionRequest(
        match_id=match_id,
        request_id=request_id,
        observation=observation,
        legal_actions=legal,
        move_ms=1000,
        time_bank_ms=5000,
    )


def boom_request(match_id: str, request_id: int, k: int) -> pb.ActionRequest:
    """A Boom decision for seat 0 of 3: play `to_play` cards, possibly the ruse card among them."""
    hand_ids = sorted({(7 * k + 3 * i) % 50 for i in range(5)})
    hand = [boom_card(c) for c in hand_ids]
    to_play = 1 + k % 2
    obs = pb.BoomObservation(
        seat=0,
        num_players=3,
        game_number=1,
        round=1 + k // 3,
        step=1 + k % 2,
        guard=k % 10,
        guard_limits=[1, 2, 3, 2, 1],
        guards_left=9 - k % 9,
        guards_used=[k % 10],
        to_play=to_play,
        hand=hand,
        has_ruse=True,
        hand_sizes=[5, 5, 4],
        acted=[False, True, False],
        revealed=[
            pb.BoomRevealed(),
            pb.BoomRevealed(cards=[boom_card(44)], ruse=True),
            pb.BoomRevealed(),
        ],
        paradise=[
            pb.BoomParadise(cards=[pb.BoomParadiseCard(card=boom_card(45), face_up=False)]),
            pb.BoomParadise(),
            pb.BoomParadise(),
        ],
        discarded=[boom_card(49)],
        scores=[0, 2, 0],
        series_totals=[0, 0, 0],
    )
    legal = [
        pb.Action(boom=pb.BoomAction(cards=list(combo)))
        for combo in itertools.combinations(hand, to_play)
    ]
    legal += [
        pb.Action(boom=pb.BoomAction(cards=list(combo), ruse=True))
        for combo in itertools.combinations(hand, to_play - 1)
    ]
    return action_request(match_id, request_id, pb.Observation(boom=obs), legal)


MATCHES = (
    pb.MatchStart(
        match_id="m-balloon",
        game="balloon",
        options=pb.GameOptions(num_players=3),
        seat=1,
        seat_names=["a", "me", "c"],
        limits=pb.Limits(move_ms=1000, time_bank_ms=5000, max_strikes=3),
        bot_seed=12345,
    ),
    pb.MatchStart(
        match_id="m-boom",
        game="boom",
        options=pb.GameOptions(num_players=3, advanced=True, ruse=True),
        seat=0,
        seat_names=["me", "b", "c"],
        limits=pb.Limits(move_ms=1000, time_bank_ms=5000, max_strikes=3),
        bot_seed=2**64 - 1,
    ),
)
REQUESTS = {"m-balloon": balloon_request, "m-boom": boom_request}


def replies_in(referee: Referee, msg: pb.BotMessage) -> list[pb.ActionReply]:
    """The replies a message carries: one (`action`) or several (`action_replies`, which the
    SDK sends when it has more than one ready); records a problem for any other kind."""
    kind = msg.WhichOneof("kind")
    if kind == "action":
        return [msg.action]
    if kind == "action_replies" and len(msg.action_replies.replies) > 0:
        referee.batches.append(len(msg.action_replies.replies))
        return list(msg.action_replies.replies)
    referee.problems.append(f"expected ActionReply or ActionReplies, got {kind}")
    return []


def check_reply(
    referee: Referee, outstanding: dict[tuple[str, int], pb.ActionRequest], reply: pb.ActionReply
) -> pb.ActionRequest | None:
    """Record a problem unless `reply` answers an outstanding request with one of its legal
    actions; returns the request it answers."""
    referee.replies.append(reply)
    req = outstanding.pop((reply.match_id, reply.request_id), None)
    if req is None:
        referee.problems.append(f"reply to unknown request {reply.match_id}/{reply.request_id}")
        return None
    if reply.action not in list(req.legal_actions):
        referee.problems.append(
            f"illegal action in {reply.match_id}/{reply.request_id}: {reply.action}"
        )
    return req


async def play_matches(
    referee: Referee, session: Session, moves: int = 6, reject: bool = False, batched: bool = False
) -> None:
    """Welcome, then both MATCHES at once, `moves` requests each, one outstanding per match (as
    a real referee), then MatchEnd. With `reject`, the first Boom reply draws a Rejected. With
    `batched` (for a bot whose Hello asked for batches), the first requests of both matches go
    as one ActionRequests message."""
    await session.send(
        welcome=pb.Welcome(
            bot_name=session.hello.name,
            protocol_version=1,
            max_concurrent=session.hello.max_concurrent,
        )
    )
    ids = itertools.count(1)
    outstanding: dict[tuple[str, int], pb.ActionRequest] = {}
    sent = {m.match_id: 0 for m in MATCHES}

    def make(match_id: str) -> pb.ActionRequest:
        req = REQUESTS[match_id](match_id, next(ids), sent[match_id])
        sent[match_id] += 1
        outstanding[(match_id, req.request_id)] = req
        return req

    async def ask(match_id: str) -> None:
        await session.send(action_request=make(match_id))

    for start in MATCHES:
        await session.send(match_start=start)
    if batched:
        await session.send(
            action_requests=pb.ActionRequests(requests=[make(start.match_id) for start in MATCHES])
        )
    else:
        for start in MATCHES:
            await ask(start.match_id)
    answered = {m.match_id: 0 for m in MATCHES}
    while sum(answered.values()) < moves * len(MATCHES):
        replies = replies_in(referee, await session.recv())
        if not replies:
            return
        for reply in replies:
            req = check_reply(referee, outstanding, reply)
            if req is None:
                return
            answered[req.match_id] += 1
            if reject and req.match_id == "m-boom" and answered["m-boom"] == 1:
                await session.send(
                    rejected=pb.Rejected(
                        match_id="m-boom",
                        request_id=req.request_id,
                        fault=pb.FAULT_TIMEOUT,
                        detail="no reply within 1000 ms",
                        played_instead=req.legal_actions[0],
                    )
                )
            if answered[req.match_id] < moves:
                await ask(req.match_id)
    for i, start in enumerate(MATCHES):
        last = REQUESTS[start.match_id](start.match_id, 0, moves).observation
        await session.send(
            match_end=pb.MatchEnd(
                match_id=start.match_id,
                scores=[10 - i, 4, -3],
                ranks=[0, 1, 2],
                reason="completed",
                final_observation=last,
            )
        )
