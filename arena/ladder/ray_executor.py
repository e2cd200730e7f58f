"""The Ray executor: a ladder's matches run on the nodes of a Ray cluster.

What runs where:
- The driver (the process running `arena ladder run --executor ray`) keeps the store, the
  schedule and the ratings: it dispatches each match to a node and records what comes back, so
  there is still one writer and ratings are applied in schedule order, as with LocalExecutor.
- On every node with CPUs, one `NodeReferee` actor, pinned to that node (node affinity,
  soft=False), owns a node-local RefereeHost (gRPC on the node's loopback) and the ladder's
  command bots, launched on that node in lanes (arena.referee.lanes: rotation r of a set plays
  in the bot's lane r, a process of its own with its own token from the host's TokenBook; lane
  0 at the actor's start, the others when first seated, idle ones ended). A match goes to the
  least busy actor; its MatchResult (a plain dataclass) returns to the driver.

Shipping: the job's runtime_env carries the project (`working_dir`: the arena package and
example_bots/), the SDK (`py_modules`), and every bot directory outside the project
(`py_modules`), so a node that does not share the driver's file system runs the same code and
bots. A bot's directory is sent as a path relative to what was shipped and resolved on the node.
A submitted version that was installed or built (arena.runtimes.Preparation: an environment
with its wheels, a C++ bot's build) has what its preparation made shipped too, each folder under
its cache key, and runs from those on the node: the node builds nothing and fetches nothing.
Nodes need the same Python environment (Ray's own requirement: same Python, same Ray).

The job's runtime_env is fixed when the driver connects. A bot from a folder it does not hold
(a version uploaded to `arena serve` while it runs, and what its preparation made) is shipped
through Ray's object store instead: each new folder packed as a tar archive (ray.put), which
every actor unpacks on its node, under the folder's name (NAME-vN, a cache key), before it
launches the bot; an actor created later (a replacement) receives them as it starts.

Failures: a node or actor that dies mid-match (RayActorError, ActorDiedError, WorkerCrashedError,
node loss) is an InfrastructureError carrying `.node`; the runner records the attempt and
retries the match, which goes to another actor. The dead actor is dropped at once; a new one is
created in the background if its node is still alive. Ray's own max_restarts is 0 on purpose: a
restarted actor would need its bots launched again before it could take a match, so the
executor does the restart itself and only dispatches to actors that are ready.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import shutil
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Sequence

import ray
from ray.exceptions import RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from arena.deadlines import within
from arena.referee.lanes import IDLE_STOP_S
from arena.referee.launcher import ResourceLimits
from arena.referee.match import Limits
from arena.results import MatchResult
from arena.runtimes import Preparation, find_preparation
from arena.stopsignals import reclaim_stop_signals
from arena.store import Bot, Ladder, StoredMatch
from arena.store.snapshots import is_snapshot_version

from .runner import ExecutorSetupError, InfrastructureError

log = logging.getLogger(__name__)

# How many actors may be created for one node in one run (the first and its replacements): a
# node whose actors keep dying is left out rather than retried forever.
MAX_ACTORS_PER_NODE = 4
# How long a new actor may take to start its referee and launch its bots.
START_TIMEOUT_S = 120.0
# How long close() waits for an actor to stop its bots before killing it.
CLOSE_TIMEOUT_S = 15.0

PROJECT = ""  # BotSpec.root for a bot directory inside the shipped project (the working_dir)


class RayExecutorError(ExecutorSetupError):
    """The Ray executor cannot run this ladder (no cluster, a bot it cannot ship, ...)."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A command bot as a node needs it: its directory relative to a shipped root."""

    name: str
    command: str
    root: str  # PROJECT, or the name of a shipped py_modules directory
    directory: str  # relative to the root ("." for the root itself)
    manifest: bool  # run the directory's arena-bot.toml command inside the directory
    # What its preparation made (arena.runtimes: a build's folder, an installed environment),
    # each shipped as a py_modules directory under its cache key.
    run_root: str | None = None
    path_roots: tuple[str, ...] = ()


