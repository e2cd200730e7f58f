"""Web: median latency of the leaderboard page, the leaderboard API and the match page (plus the
match list and a bot page, without goals), over a database of 100,000+ real matches among 100
bots, through a real HTTP client (httpx, keep-alive) against uvicorn in its own process on a
free port. Each match page asked for is a different match, so the replay frames are built for
every request (the app's frames cache never hits).

Goals (issue 5): leaderboard page and API at most 50 ms median, match page at most 100 ms.

Live updates (issue 19, no goal: a measure): SPECTATORS event streams open on one match being
played (a live source in the server reveals a move every MOVE_EVERY seconds), read by this
process; the server's resident memory before and with the streams open, and its CPU seconds
per update sent (per update to all the spectators, and per spectator), against the same time
with no stream open.
"""

from __future__ import annotations

import os
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

SPECTATORS = 100
MOVE_EVERY = 0.5  # seconds between the live match's moves

GOALS_MS = {
    "leaderboard_page": 50.0,
    "leaderboard_api": 50.0,
    "match_page": 100.0,
    # Issue 33: a 200-move Boom match's replay page, and its owner's bot output beside the
    # moves (the page's script fetches it from the match logs API with the owner key).
    "boom_replay_page": 100.0,
    "owner_logs_api": 100.0,
}
# A line a move of what a launched bot might print while deciding (about 120 bytes).
LOG_LINE = "thinking: {n} legal actions, 400 playouts, best {best:.3f}, chose #{k}\n"


def add_logged_boom(path: Path) -> tuple[str, int, str]:
    """A Boom match of 4 (the series: 200 moves or more) whose seat 0 is a bot with an owner key
    and a match log of a line or two a move: (ladder, index, owner key)."""
    import dataclasses

    from arena.results import BotLog
    from arena.store import Store
    from arena.web.sample import random_result

    with Store(path) as store:
        names = [f"boomer{i}" for i in range(4)]
        for name in names:
            store.add_bot(name, remote=True)
        key = store.new_owner_key(names[0])
        store.create_ladder("boom", "boom", 4, names, seed=5, rounds=1, options={"series": True})
        config = store.get_ladder("boom").config
        rng = random.Random(4)
        for m in store.matches("boom"):
            result = random_result(config, m.seed, m.seats, rng)
            own = [i for i, mv in enumerate(result.moves) if mv.seat == 0]
            log = BotLog(
                moves=tuple(
                    (i, LOG_LINE.format(n=30, best=rng.random(), k=k) * (1 + k % 2))
                    for k, i in enumerate(own)
                ),
                tail="done\n",
            )
            logs = {m.seats.index(names[0]): log}
            store.record_result("boom", m.index, dataclasses.replace(result, bot_logs=logs))
        index = max(
            (m.index for m in store.matches("boom")),
            key=lambda i: len(store.replay("boom", i)["moves"]),
        )
        assert len(store.replay("boom", index)["moves"]) >= 200, "a 200-move match"
    return "boom", index, key


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
    log(
        f"built {path.name}: {played} real matches among {BOTS} bots in "
        f"{time.perf_counter() - t:.0f} s"
    )
    return played


class TimedLive:
    """A LiveSource (arena.web.site) for one running match: a random playout whose moves are
    revealed one every MOVE_EVERY seconds from when it is first watched, as a referee would
    play them."""

    def __init__(self, path: str, ladder: str):
        from arena.store import Store
        from arena.web.sample import random_result

        with Store(path, readonly=True) as store:
            match = store.matches(ladder, ("running",))[0]
            config = store.get_ladder(ladder).config
        self.key = (ladder, match.index)
        played = random_result(config, match.seed, match.seats, random.Random(4))
        self.moves = [m.to_list() for m in played.moves]
        self.doc = {"config": config, "seed": match.seed, "seat_names": list(match.seats)}
        self.start: float | None = None  # the first watcher starts the match

    def live_replay(self, ladder: str, index: int):
        if (ladder, index) != self.key:
            return None
        if self.start is None:
            self.start = time.monotonic()
        shown = min(len(self.moves), int((time.monotonic() - self.start) / MOVE_EVERY))
        return {**self.doc, "moves": self.moves[:shown]}


