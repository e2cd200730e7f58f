"""A real Ray cluster on this machine for the Ray executor's tests: a head and one more node,
started once per module (Ray start-up is slow), small (one CPU and a small object store per
node, no dashboard) and in a temp dir of its own, removed with every process at the end."""

from __future__ import annotations

import pytest

from arena.ladder.ray_loopback import NODE_ARGS, loopback_cluster
from tests.timing import scaled

ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[ray]')")

# Notice a dead node within about a second instead of the default ~30 s; a live node's answer
# to a health check needs the CPU, so on a loaded machine the period and the timeout scale with
# its load (tests/timing.py): a slow node must not be taken for a dead one.
FAST_FAILURE_DETECTION = {
    "health_check_period_ms": round(scaled(300)),
    "health_check_failure_threshold": 3,
    "health_check_initial_delay_ms": 0,
    "health_check_timeout_ms": round(scaled(1000)),
}


@pytest.fixture(scope="module")
def ray_cluster():
    with loopback_cluster(nodes=2, system_config=FAST_FAILURE_DETECTION) as cluster:
        yield cluster


@pytest.fixture
def add_ray_node(ray_cluster):
    """Add a node like the others to the shared cluster (a test may then kill it)."""

    def add():
        node = ray_cluster.add_node(**NODE_ARGS)
        ray_cluster.wait_for_nodes()
        return node

    return add
