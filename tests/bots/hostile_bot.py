"""Hostile bots for the reliability suite (tests/reliability), speaking the protocol directly.

Usage: python hostile_bot.py MODE [ARG]   (address and token from ARENA_ADDRESS / ARENA_TOKEN)

Every mode plays well (the first legal action) except where it misbehaves, and writes what it
observed to ./report.json (its working directory) when it has something to tell the test.

  flood         after its first reply, sends that reply again 20,000 times, as fast as it can
  ping_flood    sends 20,000 pings without reading the pongs
  oversize      answers its first request with a message of 100 KiB (over the 64 KiB limit)
  forge         before each reply, sends replies for request ids 1..30 of the same match
                (requests of other seats, if ids were shared), all dropping out / lowest cards
  other_match   answers each request with the id of another match it plays (max_concurrent 2)
  thief         connects with the token in ARENA_TOKEN (someone else's) and sends replies for
                the match ARG (request ids 1..30), then plays the matches it is given
  many_conns    opens ARG streams (default 300): a third never says hello, a third says hello
                with a bad token, a third with its own token; reports each stream's status
  memory        allocates 2 GiB at its first request (dies under RLIMIT_AS)
  spin          spins the CPU at its first request, never answering (RLIMIT_CPU kills it)
  spam_stderr   writes up to 4 GiB to stderr at its first request, then plays on
  snoop         reports its cwd, HOME, TMPDIR, environment, umask, and what it could reach
  reconnect     at its 3rd request drops its stream, reconnects with the same token, plays on
  escape        tries to get out of its sandbox before it connects (ARG: JSON naming the files to
                read, the pids whose environment to read, the TCP ports on 127.0.0.1 to reach,
                the paths to write), leaves a setsid child and a double-forked grandchild
                sleeping, reports what each attempt did, then plays well
  fork_bomb     at its first request forks sleeping children until a fork fails, reports how
                many it made and why it stopped, then plays on
  ends          plays well and appends the id of every MatchEnd it reads to ./ends.txt; on
                SIGTERM it reads on for 1 s (what is already on its stream), then exits
  fd_hog        forks P processes, each holding C plain connections (nothing written) to its
                referee address (ARG "P,C", default "8,200") and opening a new one for each the
                referee closes, each writing ./fd_hog-N.json with its counts; plays well
  hello_hog     never says Hello: holds ARG (default 1000) Play streams on channels of 16
                streams, opening a new one for each that ends; reports how they ended and how
                many were open at most (the token may be empty: a tokenless client)
  late          sleeps ARG seconds (a slow start) before it connects, then plays well
"""

import asyncio
import json
import os
import signal
import socket
import sys
import time

import grpc

from arena_sdk.proto import arena_pb2 as pb
from arena_sdk.proto import arena_pb2_grpc as pb_grpc

MODE = sys.argv[1]
ARG = sys.argv[2] if len(sys.argv) > 2 else ""


def report(data: dict) -> None:
    # Written to a temporary name then renamed, so the test never reads half a report.
    with open("report.json.tmp", "w") as f:
        json.dump(data, f)
    os.replace("report.json.tmp", "report.json")


def hello(token: str, max_concurrent: int = 1) -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(token=token, name=MODE, protocol_version=1, max_concurrent=max_concurrent)
    )


def reply(match_id: str, request_id: int, action: pb.Action) -> pb.BotMessage:
    return pb.BotMessage(
        action=pb.ActionReply(match_id=match_id, request_id=request_id, action=action)
    )


async def open_play(channel, token: str, max_concurrent: int = 1):
    call = pb_grpc.RefereeStub(channel).Play()
    await call.write(hello(token, max_concurrent))
    return call


async def play_well(call) -> None:
    async for msg in call:
        if msg.WhichOneof("kind") == "action_request":
            req = msg.action_request
            await call.write(reply(req.match_id, req.request_id, req.legal_actions[0]))


