"""Runtimes (arena.runtimes) and what arena-bot.toml says of them (arena.botcommand): a C++
bot's build, a Python bot's requirements and wheels, each mistake refused with what to do; a
runtime the server lacks refused naming what is missing; the organiser's runtimes file and
`arena runtime list`; a prepared version launched from what its preparation made; the cache of
environments and builds reused by content, swept of what no version uses and held within
its disk limit."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena import botcommand, runtimes
from arena.botcommand import BadManifest, CommandNotFound
from arena.cli.runtimes import runtime_group
from arena.referee import build, sandbox
from arena.referee.build import Preparer
from arena.runtimes import Preparation, Runtimes, RuntimesFileError, Step, write_preparation
from tests.cli import ROOT
from tests.support.wheels import make_wheel

LOWCARD = ROOT / "example_bots" / "python_wheel" / "lib" / "lowcard"


def bot(tmp_path: Path, manifest: str, files=("bot.py",)) -> Path:
    directory = tmp_path / "bot"
    directory.mkdir()
    for name in files:
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text("x\n")
    (directory / "arena-bot.toml").write_text(manifest)
    return directory


@pytest.fixture
def toolchain(monkeypatch):
    """Every program and library a runtime asks for is there (whatever this machine has)."""
    monkeypatch.setattr(runtimes, "_has_program", lambda name: True)
    monkeypatch.setattr(runtimes, "_has_pkg", lambda name: True)


@pytest.mark.usefixtures("toolchain")
def test_a_cpp_bot_names_its_build_one_command_or_several_and_its_program_is_built(tmp_path):
    one = bot(tmp_path, 'runtime = "cpp"\nbuild = ["make"]\ncommand = ["bot", "--fast"]\n', ())
    manifest = botcommand.read_manifest(one, upload=True)
    assert (manifest.kind, manifest.build, manifest.command) == (
        "cpp",
        (("make",),),
        ("bot", "--fast"),
    )
    assert manifest.command_line() == "./bot --fast" and manifest.needs_preparation()
    shutil.rmtree(one)
    several = bot(
        tmp_path,
        'runtime = "cpp"\nbuild = [["cmake", "-B", "out"], ["cmake", "--build", "out"]]\n'
        'command = ["out/bot"]\n',
        (),
    )
    assert botcommand.read_manifest(several, upload=True).build == (
        ("cmake", "-B", "out"),
        ("cmake", "--build", "out"),
    )


@pytest.mark.usefixtures("toolchain")
@pytest.mark.parametrize(
    "text, said",
    [
        (
            'runtime = "cpp"\ncommand = ["bot"]\n',
            'a cpp bot says how it is built, such as build = ["make"]',
        ),
        ('runtime = "cpp"\nbuild = "make"\ncommand = ["bot"]\n', "build is a command, such as"),
        (
            'runtime = "cpp"\nbuild = [["make"], 3]\ncommand = ["bot"]\n',
            "build is a command, such as",
        ),
        ('runtime = "cpp"\nbuild = ["make"]\ncommand = ["../bot"]\n', "leaves the bot's folder"),
        ('runtime = "python"\nbuild = ["make"]\ncommand = ["bot.py"]\n', "build is for a cpp bot"),
        (
            'runtime = "python"\nrequirements = "reqs.txt"\ncommand = ["bot.py"]\n',
            "requirements 'reqs.txt' is not a file in the bot's folder",
        ),
        (
            'runtime = "python"\nrequirements = "/etc/passwd"\ncommand = ["bot.py"]\n',
            "requirements '/etc/passwd' leaves the bot's folder",
        ),
        (
            'runtime = "python"\nwheels = "whl"\ncommand = ["bot.py"]\n',
            "wheels 'whl' is not a folder in the bot's folder",
        ),
        (
            'runtime = "cpp"\nbuild = ["make"]\nrequirements = "bot.py"\ncommand = ["bot"]\n',
            "requirements is for a Python bot",
        ),
    ],
)
def test_each_mistake_in_a_runtime_s_keys_is_refused_saying_what_to_do(tmp_path, text, said):
    directory = bot(tmp_path, text)
    with pytest.raises(BadManifest, match=said.replace("(", r"\(").replace("[", r"\[")):
        botcommand.read_manifest(directory, upload=True)


def test_a_runtime_the_server_lacks_is_refused_naming_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(runtimes, "_has_program", lambda name: name != "grpc_cpp_plugin")
    monkeypatch.setattr(runtimes, "_has_pkg", lambda name: False)
    directory = bot(tmp_path, 'runtime = "cpp"\nbuild = ["make"]\ncommand = ["bot"]\n')
    with pytest.raises(BadManifest) as refused:
        botcommand.read_manifest(directory, upload=True)
    said = str(refused.value)
    assert said.startswith("this server has no C++ runtime: it lacks grpc_cpp_plugin (Debian")
    assert "protobuf-compiler-grpc" in said and "libgrpc++-dev" in said
    assert "submit a bot of another runtime (python, node)" in said


def test_a_pkg_config_probe_that_does_not_answer_offers_the_runtime(monkeypatch, caplog):
    """A probe that runs out of time (a loaded machine, a Ray node starting beside a suite) is
    not a missing package: the runtime is offered, with a warning, not refused nor an error."""

    def slow(args, **kwargs):
        raise subprocess.TimeoutExpired(args, kwargs["timeout"])

    monkeypatch.setattr(runtimes, "_has_program", lambda name: True)
    monkeypatch.setattr(runtimes.subprocess, "run", slow)
    runtimes._has_pkg.cache_clear()
    try:
        assert runtimes._has_pkg("grpc++") is True
        assert Runtimes().get("cpp").missing() == []
    finally:
        runtimes._has_pkg.cache_clear()
    assert "did not answer in 60 s; taking grpc++ as installed" in caplog.text


def test_the_organiser_s_runtimes_file_adds_python_runtimes_listed_by_arena_runtime_list(tmp_path):
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    (wheelhouse / "numpy-2.0-cp311-none-any.whl").write_bytes(b"not a real wheel")
    path = tmp_path / "runtimes.toml"
    path.write_text(
        '[python-ml]\ndescription = "Python with numpy"\npackages = ["numpy"]\n'
        'wheelhouse = "wheelhouse"\n\n[python-lost]\npackages = ["x"]\nwheelhouse = "gone"\n'
    )
    found = Runtimes.load(path)
    assert found.names() == ["python", "node", "cpp", "python-ml", "python-lost"]
    ml = found.by_name["python-ml"]
    assert (ml.kind, ml.packages, ml.wheelhouse) == ("python", ("numpy",), wheelhouse)
    assert ml.missing() == [] and ml.needs_install(None)
    assert "the wheelhouse" in found.by_name["python-lost"].missing()[0]
    # An upload naming it is a Python bot that is installed before it runs.
    directory = bot(tmp_path, 'runtime = "python-ml"\ncommand = ["bot.py"]\n')
    manifest = botcommand.read_manifest(directory, upload=True, runtimes=found)
    assert manifest.kind == "python" and manifest.needs_preparation(found)
    # The registry, which copies the upload, does not know the server's runtimes: it reads
    # the name as an organiser's Python runtime. An upload is checked against the server's.
    assert botcommand.read_manifest(directory).kind == "python"
    with pytest.raises(BadManifest, match="runtime = 'python-ml', which Arena does not know"):
        botcommand.read_manifest(directory, upload=True)
    listed = CliRunner().invoke(runtime_group, ["list", "--runtimes", str(path)])
    assert listed.exit_code == 0, listed.output
    assert "python-ml    python  ready" in listed.output and "[packages: numpy]" in listed.output
    assert "python-lost  python  missing the wheelhouse" in listed.output


@pytest.mark.parametrize(
    "text, said",
    [
        ('[python]\npackages = ["x"]\n', "a Python one named python-NAME, such as"),
        ('[ml]\npackages = ["x"]\n', "a Python one named python-NAME, such as"),
        ('[python-ml]\nbase = "node"\n', 'base = "python" is the only base'),
        ("[python-ml]\npackages = [1]\n", "packages is a list of requirements"),
        ('[python-ml]\npackages = ["numpy"]\n', 'packages come from a wheelhouse = "FOLDER"'),
        ("[python-ml]\nimage = 1\n", "unknown keys image"),
        ("[python-ml\n", "is not valid TOML"),
    ],
)
def test_a_bad_runtimes_file_is_refused_saying_what_to_fix(tmp_path, text, said):
    path = tmp_path / "runtimes.toml"
    path.write_text(text)
    with pytest.raises(RuntimesFileError, match=said.replace("(", r"\(").replace("[", r"\[")):
        Runtimes.load(path)


@pytest.mark.usefixtures("toolchain")
def test_a_prepared_version_runs_from_what_its_preparation_made(tmp_path):
    source = bot(tmp_path, 'runtime = "cpp"\nbuild = ["make"]\ncommand = ["bot", "-v"]\n', ())
    with pytest.raises(
        CommandNotFound, match=r"bot is not built in .*; run the bot's build \(make\)"
    ):
        botcommand.resolve(str(source))
    built = tmp_path / "cache" / "builds" / "k"
    built.mkdir(parents=True)
    (built / "bot").write_text("#!/bin/sh\n")
    env = tmp_path / "cache" / "envs" / "e"
    write_preparation(source, Preparation(True, (), built, (env,), ("builds/k",)))
    command = botcommand.resolve(str(source))
    assert command.argv == (str(built / "bot"), "-v") and command.cwd == built
    assert command.pythonpath == (env,)
    failed = Step("build", "make", False, 1.0, "error: x", "it exited with code 2")
    write_preparation(source, Preparation(False, (failed,)))
    with pytest.raises(CommandNotFound, match="build failed; it cannot run"):
        botcommand.resolve(str(source))


def test_the_cache_makes_an_entry_once_reuses_it_and_sweeps_what_no_version_uses(tmp_path):
    preparer = Preparer(tmp_path / "cache")
    made = []

    async def make(entry: Path) -> Preparation:
        made.append(entry.name)
        await asyncio.to_thread(entry.mkdir)
        return Preparation(
            True, (Step("install", "pip install", True, 2.0, "done"),), None, (entry,)
        )

    async def twice():
        return await asyncio.gather(
            preparer._cached("k1", "envs", make), preparer._cached("k1", "envs", make)
        )

    first, second = asyncio.run(twice())
    assert made == ["k1"]  # two versions of one requirement set at once: installed once
    assert {first.steps[0].cached, second.steps[0].cached} == {False, True}
    assert second.pythonpath == first.pythonpath == (tmp_path / "cache" / "envs" / "k1",)
    assert first.uses == second.uses == ("envs/k1",)
    asyncio.run(preparer._cached("k2", "envs", make))
    store = tmp_path / "bots"
    (store / "mine" / "1").mkdir(parents=True)
    write_preparation(store / "mine" / "1", first)
    (store / "gone").mkdir()
    write_preparation(store / "gone" / "1", Preparation(True, uses=("envs/k2",)))  # no folder
    assert preparer.sweep(store) == 1
    assert sorted(p.name for p in (tmp_path / "cache" / "envs").iterdir()) == ["k1", "k1.json"]


def test_an_entry_made_twice_at_once_by_two_processes_is_kept_once(tmp_path):
    """Two processes sharing a cache (servers, test workers) may make one entry at once: the
    second to finish keeps the first's (the same, by its key) instead of failing."""
    made = tmp_path / "made"
    made.mkdir()
    (made / "bot").write_text("built\n")
    entry = tmp_path / "cache" / "builds" / "k"
    entry.parent.mkdir(parents=True)
    build._keep(made, entry)
    build._keep(made, entry)
    assert sorted(p.name for p in entry.parent.iterdir()) == ["k"]
    assert (entry / "bot").read_text() == "built\n"


