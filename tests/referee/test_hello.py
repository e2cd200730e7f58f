"""The referee's answers to a bot's Hello, over real gRPC."""

from __future__ import annotations

import grpc
import pytest

from arena.referee.host import RefereeHost
from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc


async def hello(address: str, token: str, version: int, max_concurrent: int = 0):
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        await call.write(
            pb.BotMessage(
                hello=pb.Hello(
                    token=token, name="t", protocol_version=version, max_concurrent=max_concurrent
                )
            )
        )
        try:
            first = await call.read()
        except grpc.aio.AioRpcError as err:
            return None, err.code(), err.details()
        call.cancel()
        return first, grpc.StatusCode.OK, ""


@pytest.mark.parametrize("case", ["unknown token", "old version", "good"])
def test_hello_is_answered_with_a_welcome_or_a_status_that_says_what_to_do(tmp_path, run, case):
    async def main():
        async with RefereeHost(tmp_path) as host:
            token = host.tokens.issue("bot-1")
            if case == "unknown token":
                return await hello(host.server.address, "nope", 1)
            if case == "old version":
                return await hello(host.server.address, token, 99)
            return await hello(host.server.address, token, 1, max_concurrent=500)

    first, code, details = run(main())
    if case == "unknown token":
        assert code == grpc.StatusCode.UNAUTHENTICATED and "arena bot add" in details
    elif case == "old version":
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "99" in details and "speaks 1" in details
    else:
        assert first.welcome.bot_name == "bot-1"
        assert first.welcome.max_concurrent == 64  # capped by the referee
