"""The one place that builds a match executor: where a ladder's matches run, on this machine
(LocalExecutor) or on a Ray cluster (RayExecutor). `arena ladder run` and `arena serve` both
build theirs here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line reads EXECUTORS without paying for these
    from arena.referee.launcher import ResourceLimits
    from arena.store import AsyncStore

    from .runner import MatchExecutor

EXECUTORS = ("local", "ray")


def make_executor(
    kind: str,
    store: "AsyncStore",
    run_dir: Path,
    *,
    resource_limits: "ResourceLimits",
    ray_address: str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
) -> "MatchExecutor":
    """The executor `kind` names ("local" or "ray"), with bot logs and work directories under
    `run_dir`. The local one's referee listens on host:port (port 0: any free one); the Ray one
    connects to the cluster at `ray_address`, its referees on the nodes."""
    if kind == "ray":
        from .ray_executor import RayExecutor  # Ray's import is heavy: only when asked for

        return RayExecutor(ray_address, run_dir, resource_limits=resource_limits)
    if kind != "local":
        raise ValueError(f"unknown executor {kind!r}; choose one of {', '.join(EXECUTORS)}")
    from .local import LocalExecutor

    return LocalExecutor(store, run_dir, host=host, port=port, resource_limits=resource_limits)