def test_the_cache_counts_toward_its_disk_limit_and_makes_room_from_unused_entries(tmp_path):
    """Each entry's size is measured when it is made; past the cache's limit, the entries no
    version uses are removed first, and an entry that still does not fit is removed and its
    version fails, saying what it made, what is used and the limit."""
    store = tmp_path / "bots"
    preparer = Preparer(tmp_path / "cache", cache_mb=3.5, records=store)

    def maker(mb: int):
        async def make(entry: Path) -> Preparation:
            def fill() -> None:
                entry.mkdir()
                (entry / "lib.so").write_bytes(bytes(mb << 20))

            await asyncio.to_thread(fill)
            return Preparation(True, (Step("build", "make", True, 1.0, "ok"),), entry)

        return make

    def version(family: str, prepared: Preparation) -> None:
        (store / family / "1").mkdir(parents=True)
        write_preparation(store / family / "1", prepared)

    one = asyncio.run(preparer._cached("k1", "builds", maker(1)))
    two = asyncio.run(preparer._cached("k2", "builds", maker(1)))
    assert one.ok and two.ok and preparer.usage() >= 2 << 20
    version("one", one)  # k2's version is gone: k2 is used by none
    version("two", Preparation(True, uses=()))
    # 2 MB more: k2 is swept to make room, k1 (used) stays.
    three = asyncio.run(preparer._cached("k3", "builds", maker(2)))
    assert three.ok, three.steps
    builds = tmp_path / "cache" / "builds"
    assert sorted(p.name for p in builds.iterdir() if p.is_dir()) == ["k1", "k3"]
    version("three", three)
    # Nothing unused is left: 2 MB more do not fit, and leave nothing behind.
    four = asyncio.run(preparer._cached("k4", "builds", maker(2)))
    assert not four.ok and four.run_dir is None and four.uses == ()
    step = four.failed_step()
    assert step is not None and step.name == "store"
    assert "(2.0 MB) does not fit" in step.detail and "of its 3.5 MB" in step.detail
    assert "--build-cache-mb" in step.detail
    assert sorted(p.name for p in builds.iterdir()) == ["k1", "k1.json", "k3", "k3.json"]
    # A cache shared with other servers (no records given) is never swept to make room.
    shared = Preparer(tmp_path / "cache", cache_mb=3.5)
    assert not asyncio.run(shared._cached("k5", "builds", maker(1))).ok
    assert (builds / "k1").is_dir() and (builds / "k3").is_dir()


