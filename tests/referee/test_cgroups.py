"""Control groups of launched bots (arena/referee/cgroups.py): the layout found on a host, the
files a bot's group is given, its memory kills, killing and removing it, and the sweep of a dead
platform's groups. cgroup v2 against a fake tree in tmp_path (plain files stand for the kernel's
interface files: this machine's v2 hierarchy has no controllers); cgroup v1 against the real
hierarchies when this process may write them (root)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena.referee import cgroups
from arena.referee.cgroups import BotGroup, GroupLimits, Layout

LIMITS = GroupLimits(memory_mb=300, processes=20, cpus=0.5)


def fake_v2(root: Path, offered: str = "cpuset cpu io memory pids") -> Path:
    """A v2 root whose platform group (/svc) is offered `offered`."""
    (root / "svc").mkdir(parents=True)
    (root / "cgroup.controllers").write_text(offered + "\n")
    (root / "svc" / "cgroup.controllers").write_text(offered + "\n")
    (root / "svc" / "cgroup.subtree_control").write_text("")
    return root


def test_own_groups_reads_v1_and_v2_lines():
    text = "9:name=systemd:/\n4:memory:/process_api/x\n2:cpu,cpuacct:/\n0::/svc\n"
    assert cgroups.own_groups(text) == {
        "name=systemd": "/",
        "memory": "/process_api/x",
        "cpu": "/",
        "cpuacct": "/",
        "": "/svc",
    }


def test_v2_layout_is_under_the_platforms_group_with_controllers_delegated(tmp_path):
    root = fake_v2(tmp_path)
    found = cgroups.detect(root, "0::/svc\n")
    assert found == Layout(2, (root / "svc" / "arena",))
    assert (root / "svc" / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (root / "svc" / "arena" / "cgroup.subtree_control").read_text() == ("+memory +pids +cpu")


def test_v2_without_the_controllers_says_which_are_missing(tmp_path):
    root = fake_v2(tmp_path, offered="cpuset io")
    found = cgroups.detect(root, "0::/svc\n")
    assert isinstance(found, str)
    assert "memory, pids, cpu" in found and "cgroup.controllers" in found


def test_no_hierarchy_at_all_says_so(tmp_path):
    found = cgroups.detect(tmp_path, "0::/\n")
    assert isinstance(found, str) and "memory, pids, cpu" in found


def test_v2_group_gets_its_limits_and_no_swap(tmp_path):
    root = fake_v2(tmp_path)
    where = cgroups.detect(root, "0::/svc\n")
    assert isinstance(where, Layout)
    (where.bases[0] / "77").mkdir()
    group = BotGroup.create(where, 77, "bot-1", LIMITS)
    d = root / "svc" / "arena" / "77" / "bot-1"
    assert group.dirs == (d,)
    assert (d / "memory.max").read_text() == str(300 * 1024 * 1024)
    assert (d / "memory.swap.max").read_text() == "0"
    assert (d / "pids.max").read_text() == "20"
    # Its start-up: the whole quota, at the weight of a bot nobody waits for.
    assert (d / "cpu.max").read_text() == "5000 10000"
    assert (d / "cpu.weight").read_text() == "6"
    assert group.procs_files == (d / "cgroup.procs",)


def test_v2_memory_kills_are_read_from_memory_events(tmp_path):
    d = tmp_path / "g"
    d.mkdir()
    group = BotGroup(2, (d,))
    assert group.oom_kills() == 0  # no file yet
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\n")
    assert group.oom_kills() == 1


def test_v2_kill_writes_cgroup_kill_then_kills_what_is_listed(tmp_path):
    d = tmp_path / "g"
    d.mkdir()
    (d / "cgroup.kill").write_text("")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stop = threading.Event()

    def kernel():
        # A fake tree has no kernel to drop a dead pid from cgroup.procs: this thread does.
        while not stop.is_set():
            if sleeper.poll() is not None:
                (d / "cgroup.procs").write_text("")
            time.sleep(0.005)

    (d / "cgroup.procs").write_text(f"{sleeper.pid}\n")
    t = threading.Thread(target=kernel)
    t.start()
    try:
        assert BotGroup(2, (d,)).kill(deadline_s=10)
        assert (d / "cgroup.kill").read_text() == "1"
        assert sleeper.wait(timeout=10) == -9
    finally:
        stop.set()
        t.join()
        sleeper.kill()
        sleeper.wait()


def test_keys_are_safe_directory_names_and_unique():
    a, b = cgroups.key_for("bot a/../x@2"), cgroups.key_for("bot a/../x@2")
    assert a != b and "/" not in a and a.startswith("bot_a_.._x@2-")


# -- cgroup v1, the real hierarchies (this project's machines, as root) ------------------------

V1 = cgroups.detect()
needs_v1 = pytest.mark.skipif(
    not (isinstance(V1, Layout) and V1.version == 1), reason=f"no writable cgroup v1: {V1}"
)


@pytest.fixture
def owner():
    """This process as a platform owning bot groups; its directories removed afterwards."""
    assert isinstance(V1, Layout)
    dirs = V1.owner_dirs(os.getpid())
    for d in dirs:
        d.mkdir(exist_ok=True)
    yield os.getpid()
    for d in dirs:
        try:
            d.rmdir()
        except OSError:
            pass  # another test's group still in it: the sweep of a later start removes it


def child_in(group: BotGroup, code: str) -> subprocess.Popen:
    """A Python child that joins the group before it runs `code` (as the guard's child does)."""
    join = "".join(
        f"open({str(p)!r}, 'w').write(str(__import__('os').getpid()));" for p in group.procs_files
    )
    return subprocess.Popen([sys.executable, "-c", join + code])


@needs_v1
def test_v1_group_caps_memory_and_tells_a_memory_kill(owner):
    assert isinstance(V1, Layout)
    group = BotGroup.create(V1, owner, cgroups.key_for("memtest"), GroupLimits(64, 20, 1.0))
    try:
        mem, pids, cpu = group.dirs
        assert (mem / "memory.limit_in_bytes").read_text().strip() == str(64 * 1024 * 1024)
        assert (pids / "pids.max").read_text().strip() == "20"
        assert (cpu / "cpu.cfs_quota_us").read_text().strip() == "10000"
        # 3 x 32 MB in a memfd: shared memory, no address space to speak of.
        hog = child_in(
            group,
            "import os\nfd=os.memfd_create('x')\nfor i in range(3): os.write(fd, b'x'*(32<<20))",
        )
        assert hog.wait(timeout=30) == -9
        assert group.oom_kills() >= 1
    finally:
        assert group.kill()
        group.remove()
    assert not any(d.exists() for d in group.dirs)


@needs_v1
def test_v1_kill_ends_every_process_of_the_group_forks_included(owner):
    assert isinstance(V1, Layout)
    group = BotGroup.create(V1, owner, cgroups.key_for("forker"), GroupLimits(256, 30, 1.0))
    forker = child_in(
        group,
        "import os, time\nfor _ in range(5):\n  if os.fork() == 0: os.setsid(); break\n"
        "time.sleep(600)",
    )
    try:
        deadline = time.monotonic() + 20
        while len(group.pids()) < 6:
            assert time.monotonic() < deadline, f"the group never held 6 processes: {group.pids()}"
            time.sleep(0.01)
        members = group.pids()
        assert group.kill()
        forker.wait(timeout=10)
        assert group.pids() == []
        for pid in members:
            assert (
                not os.path.exists(f"/proc/{pid}")
                or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[-1][:3]
            )
    finally:
        group.kill()
        group.remove()
    assert not any(d.exists() for d in group.dirs)


@needs_v1
def test_the_sweep_ends_and_removes_the_groups_of_a_dead_platform():
    assert isinstance(V1, Layout)
    # A platform process, alive while its group is made and its bot joins it: a platform
    # starting meanwhile in another test worker sweeps only the groups of dead ones (it swept
    # this group away half made when the platform was dead from the start).
    platform = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        for d in V1.owner_dirs(platform.pid):
            d.mkdir(exist_ok=True)
        group = BotGroup.create(V1, platform.pid, "left-behind", GroupLimits(64, 10, 1.0))
        orphan = child_in(group, "import time; time.sleep(600)")
        deadline = time.monotonic() + 20
        while not group.pids():
            if time.monotonic() > deadline:
                orphan.kill()
                orphan.wait()
                raise AssertionError("the orphan never joined its group")
            time.sleep(0.01)
    finally:
        platform.kill()  # then it dies (kill -9), leaving its group behind
        platform.wait()
    try:
        # This sweep or one of another worker's platform starting now ends it: either way the
        # sweep's code, which is what must end the orphan and remove the dead platform's dirs.
        cgroups.sweep(V1, os.getpid())
        assert orphan.wait(timeout=10) == -9
        assert not any(d.exists() for d in V1.owner_dirs(platform.pid))
    finally:
        orphan.kill()
        orphan.wait()
        group.kill()
        group.remove()


@needs_v1
def test_two_platforms_sweeping_the_same_dead_one_at_once_both_go_on(monkeypatch):
    """Two platform processes starting at once (the suite's two workers) sweep the same dead
    platform's groups: the one that comes second finds them gone, and starts all the same
    (it raised FileNotFoundError, which failed a bot's launch)."""
    assert isinstance(V1, Layout)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    dirs = V1.owner_dirs(dead.pid)
    for d in dirs:
        d.mkdir(exist_ok=True)
        (d / "left-behind").mkdir(exist_ok=True)

    alive = cgroups.pid_exists

    def swept_by_the_other(pid: int) -> bool:  # the other platform sweeps it meanwhile
        if pid != dead.pid:
            return alive(pid)
        for d in dirs:
            (d / "left-behind").rmdir()
            d.rmdir()
        return False

    monkeypatch.setattr(cgroups, "pid_exists", swept_by_the_other)
    cgroups.sweep(V1, os.getpid())
    assert not any(d.exists() for d in dirs)


@needs_v1
def test_a_group_made_while_out_of_descriptors_is_an_oserror_that_is_retried(monkeypatch):
    """Out of descriptors (a flood of connections to the server), making a bot's group fails
    as the platform being out of a resource for now: an OSError, which a launch's callers
    retry (InfrastructureError), not a CgroupError, which stopped `arena serve` (seen in a
    full run: the descriptor-flood test's server exited 1). Nothing of the group is left."""
    assert isinstance(V1, Layout)

    def out_of_descriptors(path, value):
        raise OSError(errno.EMFILE, "Too many open files", str(path))

    monkeypatch.setattr(cgroups, "_write", out_of_descriptors)
    with pytest.raises(OSError) as raised:
        BotGroup.create(V1, os.getpid(), "exhausted", GroupLimits(64, 10, 1.0))
    assert not isinstance(raised.value, cgroups.CgroupError)
    assert raised.value.errno == errno.EMFILE
    assert not any((d / "exhausted").exists() for d in V1.owner_dirs(os.getpid()))


def test_without_control_groups_the_launcher_says_so_once(monkeypatch, caplog):
    from arena.referee import launcher

    monkeypatch.setattr(cgroups, "layout", lambda: "no cgroup v2 at /x and no v1 hierarchy")
    launcher.group_layout.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="arena.referee.launcher"):
            assert launcher.group_layout() is None
            assert launcher.group_layout() is None
    finally:
        launcher.group_layout.cache_clear()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert "no control group" in warnings[0] and "no v1 hierarchy" in warnings[0]
    assert "rlimits" in warnings[0]


