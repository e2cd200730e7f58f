"""The runtimes a submitted bot names in its arena-bot.toml (`runtime = "..."`), what each needs
on the server, and what a version's preparation (its install or build) left for its launches.

Built in: `python` (the interpreter that runs Arena, with arena_sdk, plus the author's own wheels
when the bot ships a requirements file), `node` (Node.js from PATH; the bot ships its
node_modules) and `cpp` (a `build = [...]` step with g++, make or cmake, and Debian's gRPC and
protobuf for C++). An organiser adds Python runtimes with packages of their own from a
wheelhouse (a folder of wheels) in a TOML file (`arena serve --runtimes FILE`, listed by
`arena runtime list`), each named python-NAME:

    [python-ml]
    base = "python"
    description = "Python with numpy"
    packages = ["numpy"]
    wheelhouse = "wheels"     # relative to this file

A runtime the server lacks (a program not on PATH, a wheelhouse that is not there) is refused
when a bot naming it is uploaded, with what is missing (`Runtime.missing`).

A version's preparation (arena.referee.build) records what it made beside the version's folder
(`N/` -> `N.runtime.json`, `Preparation`): each step's output, and, when it succeeded, the
folder the bot runs from (a build's output) and the folders it imports from (an installed
environment). The launcher reads it (`find_preparation`) when it launches that folder.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

KINDS = ("python", "node", "cpp")
# What a C++ build needs, each program with the Debian package that has it.
CPP_TOOLS = {
    "g++": "g++",
    "make": "make",
    "pkg-config": "pkg-config",
    "protoc": "protobuf-compiler",
    "grpc_cpp_plugin": "protobuf-compiler-grpc",
}
RECORD_SUFFIX = ".runtime.json"
ORGANISER_PREFIX = "python-"  # an organiser's runtimes extend python and are named python-NAME


class RuntimesFileError(ValueError):
    """A runtimes file that cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class Runtime:
    """One runtime: its kind (python, node or cpp) says how a bot of it is installed and run."""

    name: str
    kind: str
    description: str
    packages: tuple[str, ...] = ()  # python: requirements installed from `wheelhouse`
    wheelhouse: Path | None = None

    def missing(self) -> list[str]:
        """What this server lacks to run bots of this runtime (empty: nothing)."""
        return _missing(self)

    def needs_install(self, requirements: str | None) -> bool:
        """Whether a bot of this runtime with this requirements file is installed before it
        runs (a Python bot with requirements, or any bot of a runtime with packages)."""
        return self.kind == "python" and bool(self.packages or requirements)

    def listing(self) -> dict[str, Any]:
        """What `arena runtime list`, the owners' API (GET /api/runtimes) and the bot page's
        upload form say of it: name, kind, what it has, what this server lacks of it."""
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "packages": list(self.packages),
            "missing": self.missing(),
        }

    def identity(self) -> str:
        """What a prepared environment of this runtime depends on (part of its cache key):
        its packages and its wheelhouse's files (names and sizes)."""
        h = hashlib.sha256(json.dumps([self.name, self.kind, self.packages]).encode())
        if self.wheelhouse is not None and self.wheelhouse.is_dir():
            for wheel in sorted(self.wheelhouse.iterdir()):
                h.update(f"{wheel.name}\0{wheel.stat().st_size}\0".encode())
        return h.hexdigest()


BUILTIN = (
    Runtime(
        "python",
        "python",
        "the server's Python with arena_sdk and Arena's engines; a requirements file and a "
        "wheels/ folder in the upload are installed offline (pip --no-index) before it runs",
    ),
    Runtime("node", "node", "Node.js from the server's PATH; ship node_modules in the upload"),
    Runtime(
        "cpp",
        "cpp",
        "g++, make, cmake and Debian's gRPC and protobuf for C++ (libgrpc++-dev, "
        "protobuf-compiler-grpc); build = [...] runs in the sandbox before the bot",
    ),
)


def _has_program(name: str) -> bool:
    return shutil.which(name) is not None


# How long `pkg-config --exists` may take: milliseconds on a quiet machine, but 10 s ran out on
# a Ray node starting beside two CPU spinners and a full test suite (the node's start failed).
PKG_CONFIG_TIMEOUT_S = 60.0


