"""An honest bot with fixed work per decision, for the noisy-neighbour suite: it spends WORK_MS
of its own CPU time (measured with the process clock, so a slower CPU share shows as a longer
wall time) before answering the first legal action.

    python busy_bot.py WORK_MS   (address and token from ARENA_ADDRESS / ARENA_TOKEN)
"""

import asyncio
import os
import sys
import time

import grpc
from raw_bot import first_legal  # the folder of this script is on the path

from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc


def work(ms: float) -> None:
    end = time.process_time() + ms / 1000
    while time.process_time() < end:
        pass


async def main(work_ms: float) -> None:
    async with grpc.aio.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        hello = pb.Hello(token=os.environ["ARENA_TOKEN"], name="busy", protocol_version=1)
        await call.write(pb.BotMessage(hello=hello))
        async for msg in call:
            if msg.WhichOneof("kind") == "action_request":
                work(work_ms)
                await call.write(pb.BotMessage(action=first_legal(msg.action_request)))


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1])))
