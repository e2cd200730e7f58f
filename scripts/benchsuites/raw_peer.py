"""The reference for the referee benchmark: plain grpc.aio with no Arena code.

The server side (in the benchmark's process) writes the protocol's own messages (a real
ActionRequest) on a bidirectional stream and reads replies, as the referee does; this client (its
own process) parses each and answers with a prebuilt ActionReply at once, as a minimal bot does.
Both sides pay protobuf's parsing and serialising, so the comparison isolates what the referee
itself adds. Usage: raw_peer.py ADDRESS."""

import asyncio
import sys

import grpc
from raw_bot import first_legal  # its neighbour: this runs as a script, from this directory

from arena_sdk.proto import arena_pb2 as pb

METHOD = "/bench.Raw/Pingpong"


async def main(address: str, streams: int = 1) -> None:
    await asyncio.gather(*(serve(address) for _ in range(streams)))


async def serve(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(
            METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )()
        await call.write(pb.BotMessage(hello=pb.Hello(token="raw")))
        async for msg in call:
            await call.write(pb.BotMessage(action=first_legal(msg.action_request)))


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1))
    except (KeyboardInterrupt, grpc.aio.AioRpcError):
        pass
