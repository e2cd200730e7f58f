"""A socket of its own per launched bot, and the TCP port's caps per peer, over real gRPC."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc

from arena.referee.server import RefereeServer
from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc
from tests.timing import scaled

TOKENS = {"tok-a": "a", "tok-b": "b"}


async def authenticate(token: str) -> str | None:
    return TOKENS.get(token)


def hello(token: str) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token=token, name="t", protocol_version=1))


async def welcomed(address: str, token: str) -> str:
    """The bot name the referee at `address` welcomes `token` as."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        await call.write(hello(token))
        first = await asyncio.wait_for(call.read(), 10)
        call.cancel()
        return first.welcome.bot_name


def test_each_bot_socket_is_its_own_and_closes_alone(run):
    async def main():
        server = RefereeServer(authenticate)
        await server.start()
        try:
            a = await server.open_bot_socket("a")
            b = await server.open_bot_socket("b")
            assert a != b and a.parent == b.parent == server.socket_dir
            assert await server.open_bot_socket("a") == a  # the same while open
            assert stat.S_IMODE(a.stat().st_mode) == 0o666
            assert await welcomed(f"unix:{a}", "tok-a") == "a"
            assert await welcomed(f"unix:{b}", "tok-b") == "b"
            # Filling a's connections (4) leaves b's alone: grpc closes a fifth as it accepts it.
            held = []
            for _ in range(5):
                sock = socket.socket(socket.AF_UNIX)
                sock.connect(str(a))
                held.append(sock)
            loop = asyncio.get_running_loop()
            fifth = held[-1]
            fifth.setblocking(False)
            assert await asyncio.wait_for(loop.sock_recv(fifth, 64), 10) == b""
            assert await welcomed(f"unix:{b}", "tok-b") == "b"
            for sock in held:
                sock.close()
            await server.close_bot_socket("a")
            assert not a.exists() and b.exists()
            assert "a" not in server.bot_sockets() and "b" in server.bot_sockets()
            await server.close_bot_socket("a")  # nothing left to close: no error
        finally:
            await server.stop(0)
        assert server.socket_dir is None and not b.exists()

    run(main())


def test_silent_streams_of_one_peer_are_refused_for_capacity_not_another_peers(run):
    async def main():
        server = RefereeServer(authenticate, host="[::]")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                stub = pb_grpc.RefereeStub(channel)
                silent = [stub.Play() for _ in range(8)]
                # The 8 reach the referee and wait for their Hello; a ninth is refused at once.
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 10
                while server.servicer.admission.awaiting_total < 8:
                    assert loop.time() < deadline, "the 8 silent streams did not arrive"
                    await asyncio.sleep(0.01)  # polling under a deadline
                ninth = stub.Play()
                assert await asyncio.wait_for(ninth.code(), 10) == (
                    grpc.StatusCode.RESOURCE_EXHAUSTED
                )
                assert "refused for capacity" in await ninth.details()
                # Another peer (::1) is welcomed meanwhile.
                assert await welcomed(f"[::1]:{server.port}", "tok-a") == "a"
                for call in silent:
                    call.cancel()
        finally:
            await server.stop(0)

    run(main())


def test_out_of_descriptors_a_bot_socket_is_an_oserror_and_grpc_logs_nothing():
    # In a child, so this test process keeps its own limits: descriptors used up to the soft
    # limit, then open_bot_socket fails with an OSError (LocalExecutor makes it an
    # infrastructure failure), before gRPC's core could log a line of its own for it.
    code = (
        "import asyncio, os, resource\n"
        "from arena.referee.server import RefereeServer\n"
        "async def main():\n"
        "    server = RefereeServer(lambda token: None)\n"
        "    await server.start()\n"
        "    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "    held = []\n"
        "    try:\n"
        "        while True:\n"
        "            held.append(os.open(os.devnull, os.O_RDONLY))\n"
        "    except OSError:\n"
        "        pass\n"
        "    try:\n"
        "        await server.open_bot_socket('a')\n"
        "        print('opened')\n"
        "    except OSError as err:\n"
        "        print('refused', err.errno)\n"
        "    for fd in held:\n"
        "        os.close(fd)\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))\n"
        "    await server.stop()\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["refused", str(errno.EMFILE)], out.stdout + out.stderr
    assert "add_port" not in out.stderr, out.stderr


def test_a_temporary_folder_too_deep_for_a_socket_s_path_puts_the_sockets_in_tmp(
    run, tmp_path, monkeypatch
):
    """A socket's path is at most 107 bytes: under a TMPDIR deeper than that allows (pytest's
    own, under xdist, came within a few bytes), the bots' sockets go under /tmp instead, and
    bots connect (before, every launch failed and serve retried for ever)."""
    deep = tmp_path / ("d" * 60) / ("e" * 40)
    deep.mkdir(parents=True)
    monkeypatch.setattr("tempfile.tempdir", str(deep))

    async def main():
        server = RefereeServer(authenticate)
        await server.start()
        try:
            a = await server.open_bot_socket("a")
            assert a.parent.parent == Path("/tmp") and len(str(a)) <= 107
            assert await welcomed(f"unix:{a}", "tok-a") == "a"
        finally:
            await server.stop(0)

    run(main())


def test_a_referee_killed_9_leaves_its_socket_folder_and_the_next_start_removes_it(
    run, monkeypatch
):
    """A referee that dies without its stop (kill -9, a Ray node's worker) cannot remove its
    bots' socket folder; the next referee started on the host removes every folder whose
    referee is gone (153 had piled up in /tmp over a day of test runs), and no other."""
    # A temporary folder short enough for the sockets (pytest's tmp_path is not), of its own.
    tmp_path = Path(tempfile.mkdtemp(prefix="arena-t-", dir="/tmp"))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    try:
        _killed_then_swept(run, tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _killed_then_swept(run, tmp_path: Path) -> None:
    code = (
        "import asyncio, os, signal\n"
        "from arena.referee.server import RefereeServer\n"
        "async def main():\n"
        "    server = RefereeServer(lambda token: None)\n"
        "    await server.start()\n"
        "    await server.open_bot_socket('a')\n"
        "    print(server.socket_dir, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60), env=env
    )
    assert out.returncode == -signal.SIGKILL, out.stderr
    left = Path(out.stdout.strip())
    assert left.parent == tmp_path and (left / "bot-1.sock").exists(), out.stdout
    # Not ours to touch: another user's name pattern, and a live process's folder.
    foreign = tmp_path / "arena-referee-notapid"
    foreign.mkdir()
    alive = tmp_path / f"arena-referee-{os.getppid()}-abcdefgh"
    alive.mkdir()

    async def main():
        server = RefereeServer(authenticate)
        await server.start()
        own = server.socket_dir
        swept = [not left.exists(), foreign.is_dir(), alive.is_dir()]  # noqa: ASYNC240
        await server.stop(0)
        return own, swept

    own, swept = run(main())
    assert own is not None and own.parent == tmp_path
    assert swept == [True, True, True], "the dead referee's folder gone, the others kept"
    assert not own.exists()  # and its own, at its stop
