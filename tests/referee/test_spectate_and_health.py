"""The spectator stream and the standard health service, over real gRPC."""

from __future__ import annotations

import asyncio

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.games import make_game
from arena.referee.host import RefereeHost
from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc

from .conftest import FAST, fault_bot


def test_health_service_reports_serving(tmp_path, run):
    async def main():
        async with RefereeHost(tmp_path) as host:
            async with grpc.aio.insecure_channel(host.server.address) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                overall = await stub.Check(health_pb2.HealthCheckRequest(service=""))
                referee = await stub.Check(
                    health_pb2.HealthCheckRequest(service="arena.v1.Referee")
                )
                return overall.status, referee.status

    assert run(main()) == (health_pb2.HealthCheckResponse.SERVING,) * 2


def test_a_spectator_sees_every_public_event_until_the_end(tmp_path, run):
    async def main():
        async with RefereeHost(tmp_path) as host:
            for name in ("a", "b", "c"):
                await host.launch(name, fault_bot("good"))
            game = make_game("boom", 3)
            # Registered before the match starts, so the spectator cannot arrive too early.
            feed = host.server.live.observer("watched", game.name)
            match = asyncio.ensure_future(
                host.run_match(game, 5, ["a", "b", "c"], FAST, match_id="watched", observer=feed)
            )
            async with grpc.aio.insecure_channel(host.server.address) as channel:
                stub = pb_grpc.RefereeStub(channel)
                events = [e async for e in stub.Watch(pb.WatchRequest(match_id="watched"))]
                try:
                    await stub.Watch(pb.WatchRequest(match_id="nope")).read()
                    missing = None
                except grpc.aio.AioRpcError as err:
                    missing = err.code()
            result = await match
            return events, result, missing

    events, result, missing = run(main())
    assert missing == grpc.StatusCode.NOT_FOUND
    assert events[-1].final and events[-1].kind == "match_end"
    assert [e.index for e in events[:-1]] == list(range(len(events) - 1))
    assert events[-1].data["scores"] == " ".join(map(str, result.scores))
    kinds = {e.kind for e in events}
    assert {"guard", "reveal"} <= kinds
    # Public views carry no hand.
    assert all(
        not e.public_observation.boom.hand for e in events if e.HasField("public_observation")
    )
