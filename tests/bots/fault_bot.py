"""A misbehaving bot for the referee's fault tests, speaking the protocol directly (no SDK).

Usage: python fault_bot.py MODE  (address and token from ARENA_ADDRESS / ARENA_TOKEN)

Modes: good (first legal action), crash_start (exit before connecting), crash_mid (exit with
code 3 at its 3rd request), hang (never answer), slow (answer each move after SLOW_MS), garbage
(send bytes that are not a BotMessage), illegal (answer with an action not in legal_actions),
wrong_game (answer with the other game's action), unknown_request (reply to request ids never
sent, then play well), bad_token, wrong_version, fork_exit (fork a long-sleeping child that writes
its pid to ./child.pid, then exit), batcher (says `batches` in its Hello and answers only with
ActionReplies: it holds requests until every match it is in waits on it, then answers them all in
one message), no_connect (runs, never connects).
"""

import asyncio
import os
import sys
import time

import grpc

from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc

MODE = sys.argv[1]
SLOW_MS = int(os.environ.get("SLOW_MS", "300"))


def illegal_action(request):
    obs = request.observation
    if obs.WhichOneof("game") == "balloon":
        held = {c.id for c in obs.balloon.hand}
        card = next(i for i in range(50) if i not in held)
        return pb.Action(balloon=pb.BalloonAction(play=pb.Card(id=card)))
    held = {c.id for c in obs.boom.hand}
    card = next(i for i in range(50) if i not in held)
    return pb.Action(boom=pb.BoomAction(cards=[pb.Card(id=card)]))


def wrong_game(request):
    if request.observation.WhichOneof("game") == "balloon":
        return pb.Action(boom=pb.BoomAction(cards=[pb.Card(id=1)]))
    return pb.Action(balloon=pb.BalloonAction(drop_out=True))


async def main() -> None:
    if MODE == "crash_start":
        sys.exit(2)
    if MODE == "no_connect":
        time.sleep(3600)
    if MODE == "fork_exit":
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            with open("child.pid", "w") as f:
                f.write(str(os.getpid()))
            os.write(ready_w, b"x")
            time.sleep(3600)
            os._exit(0)
        os.read(ready_r, 1)  # exit only once the child is known to be running
        sys.exit(0)
    token = os.environ["ARENA_TOKEN"] if MODE != "bad_token" else "not-a-token"
    version = 99 if MODE == "wrong_version" else 1
    async with grpc.aio.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        stub = pb_grpc.RefereeStub(channel)
        if MODE == "garbage":
            raw = channel.stream_stream(
                "/arena.v1.Referee/Play",
                request_serializer=lambda b: b,
                response_deserializer=lambda b: b,
            )
            call = raw()
            await call.write(
                pb.BotMessage(
                    hello=pb.Hello(token=token, name=MODE, protocol_version=1, max_concurrent=1)
                ).SerializeToString()
            )
            # Garbage as the reply to a move's request (not to the Welcome, which comes before
            # the match: the stream would then end before the match starts, a crash, not a
            # malformed reply; seen under load).
            async for raw_message in call:
                if pb.RefereeMessage.FromString(raw_message).WhichOneof("kind") == "action_request":
                    await call.write(b"\xff\xff\xff\xff garbage \x00\x01")
            return
        call = stub.Play()
        if MODE == "batcher":
            await batcher(call, token)
            return
        await call.write(
            pb.BotMessage(
                hello=pb.Hello(token=token, name=MODE, protocol_version=version, max_concurrent=1)
            )
        )
        requests = 0
        try:
            async for msg in call:
                if msg.WhichOneof("kind") != "action_request":
                    continue
                req = msg.action_request
                requests += 1
                if MODE == "hang":
                    continue
                if MODE == "crash_mid" and requests == 3:
                    os._exit(3)
                action = req.legal_actions[0]
                if MODE == "slow":
                    await asyncio.sleep(SLOW_MS / 1000)
                elif MODE == "illegal":
                    action = illegal_action(req)
                elif MODE == "wrong_game":
                    action = wrong_game(req)
                elif MODE == "unknown_request" and requests <= 2:
                    await call.write(
                        pb.BotMessage(
                            action=pb.ActionReply(
                                match_id=req.match_id,
                                request_id=req.request_id + 1000,
                                action=action,
                            )
                        )
                    )
                await call.write(
                    pb.BotMessage(
                        action=pb.ActionReply(
                            match_id=req.match_id, request_id=req.request_id, action=action
                        )
                    )
                )
        except grpc.aio.AioRpcError as err:
            print(f"rpc ended: {err.code().name}: {err.details()}", file=sys.stderr, flush=True)
            sys.exit(1)


async def batcher(call, token: str) -> None:
    await call.write(
        pb.BotMessage(
            hello=pb.Hello(
                token=token, name=MODE, protocol_version=1, max_concurrent=8, batches=True
            )
        )
    )
    active: set[str] = set()
    held: dict[str, pb.ActionRequest] = {}
    sizes = []
    async for msg in call:
        kind = msg.WhichOneof("kind")
        if kind == "match_start":
            active.add(msg.match_start.match_id)
        elif kind == "match_end":
            active.discard(msg.match_end.match_id)
        elif kind == "action_request":
            held[msg.action_request.match_id] = msg.action_request
        elif kind == "action_requests":
            held.update((r.match_id, r) for r in msg.action_requests.requests)
        if held and set(held) >= active:
            sizes.append(len(held))
            await call.write(
                pb.BotMessage(
                    action_replies=pb.ActionReplies(
                        replies=[
                            pb.ActionReply(
                                match_id=r.match_id,
                                request_id=r.request_id,
                                action=r.legal_actions[0],
                            )
                            for r in held.values()
                        ]
                    )
                )
            )
            held.clear()
            print(f"batch sizes so far: {sorted(set(sizes))}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