def test_a_bots_cpu_weight_and_idleness_follow_its_pending_decisions(tmp_path):
    # v2 (fake tree): the files are written when the first decision starts and when the last
    # one ends, not at each of several at once; the quota is never written.
    from arena.referee.launcher import BotProcess, ResourceLimits

    d = tmp_path / "g"
    d.mkdir()
    (d / "cpu.weight").write_text("6")
    (d / "cpu.max").write_text("5000 10000")
    (d / "cpu.idle").write_text("0")
    proc = BotProcess("b", None, tmp_path, tmp_path / "b.log", {}, tmp_path / "s", ResourceLimits())  # type: ignore[arg-type]
    proc.group = BotGroup(2, (d,), cpus=0.5)
    with proc.deciding():
        assert (d / "cpu.weight").read_text() == "100"
        assert (d / "cpu.idle").read_text() == "0"
        with proc.deciding():
            pass
        assert proc.pending_decisions == 1
        assert (d / "cpu.weight").read_text() == "100"
    assert proc.pending_decisions == 0
    # The files are kept open and written in place: what each holds ends with the last write.
    assert (d / "cpu.idle").read_text().endswith("1")
    assert (d / "cpu.weight").read_text() == "100"  # (the kernel refuses a weight while idle)
    assert (d / "cpu.max").read_text() == "5000 10000"
    with proc.deciding():
        assert (d / "cpu.idle").read_text().endswith("0")
    proc.group.close()


