"""Hostile bots for the reliability suite (tests/reliability), speaking the protocol directly.

Usage: python hostile_bot.py MODE [ARG]   (address and token from ARENA_ADDRESS / ARENA_TOKEN)

Every mode plays well (the first legal action) except where it misbehaves, and writes what it
observed to ./report.json (its working directory) when it has something to tell the test, and
the same as a line "REPORT {json}" to its stderr (its log, kept after the bot ends).

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
  memfd         at its first request fills ARG (default 3) memfds of 64 MB each, reporting the
                count after each, then plays on (a control group kills it for memory)
  shm           at its first request makes a SysV shared memory segment of ARG MB (default
                300), touches every page, detaches it and keeps it; reports, plays on
  children      at its first request starts 10 children that each allocate and touch ARG MB
                (default 100) and sleep; reports how many are alive, plays on
  spinners      at its first request starts ARG (default 8) children that spin the CPU
                forever; reports, plays on
  disk_fill     at its first request writes 1 MB at a time into files of 32 MB in its work
                directory until a write fails; reports what it wrote and why it stopped, plays on
  file_bomb     before it connects, creates empty files in its work directory until that fails
                or ARG (default 200,000) exist; reports how many and why it stopped, then exits
  syscalls      before it connects, tries each system call the sandbox's seccomp filter denies
                (and unshare of a user namespace, clone with namespace flags, clone3); reports
                what each returned and its seccomp mode, then plays well
  ends          plays well and writes the id of every MatchEnd it reads to its stderr (its log,
                which outlives its work directory) as "match_end ID"; on
                SIGTERM it reads on for 1 s (what is already on its stream), then exits
  fd_hog        forks P processes, each holding C plain connections (nothing written) to its
                referee address (ARG "P,C", default "8,200") and opening a new one for each the
                referee closes, each writing its counts to ./fd_hog-N.json and to its log as
                "FD_HOG N {...}"; once each has filled its share (or within 10 s), plays well
  hello_hog     never says Hello: holds ARG (default 1000) Play streams on channels of 16
                streams, opening a new one for each that ends; reports how they ended and how
                many were open at most (the token may be empty: a tokenless client)
  late          sleeps ARG seconds (a slow start) before it connects, then plays well
"""

import asyncio
import json
import os
import select
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
    # Written to a temporary name then renamed, so the test never reads half a report; and to
    # stderr (the bot's log), which outlives the work directory (unmounted when the bot ends).
    try:
        print(f"REPORT {json.dumps(data)}", file=sys.stderr, flush=True)
    except OSError:  # its log is full (spam_stderr): the file alone must do
        pass
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
    if MODE == "file_bomb":
        file_bomb(int(ARG or 200_000))
        return
    if MODE == "syscalls":
        probe_syscalls()
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
                    print(f"match_end {msg.match_end.match_id}", file=sys.stderr, flush=True)
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
                if requests == 1 and MODE in ATTACKS:
                    ATTACKS[MODE]()
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


def memfd() -> None:
    fds = []
    for _ in range(int(ARG or 3)):
        fd = os.memfd_create("hog")
        for _ in range(64):
            os.write(fd, b"m" * (1 << 20))
        fds.append(fd)
        report({"memfds": len(fds)})
    HELD.append(fds)