@functools.cache
def _has_pkg(name: str) -> bool:
    if not _has_program("pkg-config"):
        return False
    try:
        done = subprocess.run(
            ["pkg-config", "--exists", name], capture_output=True, timeout=PKG_CONFIG_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        # A probe this slow says the machine is loaded, not that the package is missing: the
        # runtime is offered, and a build that needs what is missing fails with its own words.
        log.warning(
            "`pkg-config --exists %s` did not answer in %.0f s; taking %s as installed",
            name,
            PKG_CONFIG_TIMEOUT_S,
            name,
        )
        return True
    return done.returncode == 0


def _missing(runtime: Runtime) -> list[str]:
    if runtime.kind == "node":
        return [] if _has_program("node") else ["node (Debian package nodejs)"]
    if runtime.kind == "cpp":
        lacks = [
            f"{p} (Debian package {pkg})" for p, pkg in CPP_TOOLS.items() if not _has_program(p)
        ]
        if not _has_pkg("grpc++"):
            lacks.append("gRPC for C++ (Debian package libgrpc++-dev)")
        return lacks
    if runtime.packages and (runtime.wheelhouse is None or not runtime.wheelhouse.is_dir()):
        return [
            f"the wheelhouse {runtime.wheelhouse} (a folder of wheels) of runtime {runtime.name}"
        ]
    return []


@dataclass(frozen=True)
class Runtimes:
    """The runtimes of a server: the built-in ones and the organiser's."""

    by_name: dict[str, Runtime] = field(default_factory=lambda: {r.name: r for r in BUILTIN})

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None) -> Runtimes:
        """The built-in runtimes and those of the organiser's file `path` (None: none)."""
        runtimes = {r.name: r for r in BUILTIN}
        if path is None:
            return cls(runtimes)
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as err:
            raise RuntimesFileError(f"cannot read the runtimes file {path}: {err}") from None
        except tomllib.TOMLDecodeError as err:
            raise RuntimesFileError(f"{path} is not valid TOML: {err}; fix it") from None
        for name, table in data.items():
            runtimes[name] = _organiser_runtime(path, name, table, runtimes)
        return cls(runtimes)

    def names(self) -> list[str]:
        return list(self.by_name)

    def get(self, name: str) -> Runtime | None:
        return self.by_name.get(name)


def _organiser_runtime(path: Path, name: str, table: Any, known: dict[str, Runtime]) -> Runtime:
    where = f"{path}: [{name}]"
    if not isinstance(table, dict):
        raise RuntimesFileError(f"{path}: {name} is a table ([{name}] with base, packages, ...)")
    if not name.startswith(ORGANISER_PREFIX) or name == ORGANISER_PREFIX:
        raise RuntimesFileError(
            f"{where}: an organiser's runtime is a Python one named {ORGANISER_PREFIX}NAME, "
            "such as [python-ml]"
        )
    unknown = sorted(set(table) - {"base", "description", "packages", "wheelhouse"})
    if unknown:
        raise RuntimesFileError(
            f"{where} has unknown keys {', '.join(unknown)}; the keys are base, description, "
            "packages, wheelhouse"
        )
    if table.get("base", "python") != "python":
        raise RuntimesFileError(f'{where}: base = "python" is the only base an organiser extends')
    packages = table.get("packages", [])
    if not isinstance(packages, list) or not all(isinstance(p, str) and p for p in packages):
        raise RuntimesFileError(f'{where}: packages is a list of requirements, such as ["numpy"]')
    wheelhouse = table.get("wheelhouse")
    if packages and not isinstance(wheelhouse, str):
        raise RuntimesFileError(f'{where}: packages come from a wheelhouse = "FOLDER" of wheels')
    description = table.get("description") or f"Python with {', '.join(packages) or 'nothing more'}"
    return Runtime(
        name,
        "python",
        str(description),
        tuple(packages),
        (path.parent / wheelhouse).resolve() if isinstance(wheelhouse, str) else None,
    )


@dataclass(frozen=True)
class Step:
    """One step of a version's preparation, as its owner reads it."""

    name: str  # "install", "build 1", ...
    command: str  # as a command line
    ok: bool
    seconds: float
    output: str  # its last lines (stdout and stderr together)
    detail: str = ""  # why it failed, in a sentence ("exited with code 2", "ran out of time")
    cached: bool = False  # its result was reused (the same requirements or sources before)


@dataclass(frozen=True)
class Preparation:
    """What a version's preparation did and left: its steps and, when they all succeeded, the
    folder the bot runs from (None: its own folder) and the folders it imports from."""

    ok: bool
    steps: tuple[Step, ...] = ()
    run_dir: Path | None = None
    pythonpath: tuple[Path, ...] = ()
    uses: tuple[str, ...] = ()  # the cache entries it uses ("envs/KEY", "builds/KEY")

    def failed_step(self) -> Step | None:
        return next((s for s in self.steps if not s.ok), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "steps": [s.__dict__ for s in self.steps],
            "run_dir": str(self.run_dir) if self.run_dir else None,
            "pythonpath": [str(p) for p in self.pythonpath],
            "uses": list(self.uses),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Preparation:
        return cls(
            bool(data["ok"]),
            tuple(Step(**s) for s in data.get("steps", [])),
            Path(data["run_dir"]) if data.get("run_dir") else None,
            tuple(Path(p) for p in data.get("pythonpath", [])),
            tuple(data.get("uses", [])),
        )


def record_path(bot_dir: str | os.PathLike[str]) -> Path:
    """Where a version's preparation is recorded: beside its folder (`N/` -> `N.runtime.json`)."""
    bot_dir = Path(os.path.abspath(bot_dir))
    return bot_dir.with_name(bot_dir.name + RECORD_SUFFIX)


def write_preparation(bot_dir: str | os.PathLike[str], preparation: Preparation) -> None:
    path = record_path(bot_dir)
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(preparation.to_json(), indent=1))
    os.replace(part, path)


def find_preparation(bot_dir: str | os.PathLike[str]) -> Preparation | None:
    """The recorded preparation of the bot in `bot_dir`, or None (never prepared, or unreadable)."""
    try:
        return Preparation.from_json(json.loads(record_path(bot_dir).read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None