def test_without_cpu_idle_a_bot_nobody_waits_for_gets_the_low_weight(tmp_path):
    d = tmp_path / "g"
    d.mkdir()
    (d / "cpu.shares").write_text("64")
    group = BotGroup(1, (d, d, d))
    group.set_deciding(True)
    assert (d / "cpu.shares").read_text() == "1024"
    group.set_deciding(False)
    assert (d / "cpu.shares").read_text().endswith("64")
    assert not (d / "cpu.idle").exists()
    group.close()


def test_the_quota_files_take_cores_time_per_period():
    assert BotGroup(1, (), cpus=0.05)._quota(0.05) == b"500"
    assert BotGroup(1, (), cpus=0)._quota(0) == b"-1"  # no quota
    assert BotGroup(2, (), cpus=0)._quota(0) == b"max 10000"


@needs_v1
def test_v1_weight_and_idleness_are_written_to_cpu_shares_and_cpu_idle(owner):
    assert isinstance(V1, Layout)
    group = BotGroup.create(V1, owner, cgroups.key_for("weights"), GroupLimits())
    try:
        cpu = group.dirs[2]

        def held() -> tuple[str, str, str]:
            return tuple(  # type: ignore[return-value]
                (cpu / f).read_text().strip()
                for f in ("cpu.shares", "cpu.cfs_quota_us", "cpu.idle")
            )

        # Its start-up: the low weight, not idle, its quota (one core per 10 ms) throughout.
        assert held() == ("64", "10000", "0")
        group.set_deciding(True)
        assert held() == ("1024", "10000", "0")
        group.set_deciding(False)
        assert held()[1:] == ("10000", "1")  # SCHED_IDLE (the kernel shows its weight as 3)
        group.set_deciding(True)
        assert held() == ("1024", "10000", "0")
    finally:
        group.kill()
        group.remove()


def test_all_bots_weigh_one_platform_thread_per_core(tmp_path):
    root = fake_v2(tmp_path)
    where = cgroups.detect(root, "0::/svc\n")
    assert isinstance(where, Layout)
    cgroups.set_arena_weight(where, 2)
    assert (root / "svc" / "arena" / "cpu.weight").read_text() == "200"
    cgroups.set_arena_weight(where, 500)
    assert (root / "svc" / "arena" / "cpu.weight").read_text() == "10000"  # v2's maximum
