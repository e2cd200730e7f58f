"""A real Ray cluster on this machine for the Ray executor's tests: a head and one more node,
started once per module (Ray start-up is slow), small (one CPU and a small object store per
node, no dashboard) and in a temp dir of its own, removed with every process at the end."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[ray]')")
cluster_utils = pytest.importorskip("ray.cluster_utils")

OBJECT_STORE = 80 * 1024 * 1024  # near Ray's minimum; results are small
# Notice a dead node within about a second instead of the default ~30 s.
FAST_FAILURE_DETECTION = {"health_check_period_ms": 300, "health_check_failure_threshold": 3,
                          "health_check_initial_delay_ms": 0, "health_check_timeout_ms": 1000}


def node_args() -> dict:
    return {"num_cpus": 1, "object_store_memory": OBJECT_STORE}


@pytest.fixture(scope="module")
def ray_cluster():
    # A private temp dir (short: Ray's unix socket paths must fit in 107 bytes), also used for
    # the address file Ray writes, so nothing is left in /tmp/ray and no other cluster is seen.
    tmp = tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp")
    saved = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = tmp
    os.makedirs(os.path.join(tmp, "ray"))
    cluster = None
    try:
        cluster = cluster_utils.Cluster(
            initialize_head=True, shutdown_at_exit=True,
            head_node_args={**node_args(), "include_dashboard": False,
                            "_system_config": FAST_FAILURE_DETECTION})
        cluster.add_node(**node_args())
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


@pytest.fixture
def add_ray_node(ray_cluster):
    """Add a node like the others to the shared cluster (a test may then kill it)."""
    def add():
        node = ray_cluster.add_node(**node_args())
        ray_cluster.wait_for_nodes()
        return node
    return add