async def main() -> None:
    token = os.environ["ARENA_TOKEN"]
    address = os.environ["ARENA_ADDRESS"]
    if MODE == "snoop":
        snoop(token)
    if MODE == "escape":
        escape(json.loads(ARG))
    if MODE == "many_conns":
        await many_conns(address, token, int(ARG or 300))
        return
    if MODE == "fd_hog":
        fd_hog(address, *(int(n) for n in (ARG or "8,200").split(",")))
    if MODE == "hello_hog":
        await hello_hog(address, int(ARG or 1000))
    if MODE == "late":
        await asyncio.sleep(float(ARG))
    max_concurrent = 2 if MODE == "other_match" else 1
    async with grpc.aio.insecure_channel(address) as channel:
        call = await open_play(channel, token, max_concurrent)
        if MODE == "thief":
            for rid in range(1, 31):
                await call.write(
                    reply(ARG, rid, pb.Action(balloon=pb.BalloonAction(drop_out=True)))
                )
        requests = 0
        matches: list[str] = []
        if MODE == "ends":
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGTERM, lambda: loop.call_later(1.0, call.cancel))
        try:
            async for msg in call:
                kind = msg.WhichOneof("kind")
                if MODE == "ends" and kind == "match_end":
                    with open("ends.txt", "a") as f:
                        f.write(msg.match_end.match_id + "\n")
                if kind == "match_start":
                    matches.append(msg.match_start.match_id)
                if kind == "match_end" and msg.match_end.match_id in matches:
                    matches.remove(msg.match_end.match_id)
                if kind != "action_request":
                    continue
                req = msg.action_request
                requests += 1
                good = reply(req.match_id, req.request_id, req.legal_actions[0])
                if MODE == "flood" and requests == 1:
                    await call.write(good)
                    for _ in range(20_000):
                        await call.write(good)
                    continue
                if MODE == "ping_flood" and requests == 1:
                    for n in range(20_000):
                        await call.write(pb.BotMessage(ping=pb.Ping(nonce=n)))
                if MODE == "oversize" and requests == 1:
                    await call.write(reply("x" * 100 * 1024, req.request_id, req.legal_actions[0]))
                    continue
                if MODE == "forge":
                    for rid in range(1, 31):
                        if rid != req.request_id:
                            await call.write(reply(req.match_id, rid, req.legal_actions[-1]))
                if MODE == "other_match":
                    others = [m for m in matches if m != req.match_id]
                    if others:
                        await call.write(reply(others[0], req.request_id, req.legal_actions[0]))
                        continue
                if MODE == "memory" and requests == 1:
                    hog = bytearray(2 * 1024**3)
                    hog[-1] = 1
                if MODE == "spin" and requests == 1:
                    while True:
                        pass
                if MODE == "spam_stderr" and requests == 1:
                    spam_stderr()
                if MODE == "fork_bomb" and requests == 1:
                    fork_bomb()
                if MODE == "reconnect" and requests == 3:
                    call.cancel()
                    call = await open_play(channel, token)
                    report({"reconnected": True})
                    await play_well(call)
                    return
                await call.write(good)
        except grpc.aio.AioRpcError as err:
            # A write that fails tells little ("Internal error from Core"): the call's own
            # status is what the referee said.
            code, details = err.code(), err.details()
            if not call.cancelled():
                code, details = await call.code(), await call.details()
            report({"code": code.name, "details": details})
            sys.exit(1)
        if call.cancelled():
            return
        code = await call.code()
        report({"code": code.name, "details": await call.details()})


def spam_stderr() -> None:
    chunk = b"spam " * (1 << 18)  # 1.25 MiB
    written = 0
    error = ""
    try:
        while written < 4 * 1024**3:
            written += os.write(2, chunk)
    except OSError as err:  # EFBIG once the log reaches RLIMIT_FSIZE (Python ignores SIGXFSZ)
        error = err.strerror or str(err)
    report({"written": written, "error": error})


def attempt(action) -> str:
    """'ok: ...' when the action worked, else the error it met."""
    try:
        return f"ok: {action()!r}"[:200]
    except Exception as err:  # noqa: BLE001 - every failure is what we report
        return f"{type(err).__name__}: {err}"[:200]


def read(path: str) -> int:
    """Bytes in a file, or entries in a directory."""
    if os.path.isdir(path):
        return len(os.listdir(path))
    with open(path, "rb") as f:
        return len(f.read())


def write(path: str) -> str:
    with open(path, "w") as f:
        f.write("escaped")
    return path


