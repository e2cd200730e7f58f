"""A minimal bot for benchmarks, speaking the protocol directly: answers every request with its
first legal action, optionally after DELAY_MS. Usage: raw_bot.py MAX_CONCURRENT [DELAY_MS
[BATCHES [ADDRESS]]]: with BATCHES 1 it says `batches` in its Hello and answers an ActionRequests
message with one ActionReplies message, as the SDK does; ADDRESS (HOST:PORT) replaces
ARENA_ADDRESS (the launcher's Unix socket), to measure TCP beside it.
ARENA_TOKEN may hold several comma-separated tokens: the process then plays as several bots,
one stream each (so a benchmark can run a whole match against one bot process)."""

import asyncio
import os
import sys

import grpc

from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc


async def main(max_concurrent: int, delay_ms: int, batches: bool, address: str) -> None:
    await asyncio.gather(
        *(
            play(token, max_concurrent, delay_ms, batches, address)
            for token in os.environ["ARENA_TOKEN"].split(",")
        )
    )


def first_legal(req) -> pb.ActionReply:
    return pb.ActionReply(
        match_id=req.match_id, request_id=req.request_id, action=req.legal_actions[0]
    )


async def play(token: str, max_concurrent: int, delay_ms: int, batches: bool, address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        await call.write(
            pb.BotMessage(
                hello=pb.Hello(
                    token=token,
                    name="raw",
                    protocol_version=1,
                    max_concurrent=max_concurrent,
                    batches=batches,
                )
            )
        )

        async def answer(req):
            await asyncio.sleep(delay_ms / 1000)
            await call.write(pb.BotMessage(action=first_legal(req)))

        tasks = set()
        async for msg in call:
            if msg.WhichOneof("kind") == "action_requests":
                await call.write(
                    pb.BotMessage(
                        action_replies=pb.ActionReplies(
                            replies=[first_legal(req) for req in msg.action_requests.requests]
                        )
                    )
                )
                continue
            if msg.WhichOneof("kind") != "action_request":
                continue
            req = msg.action_request
            if delay_ms:
                task = asyncio.ensure_future(answer(req))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            else:
                await call.write(pb.BotMessage(action=first_legal(req)))


if __name__ == "__main__":
    try:
        asyncio.run(
            main(
                int(sys.argv[1]),
                int(sys.argv[2]) if len(sys.argv) > 2 else 0,
                len(sys.argv) > 3 and sys.argv[3] == "1",
                sys.argv[4] if len(sys.argv) > 4 else os.environ["ARENA_ADDRESS"],
            )
        )
    except (KeyboardInterrupt, grpc.aio.AioRpcError):
        pass