class NodeFailure(InfrastructureError):
    """A match attempt that failed on a node (`node` None: before any node took it); the
    runner records the node with the failed attempt."""

    def __init__(self, message: str, node: str | None):
        super().__init__(message)
        self.node = node


# ------------------------------------------------------------------------ on the node


# How often a node's referee checks that its raylet is still there.
RAYLET_CHECK_S = 0.2


def _end_with_the_node() -> None:
    """End this worker process as soon as its parent, the node's raylet, is gone (the node
    died or was removed). Ray's worker notices a dead raylet only when it next talks to it,
    which can take long; meanwhile the bots it launched would play on. Once this process
    ends, each bot's guard is told by the kernel (PDEATHSIG) and ends its sandbox."""
    import threading
    import time

    raylet = os.getppid()

    def watch() -> None:
        while os.getppid() == raylet:
            time.sleep(RAYLET_CHECK_S)  # a period: no event tells a process of its parent's end
        log.warning("the node's raylet (pid %d) is gone: this node's referee ends", raylet)
        os._exit(1)

    threading.Thread(target=watch, name="arena-raylet-watch", daemon=True).start()


class NodeReferee:
    """One node's referee and bots. Created through `ray.remote` by RayExecutor, pinned to a
    node; methods are coroutines, so one actor plays many matches at once."""

    def __init__(
        self,
        run_dir: str,
        resource_limits: ResourceLimits,
        idle_stop_s: float = IDLE_STOP_S,
        one_process: bool = False,
    ):
        from arena.referee.host import RefereeHost
        from arena.referee.lanes import LanePool

        self.node_id = ray.get_runtime_context().get_node_id()
        # Nodes on one machine share the file system: keep their logs and work dirs apart.
        self.run_dir = Path(run_dir) / f"node-{self.node_id[:12]}"
        self.host = RefereeHost(self.run_dir, resource_limits=resource_limits)
        self.specs: dict[str, BotSpec] = {}
        self.lanes = LanePool(
            self.host,
            self._launch,
            lambda name: name in self.specs,
            idle_stop_s,
            one_process,
        )
        self.started = False
        self.bot_pythonpath = _shipped_pythonpath()
        # Folders shipped after the job started (through the object store), by root name.
        self.received: dict[str, Path] = {}
        self._receiving = asyncio.Lock()
        _end_with_the_node()

    async def start(self, specs: Sequence[BotSpec], packages: dict[str, Any] | None = None) -> str:
        """Start the referee, unpack the folders shipped since the job started (`packages`:
        root name -> the ObjectRef of its tar archive) that are not here yet, and launch every
        bot not yet running here. Returns the node id."""
        async with self._receiving:
            for name, ref in (packages or {}).items():
                if name not in self.received:
                    data = await ref
                    self.received[name] = await asyncio.to_thread(
                        _unpack, data, self.run_dir / RECEIVED / name
                    )
        if not self.started:
            await self.host.server.start()
            self.started = True
            self.lanes.start()
        async with self.lanes.lock:
            for spec in specs:
                if spec.name not in self.specs:  # lane 0 once; the others when seated
                    self.specs[spec.name] = spec
                    await self._launch(spec.name, 0)
        return self.node_id

    async def _launch(self, name: str, lane: int) -> None:
        from arena.botcommand import resolve

        spec = self.specs[name]
        directory = self._root(spec.root) / spec.directory
        command = resolve(
            str(directory) if spec.manifest else spec.command,
            directory,
            _shipped_preparation(spec, self._root),
        )
        # PYTHONPATH: the bot (and the sandbox wrapper) must import the shipped arena and
        # arena_sdk, not whatever the node has installed.
        await self.host.launch(
            name, command, extra_env={"PYTHONPATH": self.bot_pythonpath}, lane=lane
        )

    async def play(
        self,
        config: dict[str, Any],
        seed: int,
        seats: Sequence[str],
        limits: Limits,
        match_id: str | None,
        bot_seeds: Sequence[int] | None = None,
        rotation: int = 0,
    ) -> MatchResult:
        from arena.games import game_from_config

        from .local import with_log_excerpts

        lane = self.lanes.lane(rotation)
        await self.lanes.acquire(seats, lane)
        try:
            result = await self.host.run_match(
                game_from_config(config),
                seed,
                seats,
                limits,
                match_id=match_id,
                bot_seeds=bot_seeds,
                lane=lane,
            )
        finally:
            self.lanes.release(seats, lane)
        # The excerpts travel to the driver inside the result: the logs stay on this node.
        return with_log_excerpts(result, self.host.bots, lane)

    async def retire(self, names: Sequence[str]) -> None:
        """These bots may no longer be seated (LanePool.retire)."""
        self.lanes.retire(names)
        await self.lanes.stop_idle()

    async def bot_pids(self) -> dict[str, int]:
        """The process group of each bot lane launched here, by lane key (for tests and
        diagnosis)."""
        return {key: proc.pgid for key, proc in self.host.bots.items() if proc.pgid is not None}

    async def bot_commands(self) -> dict[str, list[str]]:
        """The command each bot lane here was launched with (for tests and diagnosis)."""
        return {key: list(proc.command.argv) for key, proc in self.host.bots.items()}

    async def close(self) -> None:
        """End every bot process (group and all), stop the referee and remove the folders
        received through the object store."""
        if self.started:
            await self.lanes.close()
            await self.host.close()
            self.started = False
        self.received.clear()
        await asyncio.to_thread(shutil.rmtree, self.run_dir / RECEIVED, True)

    def _root(self, name: str) -> Path:
        """Where the shipped root `name` is on this node: received, or in the job's env."""
        return self.received.get(name) or _shipped_root(name)