def connect(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        return str(s.getpeername())


def sleep_forever() -> None:
    os.closerange(3, 1024)
    time.sleep(3600)
    os._exit(0)


def escape(targets: dict) -> None:
    """Try each way out, and leave two children that a process group kill would not reach."""
    found = {
        "read": {p: attempt(lambda p=p: read(p)) for p in targets["read"]},
        "environ": {
            str(pid): attempt(lambda pid=pid: read(f"/proc/{pid}/environ"))
            for pid in targets["environ_pids"]
        },
        "tcp": {str(port): attempt(lambda port=port: connect(port)) for port in targets["tcp"]},
        "write": {p: attempt(lambda p=p: write(p)) for p in targets["write"]},
        "proc": sorted(int(e) for e in os.listdir("/proc") if e.isdigit()),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
    }
    ready_r, ready_w = os.pipe()
    if os.fork() == 0:  # a child in a session of its own: out of the bot's process group
        os.setsid()
        os.write(ready_w, b"s")
        sleep_forever()
    if (middle := os.fork()) == 0:  # a double fork: the grandchild is an orphan
        if os.fork() == 0:
            os.setsid()
            os.write(ready_w, b"d")
            sleep_forever()
        os._exit(0)
    os.waitpid(middle, 0)
    found["children_ready"] = sorted(os.read(ready_r, 1).decode() + os.read(ready_r, 1).decode())
    report(found)


def fork_bomb() -> None:
    # Forked from a process of its own: forking the gRPC process itself over and over breaks
    # gRPC's threads before any limit is reached, and that is not what is tried here.
    import subprocess

    subprocess.run([sys.executable, __file__, "fork_bomb_child"], check=False)


def fork_bomb_child() -> None:
    made, error = 0, ""
    try:
        while made < 100_000:
            if os.fork() == 0:
                sleep_forever()
            made += 1
    except OSError as err:
        error = f"{type(err).__name__}: {err}"
    report({"forked": made, "error": error})


def snoop(token: str) -> None:
    """What a bot can find out about its surroundings (the test checks what must hold)."""
    os.makedirs("sub", exist_ok=True)
    with open("sub/mine.txt", "w") as f:
        f.write("x")
    mask = os.umask(0)
    os.umask(mask)
    outside = os.path.join(os.path.dirname(os.getcwd()), "snoop-was-here.txt")
    try:
        with open(outside, "w") as f:
            f.write("x")
        wrote_outside = True
    except OSError:
        wrote_outside = False
    report(
        {
            "cwd": os.getcwd(),
            "home": os.environ.get("HOME"),
            "tmpdir": os.environ.get("TMPDIR"),
            "env": dict(os.environ),
            "umask": mask,
            "file_mode": os.stat("sub/mine.txt").st_mode & 0o777,
            "dir_mode": os.stat("sub").st_mode & 0o777,
            "wrote_outside": wrote_outside,
            "token_len": len(token),
        }
    )


async def many_conns(address: str, token: str, n: int) -> None:
    """Open n streams at once on separate channels; report how each ended."""

    async def one(kind: str) -> str:
        async with grpc.aio.insecure_channel(address) as channel:
            call = pb_grpc.RefereeStub(channel).Play()
            try:
                if kind == "bad":
                    await call.write(hello("not-a-token"))
                elif kind == "own":
                    await call.write(hello(token))
                    first = await call.read()
                    if first is grpc.aio.EOF or first.WhichOneof("kind") != "welcome":
                        return (await call.code()).name
                    # Welcomed: hang up at once (a newer stream may already have replaced it).
                    await call.done_writing()
                while await call.read() is not grpc.aio.EOF:
                    pass
                return (await call.code()).name
            except grpc.aio.AioRpcError as err:
                return err.code().name

    kinds = [("silent", "bad", "own")[i % 3] for i in range(n)]
    codes = await asyncio.gather(*(one(k) for k in kinds))
    out: dict[str, dict[str, int]] = {}
    for kind, code in zip(kinds, codes):
        out.setdefault(kind, {}).setdefault(code, 0)
        out[kind][code] += 1
    report(out)


def plain_connect(address: str) -> socket.socket:
    """A plain connection to the referee's address (unix:PATH or HOST:PORT), nothing sent."""
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        target: object = address[len("unix:") :]
    else:
        host, port = address.rsplit(":", 1)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        target = (host, int(port))
    sock.settimeout(1.0)
    try:
        sock.connect(target)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def fd_hog(address: str, processes: int, conns: int) -> None:
    for n in range(processes):
        if os.fork() == 0:
            try:
                fd_hog_process(address, n, conns)
            finally:
                os._exit(0)


def fd_hog_process(address: str, n: int, conns: int) -> None:
    held: list[socket.socket] = []
    counts = {"connected": 0, "closed_by_referee": 0, "failed": 0, "most_held": 0}
    errors: dict[str, int] = {}
    last_report = 0.0
    while True:
        while len(held) < conns:
            try:
                held.append(plain_connect(address))
                counts["connected"] += 1
            except OSError as err:
                counts["failed"] += 1
                name = type(err).__name__
                errors[name] = errors.get(name, 0) + 1
                break
        counts["most_held"] = max(counts["most_held"], len(held))
        for sock in list(held):
            try:
                closed = sock.recv(65536) == b""
            except BlockingIOError:
                closed = False
            except OSError:
                closed = True
            if closed:
                counts["closed_by_referee"] += 1
                held.remove(sock)
                sock.close()
        if time.monotonic() - last_report > 0.5:
            last_report = time.monotonic()
            with open(f"fd_hog-{n}.json.tmp", "w") as f:
                json.dump({**counts, "held": len(held), "errors": errors}, f)
            os.replace(f"fd_hog-{n}.json.tmp", f"fd_hog-{n}.json")
        time.sleep(0.05)


async def hello_hog(address: str, streams: int) -> None:
    ended: dict[str, int] = {}
    state = {"open": 0, "most_open": 0, "opened": 0}

    async def hold(channel) -> None:
        while True:
            call = pb_grpc.RefereeStub(channel).Play()
            state["open"] += 1
            state["opened"] += 1
            state["most_open"] = max(state["most_open"], state["open"])
            try:
                code = (await call.code()).name
            except grpc.aio.AioRpcError as err:
                code = err.code().name
            finally:
                state["open"] -= 1
            ended[code] = ended.get(code, 0) + 1
            await asyncio.sleep(0.1)  # then at it again

    async def reports() -> None:
        while True:
            report({"ended": ended, **state})
            await asyncio.sleep(0.5)

    per_channel = 16
    channels = [grpc.aio.insecure_channel(address) for _ in range(-(-streams // per_channel))]
    await asyncio.gather(
        reports(),
        *(hold(channels[i // per_channel]) for i in range(streams)),
    )


if __name__ == "__main__" and MODE == "fork_bomb_child":
    fork_bomb_child()
elif __name__ == "__main__":
    asyncio.run(main())
