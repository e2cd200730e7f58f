"""A private Ray cluster on this machine, for the Ray executor's tests and benchmark: a head and
more nodes, each small (one CPU, an object store near Ray's minimum, no dashboard), in a temp dir
of its own (which also holds the address file Ray writes, so nothing lands in /tmp/ray and no
other cluster is seen), and everything removed at the end.

Needs the `ray` extra (pip install -e ./sdk -e '.[ray]'). A real cluster is started with
`ray start`; this is for trying the executor on one machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Any, Iterator

OBJECT_STORE = 80 * 1024 * 1024  # near Ray's minimum; results are small
NODE_ARGS: dict[str, Any] = {"num_cpus": 1, "object_store_memory": OBJECT_STORE}


@contextlib.contextmanager
def loopback_cluster(
    nodes: int = 2, prefix: str = "arena-ray-", system_config: dict[str, Any] | None = None
) -> Iterator[Any]:
    """A `ray.cluster_utils.Cluster` of `nodes` nodes (the head included), with RAY_TMPDIR set
    to a private temp dir while it runs; `system_config` goes to the head (e.g. faster failure
    detection). Shuts it down, restores RAY_TMPDIR and removes the dir on the way out."""
    import ray
    from ray.cluster_utils import Cluster

    # short: Ray's unix socket paths must fit in 107 bytes
    tmp = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    saved = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = tmp
    os.makedirs(os.path.join(tmp, "ray"))
    cluster = None
    try:
        head = {**NODE_ARGS, "include_dashboard": False}
        if system_config:
            head["_system_config"] = system_config
        cluster = Cluster(initialize_head=True, shutdown_at_exit=True, head_node_args=head)
        for _ in range(nodes - 1):
            cluster.add_node(**NODE_ARGS)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        if saved is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = saved
        shutil.rmtree(tmp, ignore_errors=True)