@pytest.mark.skipif(
    sandbox.unavailable_reason() is not None,
    reason=f"no sandbox here: {sandbox.unavailable_reason()}",
)
def test_an_organiser_runtime_installs_its_packages_once_for_every_bot_of_it(tmp_path):
    """python-ml's packages come from its wheelhouse, installed offline in the sandbox into one
    environment that two versions (of two bots) share; each runs with it first on its path."""
    make_wheel(LOWCARD, tmp_path / "wheelhouse", "lowcard", "0.1.0")
    path = tmp_path / "runtimes.toml"
    path.write_text('[python-ml]\npackages = ["lowcard"]\nwheelhouse = "wheelhouse"\n')
    preparer = Preparer(tmp_path / "cache", Runtimes.load(path))
    versions = []
    for family in ("one", "two"):
        version = tmp_path / "bots" / family / "1"
        version.mkdir(parents=True)
        (version / "arena-bot.toml").write_text('runtime = "python-ml"\ncommand = ["bot.py"]\n')
        (version / "bot.py").write_text(f"import lowcard  # {family}\n")
        versions.append(version)
    first, second = (asyncio.run(preparer.prepare(v)) for v in versions)
    assert first.ok and not first.steps[0].cached, first.steps
    assert "Successfully installed lowcard-0.1.0" in first.steps[0].output
    assert second.ok and second.steps[0].cached and second.pythonpath == first.pythonpath
    (env,) = first.pythonpath
    assert (env / "lowcard" / "__init__.py").is_file()
    command = botcommand.resolve(str(versions[1]))  # read without the server's runtimes
    assert command.pythonpath == (env,) and command.cwd == versions[1]
