"""A probe of the referee's Play stream for the service's tests: say Hello with a token and
read what the referee answers."""

from __future__ import annotations

import grpc

from arena_sdk.proto import arena_pb2 as pb


def hello(address: str, token: str) -> tuple[grpc.StatusCode, str]:
    """Say Hello on a new Play stream with `token`: (OK, the bot's name) when welcomed, else the
    status and message the referee refused it with."""
    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream(
            "/arena.v1.Referee/Play",
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        replies = play(
            iter(
                [
                    pb.BotMessage(
                        hello=pb.Hello(
                            token=token, name="probe", protocol_version=1, max_concurrent=1
                        )
                    )
                ]
            ),
            timeout=10,
        )
        try:
            first = next(replies)
        except grpc.RpcError as err:
            return err.code(), err.details()
        replies.cancel()
        return grpc.StatusCode.OK, first.welcome.bot_name
