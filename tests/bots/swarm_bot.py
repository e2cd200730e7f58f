"""Many bots in one process, for load tests: one stream per token in ARENA_TOKEN (comma-
separated), each answering every request at once. Usage: swarm_bot.py MAX_CONCURRENT POLICY,
POLICY `first` (the first legal action) or `last` (the last one: in Balloon Challenge, drop out,
which makes the shortest matches)."""

import asyncio
import os
import sys

import grpc

from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc


async def play(
    address: str, token: str, max_concurrent: int, pick: int, name: str = "swarm"
) -> None:
    """One bot on one stream, to its end: it answers each request with its legal action `pick`
    (0 the first, -1 the last). tests/reliability/test_fuzz_server.py imports it for its
    in-process good bots."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        await call.write(
            pb.BotMessage(
                hello=pb.Hello(
                    token=token, name=name, protocol_version=1, max_concurrent=max_concurrent
                )
            )
        )
        while (msg := await call.read()) is not grpc.aio.EOF:
            if msg.WhichOneof("kind") == "action_request":
                req = msg.action_request
                await call.write(
                    pb.BotMessage(
                        action=pb.ActionReply(
                            match_id=req.match_id,
                            request_id=req.request_id,
                            action=req.legal_actions[pick],
                        )
                    )
                )


async def main(max_concurrent: int, policy: str) -> None:
    pick = 0 if policy == "first" else -1
    address = os.environ["ARENA_ADDRESS"]
    await asyncio.gather(
        *(
            play(address, token, max_concurrent, pick)
            for token in os.environ["ARENA_TOKEN"].split(",")
        )
    )


if __name__ == "__main__":
    try:
        asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
    except (KeyboardInterrupt, grpc.aio.AioRpcError):
        pass