RECEIVED = ".received"  # under an actor's run dir: the folders shipped through the object store


def _pack(folder: Path) -> bytes:
    """`folder`'s files as a tar archive (links kept as links), to ship through the object
    store. Blocking."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for child in sorted(folder.iterdir()):
            tar.add(child, arcname=child.name)
    return buffer.getvalue()


def _unpack(data: bytes, dest: Path) -> Path:
    """Unpack a shipped folder's archive (_pack) as `dest` (replacing one left there by an
    actor before this one); nothing lands outside it (tarfile's "tar" filter). Blocking."""
    part = dest.with_name(f".{dest.name}.part-{os.getpid()}")
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(part, filter="tar")
    os.chmod(part, 0o755)
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(part, dest)
    return dest


def _shipped_root(root: str) -> Path:
    """Where a shipped root is on this node: the working_dir is the actor's working directory;
    a py_modules directory is a child of an entry Ray put on sys.path."""
    if root == PROJECT:
        return Path.cwd()
    for entry in sys.path:
        candidate = Path(entry) / root
        if "_ray_pkg_" in entry and candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"the shipped bot directory {root!r} is not on this node; was it "
        "in the job's runtime_env py_modules?"
    )


IGNORE_FILES = (".gitignore", ".rayignore")  # what Ray's packages leave out is named there
_IGNORE_FILES = shutil.ignore_patterns(*IGNORE_FILES)


def _ignores_files(folder: Path) -> bool:
    """Whether Ray would leave some of `folder` out (it has a .gitignore or .rayignore)."""
    return any(set(files) & set(IGNORE_FILES) for _, _, files in os.walk(folder))


def _shipped_preparation(spec: BotSpec, root: Callable[[str], Path]) -> Preparation | None:
    """A prepared version's install or build, as shipped to this node (None: none shipped);
    `root` finds a shipped root on the node."""
    if spec.run_root is None and not spec.path_roots:
        return None
    run_dir = root(spec.run_root) if spec.run_root is not None else None
    return Preparation(True, run_dir=run_dir, pythonpath=tuple(map(root, spec.path_roots)))