def shm() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    size = int(ARG or 300) << 20
    shmid = libc.shmget(0, ctypes.c_size_t(size), 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    if shmid < 0:
        report({"error": os.strerror(ctypes.get_errno())})
        return
    addr = libc.shmat(shmid, None, 0)
    ctypes.memset(addr, 1, size)
    libc.shmdt(ctypes.c_void_p(addr))
    report({"shm_mb": size >> 20, "detached": True})


def helper(mode: str) -> None:
    """Run a mode that forks in a process of its own (see fork_bomb)."""
    import subprocess

    subprocess.run([sys.executable, __file__, mode, ARG], check=False)


def children_child() -> None:
    size = int(ARG or 100) << 20
    for _ in range(10):
        if os.fork() == 0:
            hog = bytearray(size)
            for i in range(0, size, 4096):
                hog[i] = 1
            sleep_forever()
    time.sleep(1)  # what the children did: whichever the kernel killed is gone by now
    alive = len([e for e in os.listdir("/proc") if e.isdigit()])
    report({"children": 10, "processes_seen": alive})


def spinners_child() -> None:
    for _ in range(int(ARG or 8)):
        if os.fork() == 0:
            os.closerange(3, 1024)
            while True:
                pass
    report({"spinners": int(ARG or 8)})


def disk_fill() -> None:
    written, error, chunk = 0, "", b"d" * (1 << 20)
    try:
        while written < 8 * 1024**3:
            with open(f"fill-{written >> 25}", "ab") as f:
                f.write(chunk)
            written += len(chunk)
    except OSError as err:
        error = err.strerror or str(err)
    os.remove(f"fill-{written >> 25}")  # room for the report
    report({"written_mb": written >> 20, "error": error})


def file_bomb(limit: int) -> None:
    made, error = 0, ""
    os.makedirs("bomb", exist_ok=True)
    try:
        while made < limit:
            os.close(os.open(f"bomb/{made}", os.O_CREAT | os.O_WRONLY, 0o600))
            made += 1
    except OSError as err:
        error = err.strerror or str(err)
    if made:
        os.remove(f"bomb/{made - 1}")  # an inode for the report (and its temporary name)
        os.remove(f"bomb/{made - 2}")
    report({"files": made, "error": error})


def probe_syscalls() -> None:
    """Each call with arguments under which it would succeed (or fail with another error than
    EPERM) were it allowed; what each returned."""
    import ctypes

    from arena.referee import seccomp

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    numbers = seccomp.SYSCALLS[seccomp.native_arch()]
    params = ctypes.create_string_buffer(120)

    def call(name: str, *args) -> str:
        ctypes.set_errno(0)
        argv = [
            a if isinstance(a, ctypes.c_char_p | ctypes.Array) else ctypes.c_long(a) for a in args
        ]
        result = libc.syscall(ctypes.c_long(numbers[name]), *argv)
        if result == 0 and name == "clone":
            os._exit(0)  # the child of an allowed clone
        return f"ok {result}" if result >= 0 else os.strerror(ctypes.get_errno())

    found = {name: call(name, 0, 0, 0, 0, 0, 0) for name in seccomp.DENIED if name in numbers}
    found["io_uring_setup"] = call("io_uring_setup", 1, params)
    found["keyctl"] = call("keyctl", 0, -3, 0)  # KEYCTL_GET_KEYRING_ID of the session keyring
    found["add_key"] = call(
        "add_key", ctypes.c_char_p(b"user"), ctypes.c_char_p(b"k"), ctypes.c_char_p(b"v"), 1, -2
    )
    found["ptrace"] = call("ptrace", 0, 0, 0, 0)  # PTRACE_TRACEME
    found["userfaultfd"] = call("userfaultfd", 1)  # UFFD_USER_MODE_ONLY
    found["process_vm_readv"] = call("process_vm_readv", os.getpid(), 0, 0, 0, 0, 0)
    found["setns"] = call("setns", -1, 0)
    found["unshare"] = call("unshare", 0x10000000)  # CLONE_NEWUSER
    found["clone_newuser"] = call("clone", 0x10000000 | 17, 0, 0, 0, 0)  # | SIGCHLD
    found["clone3"] = call("clone3", 0, 0)
    status = open("/proc/self/status").read()
    mode = [line.split()[1] for line in status.splitlines() if line.startswith("Seccomp:")]
    report({"calls": found, "seccomp": mode[0] if mode else "?"})


HELD: list = []  # what an attack keeps alive
ATTACKS = {
    "memfd": memfd,
    "shm": shm,
    "children": lambda: helper("children_child"),
    "spinners": lambda: helper("spinners_child"),
    "disk_fill": disk_fill,
}


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
    # The main process waits (bounded) until each child has filled its share, then goes on to
    # play: its own stream finds the socket full and it dies, and its sandbox with it. So each
    # child also reports to the bot's log, which outlives the sandbox and its work directory.
    ready_r, ready_w = os.pipe()
    for n in range(processes):
        if os.fork() == 0:
            try:
                os.close(ready_r)
                fd_hog_process(address, n, conns, ready_w)
            finally:
                os._exit(0)
    os.close(ready_w)
    deadline = time.monotonic() + 10
    ready = 0
    while ready < processes and time.monotonic() < deadline:
        readable, _, _ = select.select([ready_r], [], [], deadline - time.monotonic())
        if not readable:
            break
        got = os.read(ready_r, processes)
        if not got:  # every child gone
            break
        ready += len(got)
    os.close(ready_r)


def fd_hog_process(address: str, n: int, conns: int, ready_w: int) -> None:
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
        if ready_w >= 0:  # its share filled (or refused): the main process may go on
            os.write(ready_w, b"x")
            os.close(ready_w)
            ready_w = -1
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
            data = {**counts, "held": len(held), "errors": errors}
            try:
                print(f"FD_HOG {n} {json.dumps(data)}", file=sys.stderr, flush=True)
            except OSError:
                pass
            with open(f"fd_hog-{n}.json.tmp", "w") as f:
                json.dump(data, f)
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
elif __name__ == "__main__" and MODE == "children_child":
    children_child()
elif __name__ == "__main__" and MODE == "spinners_child":
    spinners_child()
elif __name__ == "__main__":
    asyncio.run(main())
