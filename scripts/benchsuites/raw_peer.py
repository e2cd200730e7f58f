"""The reference for the referee benchmark: plain grpc.aio with no Arena code.

The server side (in the benchmark's process) writes request-sized messages on a bidirectional
stream and reads small replies, as the referee does; this client (its own process) answers each
message with a small reply at once, as a bot does. Usage: raw_peer.py ADDRESS."""

import asyncio
import sys

import grpc

METHOD = "/bench.Raw/Pingpong"
REPLY = b"r" * 40  # about the size of an ActionReply


async def main(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(METHOD, request_serializer=None,
                                     response_deserializer=None)()
        await call.write(b"hello")
        async for _ in call:
            await call.write(REPLY)


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1]))
    except (KeyboardInterrupt, grpc.aio.AioRpcError):
        pass