def _shipped_pythonpath() -> str:
    import arena
    import arena_sdk

    paths = [str(_package_dir(m).resolve().parent) for m in (arena, arena_sdk)]
    return os.pathsep.join(dict.fromkeys(paths))


def _package_dir(module: ModuleType) -> Path:
    """Where a package (arena, arena_sdk: regular packages, with an __init__.py) is."""
    if module.__file__ is None:
        raise RayExecutorError(f"{module.__name__} is not a regular package; it cannot be shipped")
    return Path(module.__file__).parent


RemoteNodeReferee = ray.remote(NodeReferee)


# ----------------------------------------------------------------------- on the driver


@dataclass(slots=True, eq=False)
class _Worker:
    node_id: str
    node: str  # what the store records: "ADDRESS/NODE_ID"
    actor: Any  # ActorHandle
    busy: int = 0  # matches in flight
    played: int = 0


def project_root() -> Path | None:
    """The source checkout the arena package comes from (None when it is installed)."""
    import arena

    root = Path(arena.__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "sdk").is_dir() else None


class RayExecutor:
    """Runs matches on a Ray cluster; see the module docstring."""

    def __init__(
        self,
        address: str | None,
        run_dir: Path,
        *,
        resource_limits: ResourceLimits = ResourceLimits(),
        idle_stop_s: float = IDLE_STOP_S,
        one_process: bool = False,
        max_workers: int | None = None,
        project: Path | None = None,
        excludes: Sequence[str] = (),
    ):
        if max_workers is not None and max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.address = address
        self.run_dir = Path(run_dir).resolve()
        self.resource_limits = resource_limits
        self.idle_stop_s = idle_stop_s
        self.one_process = one_process
        self.max_workers = max_workers
        self.project = Path(project).resolve() if project else project_root()
        self.excludes = list(excludes)
        self.workers: list[_Worker] = []
        self._specs: list[BotSpec] = []
        self._created: dict[str, int] = {}
        self._turn = 0
        self._refresh_lock = asyncio.Lock()
        self._background: set[asyncio.Task] = set()
        self._connected_here = False
        self._runtime_env: dict[str, Any] | None = None
        self._roots: dict[str, str] = {}  # every shipped root's name -> its folder here
        self._packed: dict[str, Any] = {}  # the roots shipped later: name -> its ObjectRef
        self._start_error = ""  # why the last actor failed to start, for the error message

    # -- start

    async def start(self, bots: Sequence[Bot]) -> None:
        specs, extra_roots = self._bot_specs(bots)
        if self._runtime_env is None:
            self._runtime_env = self._make_runtime_env(extra_roots)
            self._roots = {Path(p).name: p for p in extra_roots}
            await asyncio.to_thread(self._connect)
            reclaim_stop_signals()  # Ray's core took SIGTERM: a stop would abort in 3 s
        else:
            await self._ship_late(extra_roots)
        known = {s.name for s in self._specs}
        self._specs += [s for s in specs if s.name not in known]
        if self.workers:
            workers = list(self.workers)
            outcomes = await asyncio.gather(
                *(self._start_worker(w) for w in workers), return_exceptions=True
            )
            for worker, outcome in zip(workers, outcomes, strict=True):
                if isinstance(outcome, (RayError, TimeoutError)):
                    # Its actor, worker process or node is gone, or it did not answer in
                    # START_TIMEOUT_S: as a loss in a match (replaced if its node lives).
                    self._start_error = _describe(outcome)
                    self._lost(worker)
                elif isinstance(outcome, BaseException):
                    raise outcome
        if not self.workers:
            await self._refresh()
        if not self.workers:
            raise RayExecutorError(
                f"no node of the Ray cluster at {self.address} could start a referee "
                f"({self._start_error or 'no alive node with CPUs'}); check `ray status` and "
                "the actor logs in the nodes' /tmp/ray/session_latest/logs"
            )

    def _bot_specs(self, bots: Sequence[Bot]) -> tuple[list[BotSpec], set[str]]:
        from .local import is_manifest_bot

        specs, extra_roots = [], set()
        basenames: dict[str, Path] = {}
        for bot in bots:
            if not bot.command or not bot.directory:
                raise RayExecutorError(
                    f"bot {bot.name} is a remote bot (it connects by itself); the Ray executor "
                    "launches bots on the cluster's nodes, so it runs only bots registered with "
                    "a command or a directory; use --executor local for this ladder"
                )
            directory = Path(bot.directory).resolve()
            manifest = is_manifest_bot(bot)
            prepared = find_preparation(directory) if manifest else None
            if self.project and directory.is_relative_to(self.project):
                root, rel = PROJECT, directory.relative_to(self.project)
            else:
                if is_snapshot_version(directory):  # NAME/N beside a database: as NAME-vN
                    staged_name = f"{directory.parent.name}-v{directory.name}"
                    directory = self._staged(directory, staged_name)
                root, rel = directory.name, Path(".")
                if basenames.setdefault(root, directory) != directory:
                    raise RayExecutorError(
                        f"bot directories {basenames[root]} and {directory} have the same name "
                        f"{root!r}; the Ray executor ships each bot directory under its name, "
                        "so rename one of them"
                    )
                extra_roots.add(str(directory))
            if prepared is None or not prepared.ok:
                prepared = Preparation(True)  # none, or failed: it does not play
            made = [*([prepared.run_dir] if prepared.run_dir else []), *prepared.pythonpath]
            for i, folder in enumerate(made):  # named by its cache key
                if _ignores_files(folder):
                    made[i] = folder = self._staged(folder, folder.name)
                if basenames.setdefault(folder.name, folder) != folder:
                    raise RayExecutorError(
                        f"bot {bot.name}'s prepared folder {folder} has the name of "
                        f"{basenames[folder.name]}; the Ray executor ships each under its name"
                    )
                extra_roots.add(str(folder))
            run_root = prepared.run_dir.name if prepared.run_dir else None
            path_roots = tuple(p.name for p in prepared.pythonpath)
            specs.append(
                BotSpec(bot.name, bot.command, root, str(rel), manifest, run_root, path_roots)
            )
        return specs, extra_roots

    async def _ship_late(self, roots: set[str]) -> None:
        """Put the folders in `roots` that the running job does not hold into the object store
        (the job's runtime_env is fixed once connected): the actors unpack them as they start
        the bots (NodeReferee.start)."""
        for path in sorted(roots):
            name = Path(path).name
            if self._roots.get(name) == path:
                continue
            if name in self._roots:
                raise RayExecutorError(
                    f"bot directories {self._roots[name]} and {path} have the same name "
                    f"{name!r}; the Ray executor ships each bot directory under its name, so "
                    "rename one of them"
                )
            data = await asyncio.to_thread(_pack, Path(path))
            self._packed[name] = await asyncio.to_thread(ray.put, data)
            self._roots[name] = path
            log.info(
                "shipping %s to the nodes through the object store (%d KB)", name, len(data) >> 10
            )

    def _staged(self, directory: Path, name: str) -> Path:
        """A copy of `directory` named `name`, to be shipped under that name (the versions of
        the bots' store are all named 1, 2, ...), without its .gitignore and .rayignore files
        (Ray leaves out what they name: a build's program, say); removed by close()."""
        staged = self.run_dir / ".shipped" / name
        if not staged.is_dir():
            part = staged.with_name(f".{name}.part")
            shutil.rmtree(part, ignore_errors=True)
            shutil.copytree(directory, part, symlinks=True, ignore=_IGNORE_FILES)
            os.replace(part, staged)
        return staged

    def _make_runtime_env(self, extra_roots: set[str]) -> dict[str, Any]:
        import arena
        import arena_sdk

        excludes = [
            "*.db",
            "*.db-wal",
            "*.db-shm",
            "runs/",
            "logs/",
            ".hypothesis/",
            ".pytest_cache/",
            *self.excludes,
        ]
        if self.project is not None:
            env: dict[str, Any] = {
                "working_dir": str(self.project),
                "py_modules": [str(self.project / "sdk" / "arena_sdk")],
            }
        else:  # an installed arena: ship the two packages themselves
            env = {"py_modules": [str(_package_dir(m)) for m in (arena, arena_sdk)]}
        env["py_modules"] += sorted(extra_roots)
        env["excludes"] = excludes
        return env

    def _connect(self) -> None:
        if ray.is_initialized():
            raise RayExecutorError(
                "Ray is already initialised in this process; the Ray "
                "executor connects by itself (with its runtime_env)"
            )
        _check_reachable(self.address)
        # Called in a thread on purpose: in the main thread ray.init replaces the SIGTERM
        # handler, and the app's handler is what stops a ladder cleanly. Ray warns about that,
        # and about the directories it never ships (.git, .venv): both are expected here.
        quiet = _DropMessages("SIGTERM handler is not set", "is now ignored by default")
        loggers = [
            logging.getLogger(n)
            for n in ("ray._private.worker", "ray._private.runtime_env.working_dir")
        ]
        for logger in loggers:
            logger.addFilter(quiet)
        try:
            ray.init(
                address=self.address,
                runtime_env=self._runtime_env,
                namespace="arena",
                logging_level=logging.WARNING,
                log_to_driver=False,
            )
        except (ConnectionError, ValueError, RuntimeError) as err:
            raise RayExecutorError(
                f"cannot connect to the Ray cluster at {self.address}: {err}; start one with "
                "`ray start --head` and pass the address it prints"
            ) from err
        finally:
            for logger in loggers:
                logger.removeFilter(quiet)
        self._connected_here = True

    async def _refresh(self) -> None:
        """Create actors on alive nodes that have none (new nodes, or nodes whose actor died),
        up to max_workers. Only actors that started are dispatched to."""
        async with self._refresh_lock:
            nodes = await asyncio.to_thread(ray.nodes)
            have = {w.node_id for w in self.workers}
            todo: list[dict[str, Any]] = []
            for node in sorted(nodes, key=lambda n: n["NodeID"]):
                node_id = node["NodeID"]
                if not node.get("Alive") or node.get("Resources", {}).get("CPU", 0) <= 0:
                    continue  # a node started with --num-cpus=0 is kept free of matches
                if node_id in have or self._created.get(node_id, 0) >= MAX_ACTORS_PER_NODE:
                    continue
                if (
                    self.max_workers is not None
                    and len(self.workers) + len(todo) >= self.max_workers
                ):
                    break
                todo.append(node)
            started = await asyncio.gather(*(self._create(n) for n in todo))
            self.workers += [w for w in started if w is not None]

    async def _create(self, node: dict[str, Any]) -> _Worker | None:
        node_id = node["NodeID"]
        self._created[node_id] = self._created.get(node_id, 0) + 1
        label = f"{node.get('NodeManagerAddress', '?')}/{node_id}"
        actor = RemoteNodeReferee.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
            num_cpus=0,  # the bots, not the actor, use the node's CPUs
            max_restarts=0,  # restarted by _refresh, once its bots run (module docstring)
        ).remote(str(self.run_dir), self.resource_limits, self.idle_stop_s, self.one_process)
        worker = _Worker(node_id, label, actor)
        try:
            await self._start_worker(worker)
        except (RayError, TimeoutError) as err:
            self._start_error = _describe(err)
            log.warning("no referee on node %s: %s", label, self._start_error)
            _kill(actor)
            return None
        return worker

    async def _start_worker(self, worker: _Worker) -> None:
        await within(worker.actor.start.remote(self._specs, dict(self._packed)), START_TIMEOUT_S)

    # -- play

    def _pick(self) -> _Worker:
        least = min(w.busy for w in self.workers)
        candidates = [w for w in self.workers if w.busy == least]
        self._turn += 1
        return candidates[self._turn % len(candidates)]

    async def play(
        self, ladder: Ladder, match: StoredMatch, limits: Limits
    ) -> tuple[MatchResult, str]:
        if not self.workers:
            await self._refresh()
        if not self.workers:
            raise NodeFailure(
                "no Ray node can run matches (every node's referee died); add nodes "
                "with `ray start --address ...` and run the ladder again to resume",
                None,
            )
        worker = self._pick()
        worker.busy += 1
        ref = worker.actor.play.remote(
            ladder.config,
            match.seed,
            tuple(match.seats),
            limits,
            match.match_key,
            # The seeds, not the store's key, travel to the node: it never holds the key.
            match.bot_seeds or None,
            match.rotation,
        )
        try:
            result = await ref
        except asyncio.CancelledError:
            try:
                ray.cancel(ref)
            except RayError:
                pass
            raise
        except RayTaskError as err:  # raised by the referee's code; the actor lives on
            raise NodeFailure(
                f"the referee on node {worker.node} failed: {_describe(err)}", worker.node
            ) from None
        except RayError as err:  # the actor, its worker process or its node is gone
            self._lost(worker)
            raise NodeFailure(
                f"node {worker.node} was lost during the match: {_describe(err)}", worker.node
            ) from None
        finally:
            worker.busy -= 1
        worker.played += 1
        return result, worker.node

    async def retire(self, names: Sequence[str]) -> None:
        """These bots may no longer be seated: every node ends their lanes (LanePool.retire);
        a node that does not answer ends them when idle."""
        await asyncio.gather(
            *(
                within(w.actor.retire.remote(list(names)), CLOSE_TIMEOUT_S)
                for w in list(self.workers)
            ),
            return_exceptions=True,
        )

    def _lost(self, worker: _Worker) -> None:
        if worker not in self.workers:
            return  # another match on it already reported the loss
        self.workers.remove(worker)
        _kill(worker.actor)
        log.warning("lost the referee on node %s; replacing it if the node is alive", worker.node)
        task = asyncio.ensure_future(self._refresh())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- close

    async def close(self) -> None:
        try:
            await self._close()
        finally:
            await asyncio.to_thread(shutil.rmtree, self.run_dir / ".shipped", True)

    async def _close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        workers, self.workers = self.workers, []
        if workers:
            closing = [within(w.actor.close.remote(), CLOSE_TIMEOUT_S) for w in workers]
            for worker, outcome in zip(
                workers, await asyncio.gather(*closing, return_exceptions=True)
            ):
                if isinstance(outcome, BaseException):
                    log.warning(
                        "the referee on node %s did not close cleanly: %s",
                        worker.node,
                        _describe(outcome),
                    )
                _kill(worker.actor)
        if self._connected_here:
            await asyncio.to_thread(ray.shutdown)
            self._connected_here = False
        self._runtime_env = None
        self._roots, self._packed = {}, {}


class _DropMessages(logging.Filter):
    def __init__(self, *fragments: str):
        super().__init__()
        self.fragments = fragments

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(f in message for f in self.fragments)


def _kill(actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except (RayError, ValueError):
        pass  # already gone


def _describe(err: BaseException) -> str:
    cause = getattr(err, "cause", None)
    if isinstance(err, RayTaskError) and cause is not None:
        return f"{type(cause).__name__}: {cause}"
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def _check_reachable(address: str | None, timeout_s: float = 5.0) -> None:
    """Fail fast on an address nothing listens on: ray.init itself retries for minutes. None
    (ray.init's own choice), "auto", "local" and Ray Client addresses are left to Ray."""
    import socket

    if address is None or address in ("auto", "local") or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout_s):
            pass
    except (OSError, ValueError) as err:
        raise RayExecutorError(
            f"cannot reach the Ray cluster at {address} ({err}); start one with "
            "`ray start --head` and pass the address it prints (HOST:PORT)"
        ) from None
