"""Where and how a run's matches are played: RunSettings, the record of a run's settings that a
ladder's, a comparison's and the service's settings hold, and the one place that builds a match
executor from them (on this machine, LocalExecutor, or on a Ray cluster, RayExecutor)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arena.referee.lanes import IDLE_STOP_S
from arena.referee.launcher import ResourceLimits
from arena.referee.match import Limits

if TYPE_CHECKING:
    from arena.store import AsyncStore

    from .runner import MatchExecutor

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class RunSettings:
    """How a run plays its matches: how many at once, their limits, the launched bots'
    resource limits, where they run (the executor, a Ray cluster's address), where the bots'
    logs and work directories go, and how long a launched bot's lane may play nothing before
    its process ends (idle_stop_s; 0: never; docs/bots.md#lanes)."""

    concurrency: int = 4  # matches in flight (the service: per ladder)
    limits: Limits = Limits()
    resource_limits: ResourceLimits = ResourceLimits()
    executor: str = "local"  # or "ray": matches run on a Ray cluster (launched bots only)
    ray_address: str | None = None
    run_dir: Path = Path("runs")
    idle_stop_s: float = IDLE_STOP_S
    # Every rotation in one process per bot, as before lanes: for the benchmark's comparison
    # only (it lets a bot see every hand of a set), never set by the CLI.
    one_process: bool = False

    def make_executor(
        self,
        store: "AsyncStore",
        name: str = "",
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        refuse_remote: str | None = None,
    ) -> "MatchExecutor":
        """This run's executor, with bot logs and work directories under run_dir/name (run_dir
        itself without a name); a local referee listens on host:port (port 0: any free one).
        `refuse_remote`: why a bot's registered token is refused (remote bots are not seated:
        arena/ladder/remote.py), None to accept it."""
        return make_executor(
            self.executor,
            store,
            self.run_dir / name,
            resource_limits=self.resource_limits,
            ray_address=self.ray_address,
            host=host,
            port=port,
            refuse_remote=refuse_remote,
            idle_stop_s=self.idle_stop_s,
            one_process=self.one_process,
        )


def make_executor(
    kind: str,
    store: "AsyncStore",
    run_dir: Path,
    *,
    resource_limits: ResourceLimits,
    ray_address: str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    refuse_remote: str | None = None,
    idle_stop_s: float = IDLE_STOP_S,
    one_process: bool = False,
) -> "MatchExecutor":
    """The executor `kind` names ("local" or "ray"), with bot logs and work directories under
    `run_dir`. The local one's referee listens on host:port (port 0: any free one); the Ray one
    connects to the cluster at `ray_address`, its referees on the nodes (where remote bots never
    connect: no `refuse_remote` is needed there)."""
    if kind == "ray":
        from .ray_executor import RayExecutor  # Ray's import is heavy: only when asked for

        return RayExecutor(
            ray_address,
            run_dir,
            resource_limits=resource_limits,
            idle_stop_s=idle_stop_s,
            one_process=one_process,
        )
    if kind != "local":
        raise ValueError(f"unknown executor {kind!r}; choose one of {', '.join(EXECUTORS)}")
    from .local import LocalExecutor

    return LocalExecutor(
        store,
        run_dir,
        host=host,
        port=port,
        resource_limits=resource_limits,
        refuse_remote=refuse_remote,
        idle_stop_s=idle_stop_s,
        one_process=one_process,
    )
