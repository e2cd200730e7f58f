"""Web: median latency of the leaderboard page, the leaderboard API and the match page (plus the
match list and a bot page, without goals), over a database of 100,000+ real matches among 100
bots, through a real HTTP client (httpx, keep-alive) against uvicorn in its own process on a
free port. Each match page asked for is a different match, so the replay frames are built for
every request (the app's frames cache never hits).

Goals (issue 5): leaderboard page and API at most 50 ms median, match page at most 100 ms.
"""

from __future__ import annotations

import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BOTS = 100
TABLE = 3
ROUNDS = 20  # 5,100 matches a round with 100 bots at tables of 3: 102,000 matches

GOALS_MS = {"leaderboard_page": 50.0, "leaderboard_api": 50.0, "match_page": 100.0}


def build(path: Path, log) -> int:
    from arena.store import Store
    from arena.web.sample import play_ladder

    t = time.perf_counter()
    with Store(path) as store:
        names = [f"bot{i:03d}" for i in range(BOTS)]
        for name in names:
            store.add_bot(name, remote=True)
        store.create_ladder("big", "balloon", TABLE, names, seed=1, rounds=ROUNDS)
        played = play_ladder(store, "big", seed=2, fault_rate=0.02, batch=5000)
    log(f"built {path.name}: {played} real matches among {BOTS} bots in "
        f"{time.perf_counter() - t:.0f} s")
    return played


def serve(path: Path) -> tuple[subprocess.Popen, str, socket.socket]:
    """uvicorn on a socket this process bound (port 0: a free one), handed to the child."""
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto
    # says TCP, and without that every small response waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.set_inheritable(True)
    port = sock.getsockname()[1]
    # socket(fileno=) keeps the socket's real family and proto (uvicorn's fd= option would
    # treat it as AF_UNIX, and asyncio would then leave Nagle on).
    code = ("import socket, sys, uvicorn; from arena.web.app import create_app; "
            "s = socket.socket(fileno=int(sys.argv[2])); "
            "uvicorn.Server(uvicorn.Config(create_app(sys.argv[1]), log_level='warning'))"
            ".run(sockets=[s])")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path), str(sock.fileno())],
                            pass_fds=[sock.fileno()], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return proc, f"http://127.0.0.1:{port}", sock


def wait_ready(client, url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the web server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            if client.get(f"{url}/api/ladders").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # polling for readiness (a benchmark, not a test)
    raise RuntimeError("the web server did not answer within 60 s")


def measure(client, urls: list[str], seconds: float, max_requests: int = 400) -> dict:
    for u in urls[:3]:  # warm up connections and imports
        assert client.get(u).status_code == 200, u
    times = []
    sizes = []
    end = time.perf_counter() + seconds
    i = 0
    while (time.perf_counter() < end or len(times) < 20) and len(times) < max_requests:
        u = urls[i % len(urls)]
        i += 1
        t = time.perf_counter()
        r = client.get(u)
        times.append((time.perf_counter() - t) * 1000)
        if r.status_code != 200:
            raise RuntimeError(f"{u} answered {r.status_code}: {r.text[:300]}")
        sizes.append(len(r.content))
    times.sort()
    return {"median_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(len(times) * 0.95) - 1], 2),
            "requests": len(times), "mean_bytes": int(statistics.mean(sizes))}


def run(seconds: float, log) -> dict:
    import httpx

    from arena.store import Store

    with tempfile.TemporaryDirectory(prefix="arena-bench-web-") as tmp:
        path = Path(tmp) / "web.db"
        stored = build(path, log)
        with Store(path, readonly=True) as store:
            done = [m.index for m in store.matches("big", ("completed",))]
        rng = random.Random(3)
        picks = rng.sample(done, 400)
        proc, url, sock = serve(path)
        try:
            with httpx.Client(timeout=30) as client:
                wait_ready(client, url, proc)
                cases = {
                    "leaderboard_page": [f"{url}/ladders/big"],
                    "leaderboard_api": [f"{url}/api/ladders/big"],
                    "match_page": [f"{url}/ladders/big/matches/{i}" for i in picks],
                    "match_api_with_frames": [f"{url}/api/ladders/big/matches/{i}?frames=true"
                                              for i in reversed(picks)],
                    "match_list_page": [f"{url}/matches?ladder=big"],
                    "match_list_api_by_bot": [f"{url}/api/matches?bot=bot{i:03d}"
                                              for i in range(0, BOTS, 7)],
                    "bot_page": [f"{url}/bots/bot{i:03d}" for i in range(0, BOTS, 3)],
                }
                results = {"stored_matches": stored, "bots": BOTS}
                log(f"{'case':<26} {'median ms':>10} {'p95 ms':>9} {'requests':>9} {'bytes':>9}")
                for name, urls in cases.items():
                    r = measure(client, urls, seconds)
                    results[name] = r
                    log(f"{name:<26} {r['median_ms']:>10.2f} {r['p95_ms']:>9.2f} "
                        f"{r['requests']:>9} {r['mean_bytes']:>9}")
        finally:
            from benchsuites.common import stop_process

            stop_process(proc)
            sock.close()
    goals = {name: {"value": results[name]["median_ms"], "goal": f"<= {goal:g} ms median",
                    "met": results[name]["median_ms"] <= goal}
             for name, goal in GOALS_MS.items()}
    return {"results": results, "goals": goals}