def serve_main() -> None:
    """The server process: `python -c ... serve_main()` DB FD [LIVE_LADDER]."""
    import uvicorn

    from arena.web.factory import create_app

    path, fd = sys.argv[1], int(sys.argv[2])
    live = TimedLive(path, sys.argv[3]) if len(sys.argv) > 3 else None
    s = socket.socket(fileno=fd)
    uvicorn.Server(
        uvicorn.Config(create_app(path, live=live), log_level="warning", lifespan="off")
    ).run(sockets=[s])


def serve(
    path: Path, live_ladder: str | None = None
) -> tuple[subprocess.Popen, str, socket.socket]:
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
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r}); "
        "from benchsuites.web import serve_main; serve_main()"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            str(path),
            str(sock.fileno()),
            *([live_ladder] if live_ladder else []),
        ],
        pass_fds=[sock.fileno()],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
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
    return {
        "median_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(len(times) * 0.95) - 1], 2),
        "requests": len(times),
        "mean_bytes": int(statistics.mean(sizes)),
    }


def _proc_cpu_rss(pid: int) -> tuple[float, int]:
    """A process's CPU seconds (user + system) and resident bytes, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    return cpu, rss


async def _spectate(url: str, n: int, seconds: float, pid: int) -> dict:
    """`n` event streams on `url` for `seconds`; what the server spent meanwhile."""
    import asyncio

    import httpx

    updates = [0] * n
    opened = asyncio.Event()
    ready = [0]

    async def one(i: int, client: httpx.AsyncClient) -> None:
        async with client.stream("GET", url) as r:
            if r.status_code != 200:
                raise RuntimeError(f"{url} answered {r.status_code}")
            ready[0] += 1
            if ready[0] == n:
                opened.set()
            async for line in r.aiter_lines():
                if line.startswith("event: frames"):
                    updates[i] += 1

    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    async with httpx.AsyncClient(timeout=None, limits=limits) as client:
        tasks = [asyncio.ensure_future(one(i, client)) for i in range(n)]
        await asyncio.wait_for(opened.wait(), 60)
        await asyncio.sleep(1.0)  # every stream has had its first (catch-up) event
        first = sum(updates)
        cpu0, rss = _proc_cpu_rss(pid)
        await asyncio.sleep(seconds)
        cpu1, _ = _proc_cpu_rss(pid)
        sent = sum(updates) - first
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"cpu_s": cpu1 - cpu0, "rss": rss, "events": sent, "updates": sent / n}


def measure_live(path: Path, seconds: float, log) -> dict:
    """The cost of SPECTATORS event streams on one live match (see the module's docstring)."""
    import asyncio

    from arena.store import Store
    from arena.web.sample import play_ladder

    with Store(path) as store:
        store.create_ladder(
            "live", "balloon", 3, [f"bot{i:03d}" for i in range(3)], seed=5, rounds=2
        )
        pending = store.matches("live", ("pending",))
        play_ladder(store, "live", pending[:-1], seed=6)  # a finished set or so before it
        store.start_match("live", pending[-1].index)
        index = pending[-1].index
    proc, url, sock = serve(path, "live")
    try:
        import httpx

        with httpx.Client(timeout=30) as client:
            wait_ready(client, url, proc)
            assert client.get(f"{url}/ladders/live/matches/{index}").status_code == 200
        window = max(seconds, 10.0)  # CPU time is counted in 10 ms ticks
        idle_cpu0, rss_idle = _proc_cpu_rss(proc.pid)
        time.sleep(window)
        idle_cpu = _proc_cpu_rss(proc.pid)[0] - idle_cpu0
        watched = asyncio.run(
            _spectate(
                f"{url}/api/ladders/live/matches/{index}/events", SPECTATORS, window, proc.pid
            )
        )
    finally:
        from benchsuites.common import stop_process

        stop_process(proc)
        sock.close()
    updates = watched["updates"]
    out = {
        "spectators": SPECTATORS,
        "seconds": window,
        "updates": round(updates, 1),
        "rss_idle_mb": round(rss_idle / 2**20, 1),
        "rss_delta_mb": round((watched["rss"] - rss_idle) / 2**20, 1),
        "rss_per_spectator_kb": round((watched["rss"] - rss_idle) / 1024 / SPECTATORS, 1),
        "cpu_idle_s": round(idle_cpu, 3),
        "cpu_s": round(watched["cpu_s"], 3),
        "cpu_ms_per_update": round((watched["cpu_s"] - idle_cpu) / updates * 1000, 2)
        if updates
        else None,
        "cpu_ms_per_update_per_spectator": round(
            (watched["cpu_s"] - idle_cpu) / updates / SPECTATORS * 1000, 3
        )
        if updates
        else None,
    }
    log(
        f"live: {SPECTATORS} streams on one match for {window:.0f} s: {updates:.1f} updates "
        f"each; server RSS {out['rss_idle_mb']} MB idle, +{out['rss_delta_mb']} MB with the "
        f"streams ({out['rss_per_spectator_kb']} KB each); CPU {out['cpu_s']} s "
        f"(idle {out['cpu_idle_s']} s): {out['cpu_ms_per_update']} ms per update to all, "
        f"{out['cpu_ms_per_update_per_spectator']} ms per spectator"
    )
    return out


def run(seconds: float, log) -> dict:
    import httpx

    from arena.store import Store

    with tempfile.TemporaryDirectory(prefix="arena-bench-web-") as tmp:
        path = Path(tmp) / "web.db"
        stored = build(path, log)
        boom, boom_index, owner_key = add_logged_boom(path)
        with Store(path, readonly=True) as store:
            done = [m.index for m in store.matches("big", ("completed",))]
        rng = random.Random(3)
        picks = rng.sample(done, 400)
        proc, url, sock = serve(path)
        try:
            owner = httpx.Client(timeout=30, headers={"X-Owner-Key": owner_key})
            with httpx.Client(timeout=30) as client, owner:
                wait_ready(client, url, proc)
                cases = {
                    "leaderboard_page": [f"{url}/ladders/big"],
                    "leaderboard_api": [f"{url}/api/ladders/big"],
                    "match_page": [f"{url}/ladders/big/matches/{i}" for i in picks],
                    "match_api_with_frames": [
                        f"{url}/api/ladders/big/matches/{i}?frames=true" for i in reversed(picks)
                    ],
                    "match_list_page": [f"{url}/matches?ladder=big"],
                    "match_list_api_by_bot": [
                        f"{url}/api/matches?bot=bot{i:03d}" for i in range(0, BOTS, 7)
                    ],
                    "bot_page": [f"{url}/bots/bot{i:03d}" for i in range(0, BOTS, 3)],
                    "boom_replay_page": [f"{url}/ladders/{boom}/matches/{boom_index}"],
                }
                results: dict = {"stored_matches": stored, "bots": BOTS}
                log(f"{'case':<26} {'median ms':>10} {'p95 ms':>9} {'requests':>9} {'bytes':>9}")
                for name, urls in cases.items():
                    r = measure(client, urls, seconds)
                    results[name] = r
                    log(
                        f"{name:<26} {r['median_ms']:>10.2f} {r['p95_ms']:>9.2f} "
                        f"{r['requests']:>9} {r['mean_bytes']:>9}"
                    )
                logs_url = f"{url}/api/ladders/{boom}/matches/{boom_index}/logs"
                results["owner_logs_api"] = r = measure(owner, [logs_url], seconds)
                log(
                    f"{'owner_logs_api':<26} {r['median_ms']:>10.2f} {r['p95_ms']:>9.2f} "
                    f"{r['requests']:>9} {r['mean_bytes']:>9}"
                )
        finally:
            from benchsuites.common import stop_process

            stop_process(proc)
            sock.close()
        results["live_streams"] = measure_live(path, seconds, log)
    goals = {
        name: {
            "value": results[name]["median_ms"],
            "goal": f"<= {goal:g} ms median",
            "met": results[name]["median_ms"] <= goal,
        }
        for name, goal in GOALS_MS.items()
    }
    return {"results": results, "goals": goals}
