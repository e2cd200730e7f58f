"""The Ray executor on a real Ray cluster (a head and one more node on loopback, see conftest):
a ladder played on the cluster equals the same ladder played locally, and a node killed in the
middle of a ladder leaves it complete and equal to the local run, with the failed attempts
recorded against the dead node."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[ray]')")

from arena.ladder.local import LocalExecutor  # noqa: E402
from arena.ladder.ray_executor import RayExecutor  # noqa: E402
from arena.ladder.runner import LadderRunner  # noqa: E402
from arena.referee import sandbox, workdir  # noqa: E402
from arena.referee.build import Preparer  # noqa: E402
from arena.referee.lanes import bot_of, lane_key  # noqa: E402
from arena.referee.launcher import group_members  # noqa: E402
from arena.referee.match import Limits  # noqa: E402
from arena.runtimes import Runtimes  # noqa: E402
from arena.store import AsyncStore, Store  # noqa: E402
from arena.store.browse import BrowseQueries  # noqa: E402
from tests.procs import descendants, mounted_under  # noqa: E402
from tests.store.helpers import use_seed_key  # noqa: E402
from tests.support.crashing_bot import LAST_WORDS, crashing_bot  # noqa: E402
from tests.support.kits import build_cache_folder, cpp_kit, wheel_kit  # noqa: E402
from tests.timing import scaled  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RANDOM = "python example_bots/random_bot.py"
BOTS = ["a", "b", "c", "d"]
SEED = 2024
LIMITS = Limits(move_ms=5000)
LADDER = "ray1"
# How long a dead node's processes may take to exit once the node is removed.
NODE_EXIT_S = 30.0


def make_db(path: Path) -> Path:
    with Store(path) as store:
        for name in BOTS:
            store.add_bot(name, RANDOM, cwd=ROOT)
    use_seed_key(path)  # the same in every database: the runs on each can be compared
    return path


async def run_ladder(db: Path, executor, concurrency: int, during=None):
    """Run the ladder with `executor`; `during(runner_task)` runs alongside it."""
    store = await AsyncStore.open(db)
    try:
        ladder = await store.run(
            Store.ensure_ladder,
            LADDER,
            "balloon",
            3,
            BOTS,
            rounds=1,
            seed=SEED,
            settings={"limits": LIMITS.to_dict()},
        )
        bots = [await store.run(Store.get_bot, name) for name in ladder.bots]
        runner = LadderRunner(store, executor, LIMITS, concurrency)
        task = asyncio.ensure_future(runner.run(LADDER, bots))
        try:
            if during is not None:
                await during(task)
            summary = await task
        finally:
            await executor.close()
        return summary, await store.run(Store.rankings, LADDER)
    finally:
        await store.close()


def results(db: Path) -> list[tuple]:
    """Per match: its seats, scores, ranks, faults and every action played (not timings)."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT m.idx, m.status, m.seats, m.replay, group_concat(r.score), "
            "group_concat(r.rank), group_concat(r.fault_kinds, '|') FROM matches m "
            "JOIN results r ON r.match_id = m.id GROUP BY m.id ORDER BY m.idx"
        ).fetchall()
    finally:
        con.close()
    return [
        (
            idx,
            status,
            seats,
            [(m[0], m[1]) for m in json.loads(replay)["moves"]],
            scores,
            ranks,
            faults,
        )
        for idx, status, seats, replay, scores, ranks, faults in rows
    ]


def query(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def standings(rankings) -> list[tuple]:
    return [(s.bot, s.mu, s.sigma, s.matches, s.wins, s.faults) for s in rankings.standings]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The reference: the same ladder played by the local executor."""
    tmp = tmp_path_factory.mktemp("local")
    db = make_db(tmp / "local.db")
    summary, rankings = asyncio.run(_run_locally(db, tmp / "runs"))
    return {"summary": summary, "rankings": rankings, "results": results(db)}


async def _run_locally(db: Path, run_dir: Path):
    store = await AsyncStore.open(db)  # the executor needs the store; run_ladder opens its own
    try:
        return await run_ladder(db, LocalExecutor(store, run_dir), concurrency=3)
    finally:
        await store.close()


def test_ladder_on_the_cluster_equals_the_local_run(ray_cluster, local_run, tmp_path):
    db = make_db(tmp_path / "ray.db")
    executor = RayExecutor(ray_cluster.address, tmp_path / "runs")
    seen: dict = {}

    async def during(task):
        # Wait on the condition (both nodes' referees up), not on time.
        while len(executor.workers) < 2 and not task.done():
            await asyncio.sleep(0.01)
        # The bots run from the shipped copy of the project, not from this checkout.
        for worker in executor.workers:
            pgids = await worker.actor.bot_pids.remote()
            commands = await worker.actor.bot_commands.remote()
            seen[worker.node_id] = {name: (pgid, commands[name]) for name, pgid in pgids.items()}

    summary, rankings = asyncio.run(run_ladder(db, executor, concurrency=4, during=during))

    assert summary.played == local_run["summary"].played == 12
    assert summary.infra_failures == 0 and summary.remaining == 0
    assert results(db) == local_run["results"]
    assert len(results(db)) == 12
    assert standings(rankings) == standings(local_run["rankings"])
    # Both nodes ran matches, and the store says which.
    assert len(seen) == 2
    nodes = {n for (n,) in query(db, "SELECT node FROM matches")}
    assert {n.split("/")[-1] for n in nodes} == set(seen)
    for bots in seen.values():
        # Every bot's lane 0 runs from the start; other lanes as their rotations are seated.
        assert sorted(k for k in bots if bot_of(k) == k) == BOTS
        assert {bot_of(k) for k in bots} == set(BOTS)
        for _, argv in bots.values():
            script = next(a for a in argv if a.endswith("random_bot.py"))
            assert "_ray_pkg_" in script and not script.startswith(str(ROOT)), argv
    # Lanes: on each node a bot played rotation r only in its lane r (tables of 3: lanes 0-2),
    # one log each; over both nodes every lane of every bot played.
    logs = {p.stem for p in (tmp_path / "runs").glob("node-*/logs/*.log")}
    assert logs == {lane_key(b, r) for b in BOTS for r in range(3)}, logs
    # close() ended every bot process, group and all, and disconnected from the cluster.
    assert all(group_members(pgid) == [] for bots in seen.values() for pgid, _ in bots.values())
    assert not ray.is_initialized()


def test_a_crashed_bots_log_excerpt_comes_back_and_prepared_versions_play(ray_cluster, tmp_path):
    """A launched bot's log stays on its node: the excerpt its owner may read comes back to the
    driver inside the match's result and is stored as a local run's.

    Its opponents are submitted versions prepared on the server (arena.referee.build): the wheel
    starter kit installed into its environment, the C++ starter kit built (a random bot in its
    place without a C++ toolchain). Each plays on the nodes from what its preparation made,
    shipped with the job under its cache key: the node installs and builds nothing and fetches
    nothing (its bots' sandboxes have no network). Without those folders neither could start
    there (no `lowcard` to import, no built `bot`). Three versions all named 1 in the bots'
    store (NAME/1) are shipped side by side."""
    cpp_missing = Runtimes().by_name["cpp"].missing()
    prepared = ["lowcard"] if cpp_missing else ["lowcard", "cpp-random"]
    seats = ["crasher", *prepared, *["r2"][: 2 - len(prepared)]]
    db = tmp_path / "arena.db"
    with Store(db) as store:
        store.add_bot("crasher", directory=str(crashing_bot(tmp_path / "crasher")))
        store.add_bot("lowcard", directory=str(wheel_kit(tmp_path / "lowcard")))
        if not cpp_missing:
            store.add_bot("cpp-random", directory=str(cpp_kit(tmp_path / "cpp")))
        else:
            store.add_bot("r2", RANDOM, cwd=ROOT)
        versions = [Path(store.get_bot(name).directory or "") for name in prepared]
    # As the server's verification prepares them (the C++ build cached across test runs).
    preparer = Preparer(build_cache_folder())
    for version in versions:
        made = asyncio.run(preparer.prepare(version))
        assert made.ok, made.steps
    seen: dict[str, list[str]] = {}

    async def run() -> None:
        store = await AsyncStore.open(db)
        executor = RayExecutor(ray_cluster.address, tmp_path / "runs")
        try:
            ladder = await store.run(Store.ensure_ladder, "logs", "balloon", 3, seats, seed=3)
            bots = [await store.run(Store.get_bot, name) for name in ladder.bots]
            task = asyncio.ensure_future(LadderRunner(store, executor, LIMITS, 3).run("logs", bots))
            while not executor.workers and not task.done():
                await asyncio.sleep(0.01)
            for worker in list(executor.workers):
                seen.update(await worker.actor.bot_commands.remote())
            summary = await task
            assert summary.played == 3 and summary.infra_failures == 0
        finally:
            await executor.close()
            await store.close()

    asyncio.run(run())
    with Store(db, readonly=True) as reader:
        excerpts = BrowseQueries(reader).bot_fault_logs("crasher")
        assert len(excerpts) == 3  # it crashed in each match of the set
        assert all(text.endswith(LAST_WORDS) for text in excerpts.values()), excerpts
        for name in seats[1:]:
            assert BrowseQueries(reader).bot_fault_logs(name) == {}, name
    seated = query(db, "SELECT b.name, r.faults FROM results r JOIN bots b ON b.id = r.bot_id")
    assert len(seated) == 9, seated
    assert all(faults == 0 for name, faults in seated if name != "crasher"), seated
    assert not (tmp_path / "runs" / ".shipped").exists()  # the staged copies, removed
    if not cpp_missing:  # the built program, from its shipped copy on the node
        program = next(argv[0] for key, argv in seen.items() if bot_of(key) == "cpp-random")
        assert "_ray_pkg_" in program and program.endswith("/bot"), seen
    if cpp_missing:
        pytest.skip(f"the C++ half needs a C++ toolchain (scripts/setup): {cpp_missing}")


def late_versions(db: Path, tmp: Path) -> list[str]:
    """Two bots' second versions, submitted after the job started (kept in the bots' store as
    NAME/2, folders the job's runtime_env never held): a Python bot, and a C++ bot whose build
    (no compiler: a script made executable, in the sandbox) the server made, cached under its
    key in `tmp`. Their names (NAME@2)."""
    py = tmp / "late-py"
    py.mkdir()
    (py / "arena-bot.toml").write_text('runtime = "python"\ncommand = ["bot.py"]\n')
    shutil.copy(ROOT / "example_bots" / "random_bot.py", py / "bot.py")
    cpp = tmp / "late-cpp"
    cpp.mkdir()
    script = f"{{ echo '#!{sys.executable}'; cat main.py; }} > bot && chmod +x bot"
    (cpp / "arena-bot.toml").write_text(
        f'runtime = "cpp"\nbuild = {json.dumps(["sh", "-c", script])}\ncommand = ["bot"]\n'
    )
    shutil.copy(ROOT / "example_bots" / "random_bot.py", cpp / "main.py")
    with Store(db) as store:
        versions = [store.update_bot(d.name, directory=str(d))[0] for d in (py, cpp)]
    preparer = Preparer(tmp / "cache", confined=sandbox.unavailable_reason() is None)
    made = asyncio.run(preparer.prepare(Path(versions[1].directory or "")))
    assert made.ok and made.run_dir is not None, made.steps
    return [v.name for v in versions]


def test_a_version_added_while_the_job_runs_joins_it_through_the_object_store(
    ray_cluster, tmp_path
):
    """The job's runtime_env is fixed when the driver connects: a version uploaded to a serving
    Arena afterwards (its folder, and its build's folder under its cache key) reaches the nodes
    through Ray's object store, is unpacked there and plays from there; close() removes it."""
    db = tmp_path / "arena.db"
    with Store(db) as store:
        for name in ("r1", "late-py", "late-cpp"):  # the two late ones' first versions
            store.add_bot(name, RANDOM, cwd=ROOT)
    seen: dict[str, list[str]] = {}
    received: dict[Path, list[str]] = {}  # each folder received on a node: its files
    late: list[str] = []

    async def run() -> None:
        store = await AsyncStore.open(db)
        executor = RayExecutor(ray_cluster.address, tmp_path / "runs")
        try:
            await executor.start([await store.run(Store.get_bot, "r1")])  # connected: env fixed
            late.extend(await asyncio.to_thread(late_versions, db, tmp_path))
            ladder = await store.run(Store.ensure_ladder, "late", "balloon", 3, ["r1", *late])
            bots = [await store.run(Store.get_bot, name) for name in ladder.bots]
            summary = await LadderRunner(store, executor, LIMITS, 3).run("late", bots)
            assert summary.played == 3 and summary.infra_failures == 0
            for worker in list(executor.workers):
                seen.update(await worker.actor.bot_commands.remote())
            for folder in (tmp_path / "runs").glob("node-*/.received/*"):
                received[folder] = sorted(p.name for p in folder.iterdir())
        finally:
            await executor.close()
            await store.close()

    asyncio.run(run())
    seated = query(db, "SELECT b.name, r.faults FROM results r JOIN bots b ON b.id = r.bot_id")
    assert late == ["late-py@2", "late-cpp@2"]
    assert sorted(seated) == sorted([(n, 0) for n in ("r1", *late)] * 3), seated
    # Each late folder was received on the nodes that launched it, and its bot ran from there.
    names = {p.name for p in received}
    assert {"late-py-v2", "late-cpp-v2"} <= names, names
    builds = [p for p in received if p.name not in ("late-py-v2", "late-cpp-v2")]
    assert len({p.name for p in builds}) == 1  # the build's, by its cache key, on each node
    assert all("bot" in received[p] and len(p.name) == 32 for p in builds), received
    assert [files for p, files in received.items() if p.name == "late-py-v2"][0] == [
        "arena-bot.toml",
        "bot.py",
    ]
    program = next(argv for key, argv in seen.items() if bot_of(key) == "late-cpp@2")
    # Launched on one of the nodes that received it (either node may have seated it).
    assert program[0] in {str(p / "bot") for p in builds}, seen
    script = next(argv for key, argv in seen.items() if bot_of(key) == "late-py@2")
    assert any("/.received/late-py-v2/bot.py" in arg for arg in script), seen
    assert list((tmp_path / "runs").glob("node-*/.received")) == []  # removed by close()


def test_a_node_killed_mid_ladder_leaves_a_complete_correct_ladder(
    ray_cluster, add_ray_node, local_run, tmp_path
):
    victim = add_ray_node()
    db = make_db(tmp_path / "ray.db")
    executor = RayExecutor(ray_cluster.address, tmp_path / "runs")
    killed: dict = {}

    async def during(task):
        def on_victim():
            return next((w for w in executor.workers if w.node_id == victim.node_id), None)

        while on_victim() is None and not task.done():
            await asyncio.sleep(0.001)
        worker = on_victim()
        assert worker is not None, "no referee started on the added node"
        killed["bots"] = list((await worker.actor.bot_pids.remote()).values())
        # Freeze the node's bots so that a match sent there stays in flight until the node dies
        # (a random bot's match can otherwise end between seeing it busy and killing the node).
        # The move deadline (5 s) is far longer than this wait; SIGKILL still ends stopped bots.
        # Each pgid is a bot's guard, which must stay awake: it ends the sandbox when the node's
        # referee dies. What it started (bubblewrap, the sandbox's init, the bot) is frozen.
        for guard in killed["bots"]:
            for pid in descendants(guard):
                os.kill(pid, signal.SIGSTOP)
        # Kill the node while it has a match in flight (polling the condition, not the clock).
        while worker.busy == 0 and not task.done():
            await asyncio.sleep(0.001)
        assert not task.done(), "the ladder ended before the node could be killed"
        killed["busy"] = worker.busy
        killed["node"] = worker.node
        await asyncio.to_thread(ray_cluster.remove_node, victim, False)

    summary, rankings = asyncio.run(run_ladder(db, executor, concurrency=4, during=during))

    assert killed["busy"] >= 1
    assert summary.remaining == 0 and summary.abandoned == 0
    assert summary.infra_failures >= 1
    assert results(db) == local_run["results"]
    assert standings(rankings) == standings(local_run["rankings"])
    # Every failed attempt is recorded against the dead node, and its matches were completed
    # elsewhere; the store rated each match once.
    failures = query(db, "SELECT node FROM infra_failures")
    assert failures and {n for (n,) in failures} == {killed["node"]}
    assert query(db, "SELECT count(*) FROM matches WHERE status = 'completed'") == [(12,)]
    retried = query(db, "SELECT node, attempts FROM matches WHERE attempts > 1")
    assert retried and all(node != killed["node"] for node, _ in retried)
    # The bots on the dead node died with it: its referee's process learns of the node's death
    # (its raylet's socket closing) and exits at some point after it, and the bots' guards are
    # told by the kernel when it does. Wait for that, bounded.
    deadline = time.monotonic() + scaled(NODE_EXIT_S)
    while (left := [g for g in killed["bots"] if group_members(g) + descendants(g)]) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)  # polling /proc under a deadline: no event tells of a stranger's exit
    assert killed["bots"] and left == [], (
        f"{len(left)} of the dead node's bots still alive {scaled(NODE_EXIT_S):.0f} s after "
        f"the node was removed: {left}"
    )
    # Nor is anything of them left on the host: their work directories (each a tmpfs of its own)
    # are unmounted by their guards' keepers (arena/referee/rlimits.py), for the worker that
    # launched them kills the guards (its direct children) as it exits; and a bot being launched
    # as the node died was not mounted yet: its referee mounts a work directory only once the
    # guard's keeper runs. Every other node ended its bots as the executor closed (or, if one
    # did not answer in time, its keepers do once its worker is killed). Bounded, as above.
    while (mounts := mounted_under(tmp_path / "runs")) and time.monotonic() < deadline:
        time.sleep(0.05)  # polling /proc under a deadline: no event tells of an unmount
    for path in mounts:  # nothing left on the host, whatever the outcome
        workdir.unmount(Path(path))
    assert mounts == [], f"the dead node's work directories stayed mounted: {mounts}"


def test_arena_serve_runs_its_matches_on_the_cluster(ray_cluster, tmp_path):
    """The executor choice for the server: `arena serve --executor ray`."""
    from tests.cli import free_ports, run_arena, serve_args

    db = tmp_path / "serve.db"
    for name in ("r1", "r2", "r3"):
        added = run_arena(
            "bot", "add", name, "--command", "python example_bots/random_bot.py", "--db", str(db)
        )
        assert added.returncode == 0, added.stderr
    (web_port,) = free_ports(1)  # below the ephemeral range (tests/cli.py)
    proc = run_arena(
        *serve_args(
            "bal=balloon:3",
            "--executor",
            "ray",
            "--ray-address",
            ray_cluster.address,
            "--max-matches",
            "3",
            "--run-dir",
            str(tmp_path / "runs"),
            "--move-ms",
            "5000",
            "--seed",
            "2",
            db=db,
            web_port=web_port,
        ),
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    con = sqlite3.connect(db)
    rows = con.execute("SELECT status, node FROM matches").fetchall()
    faults = con.execute("SELECT count(*) FROM faults").fetchone()[0]
    con.close()
    assert [r[0] for r in rows] == ["completed"] * 3
    assert all(r[1] and "/" in r[1] for r in rows)  # ADDRESS/NODE_ID of a Ray node
    assert faults == 0


def test_a_version_submitted_to_a_serving_arena_on_the_cluster_is_verified_and_plays(
    ray_cluster, tmp_path
):
    """`arena serve --executor ray` running, an owner submits a bot (a folder the job never
    held): it is verified on a node and plays its ladder there, without a restart."""
    from tests.service.serving import Server, arena, played, wait_until
    from tests.support.uploads import owner_key

    db = tmp_path / "serve.db"
    for name in ("r1", "r2", "r3"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    key = owner_key(db, "late", tmp_path)
    bot = tmp_path / "late"
    bot.mkdir()
    (bot / "arena-bot.toml").write_text('name = "late"\nruntime = "python"\ncommand = ["bot.py"]\n')
    shutil.copy(ROOT / "example_bots" / "random_bot.py", bot / "bot.py")
    server = Server(tmp_path, db, extra=["--executor", "ray", "--ray-address", ray_cluster.address])
    try:
        wait_until(server.up, "the web server", server=server)
        wait_until(lambda: played(db, "r1") >= 1, "a first match on the cluster", server=server)
        submitted = arena(
            "submit", "--server", server.web, "--key-file", str(key),
            "--timeout", str(int(scaled(120))), str(bot), check=False,
        )  # fmt: skip
        said = submitted.stdout + submitted.stderr
        assert submitted.returncode == 0, said + server.log_tail()
        assert "verdict: passed  (status: active)" in said, said
        wait_until(lambda: played(db, "late") >= 1, "a ladder match of late", server=server)
    finally:
        assert server.stop() == 0, server.log_tail()
    con = sqlite3.connect(db)
    nodes = con.execute("SELECT node FROM matches WHERE status = 'completed'").fetchall()
    con.close()
    assert nodes and all(n and "/" in n for (n,) in nodes)  # ADDRESS/NODE_ID: on the cluster
    assert list((tmp_path / "runs").rglob(".received")) == []  # the nodes' copies, removed


STOP_AFTER_CONNECT = """
import asyncio, os, signal, sys
from pathlib import Path
from arena.ladder.ray_executor import RayExecutor
from arena.stopsignals import on_stop_signals

async def main():
    stopped = asyncio.Event()
    with on_stop_signals(stopped.set):
        executor = RayExecutor(sys.argv[1], Path(sys.argv[2]))
        await executor.start([])
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.wait_for(stopped.wait(), 60)
            print("alarm", signal.alarm(0), flush=True)
        finally:
            await executor.close()

asyncio.run(main())
"""


def test_a_stop_signal_after_connecting_to_ray_is_the_platform_s_alone(ray_cluster, tmp_path):
    """Connecting installs Ray core's failure handler (Abseil's) for SIGTERM: it printed a stack
    dump at every stop and armed a 3 s alarm that aborted `arena serve --executor ray` (exit
    -6) when its graceful stop waited longer for a match in flight (seen under load). After
    the executor connects, SIGTERM reaches the platform's own handler, and no alarm is set."""
    out = subprocess.run(
        [sys.executable, "-c", STOP_AFTER_CONNECT, ray_cluster.address, str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["alarm", "0"], out.stdout + out.stderr[-3000:]
    assert "SIGTERM received" not in out.stderr, out.stderr[-3000:]
