"""Which build of a rules engine runs: its native core (a C extension type beside the engine,
`_native.c`, used through the package's `native.py`: scripts/build_engines.py builds it), the
compiled one (the engine's own source, compiled by mypyc: scripts/build_engines.py, run by
scripts/setup) or the plain Python one.

A native core carries the digest of the C source it was built from; a compiled engine sits
beside its source as `_NAME_mypyc` (for `engine.py`: `_engine_mypyc.cpython-*.so`) and carries
the digest of the source it was compiled from. Each is used when it is there, loads, and was
built from the source as it is now, the native core first; otherwise the plain module runs, so
a platform without a compiler, or a checkout whose rules changed since the last build, plays the
same rules, only slower. One log line per engine says which one runs and why.

ENGINE_VARIABLE (ARENA_ENGINE) decides instead: "plain" always runs the plain modules (CI runs
tests/games both ways), "compiled" the mypyc builds and "native" the native cores, refusing to
run without them (ConfigError); unset or "auto", as above. Imports nothing outside the standard
library, as arena.games promises.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from pathlib import Path
from types import ModuleType

from .base import ConfigError

try:  # hashlib.blake2b is this; importing it from here skips loading OpenSSL (~15 ms)
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - Pythons without the builtin module
    from hashlib import blake2b as _blake2b

ENGINE_VARIABLE = "ARENA_ENGINE"
CHOICES = ("auto", "plain", "compiled", "native")
NATIVE_MODULE = "native"  # a package's engine with a native core: its native.py
NATIVE_SOURCE = "_native.c"
NATIVE_HEADER = "native_core.h"  # beside the game packages: what their native cores share
COMPILED_SUFFIX = "_mypyc"  # engine.py compiles to _engine_mypyc

log = logging.getLogger(__name__)


def compiled_name(module: str) -> str:
    """The name of the compiled build of `module` ("arena.games.balloon.engine" ->
    "arena.games.balloon._engine_mypyc")."""
    package, _, name = module.rpartition(".")
    return f"{package}._{name}{COMPILED_SUFFIX}"


def source_digest(source: bytes) -> str:
    """The digest a compiled engine carries (SOURCE_DIGEST) of the source it was built from."""
    return _blake2b(source, digest_size=16).hexdigest()


def native_source_digest(source: Path) -> str:
    """The digest a native core carries (SOURCE_DIGEST) of its source: its _native.c and the
    header the cores share (NATIVE_HEADER, in the folder above), which it includes."""
    header = source.parent.parent / NATIVE_HEADER
    return source_digest(source.read_bytes() + b"\0" + header.read_bytes())


def requested() -> str:
    """The engine build asked for by ENGINE_VARIABLE ("auto" when unset)."""
    choice = os.environ.get(ENGINE_VARIABLE, "").strip().lower() or "auto"
    if choice not in CHOICES:
        raise ConfigError(
            f"{ENGINE_VARIABLE}={os.environ[ENGINE_VARIABLE]!r} is not one of "
            f"{', '.join(CHOICES)}: unset it, or set plain (the pure-Python engines), "
            f"compiled (the mypyc builds) or native (the native cores; scripts/setup makes both)"
        )
    return choice


def load_engine(module: str, builds: tuple[str, ...] = ("native", "compiled")) -> ModuleType:
    """The module that runs the rules of `module` (a plain engine module such as
    "arena.games.balloon.engine"): its native core, else its compiled build, when
    ENGINE_VARIABLE allows and the build is usable, else the module itself. Logs which, once
    per call (a game package calls it once, when imported). `module` may be a game package
    itself (Boom's fast engine is its package's own module); `builds` are the builds it has:
    asked for one it has not (Boom has no mypyc build), the module itself runs."""
    choice = requested()
    if choice not in ("auto", "plain") and choice not in builds:
        log.info("%s: the Python engine (it has no %s build)", module, choice)
        return importlib.import_module(module)
    if choice == "plain":
        log.info("%s: the plain Python engine (%s=plain)", module, ENGINE_VARIABLE)
        return importlib.import_module(module)
    why_not = ""
    # the builds, fastest first: (choice that asks for it, what it is, finder)
    for kind, what, find in (
        ("native", "native core", _native),
        ("compiled", "compiled engine", _compiled),
    ):
        if choice not in ("auto", kind) or kind not in builds:
            continue
        built, why_not = find(module)
        if built is not None:
            log.info("%s: the %s (%s)", module, what, built.__file__)
            return built
        if choice == kind:
            raise ConfigError(
                f"{ENGINE_VARIABLE}={kind}, but {module} has no usable {what}: {why_not}; "
                f"run scripts/setup (or scripts/build_engines.py) to build it"
            )
    log.info("%s: the plain Python engine (%s)", module, why_not)
    return importlib.import_module(module)


def _native(module: str) -> tuple[ModuleType | None, str]:
    """The engine with a native core of `module`'s package if usable, else None and why not."""
    loaded = sys.modules.get(module)
    package = module if hasattr(loaded, "__path__") else module.rpartition(".")[0]
    name = f"{package}.{NATIVE_MODULE}"
    source = Path(next(iter(importlib.import_module(package).__path__))) / NATIVE_SOURCE
    if not source.exists():
        return None, "no native core for this game"
    try:
        native = importlib.import_module(name)
    except ImportError as err:
        return None, f"no usable native core ({err}); scripts/setup builds it where gcc is"
    if getattr(native, "SOURCE_DIGEST", None) != native_source_digest(source):
        return None, "its native core was built from another version of its source"
    return native, ""


def _compiled(module: str) -> tuple[ModuleType | None, str]:
    """The compiled build of `module` if usable, else None and why not."""
    name = compiled_name(module)
    try:
        compiled = importlib.import_module(name)
    except ImportError as err:
        if isinstance(err, ModuleNotFoundError) and err.name == name:
            return None, "no compiled build; scripts/setup builds it where a C compiler is"
        return None, f"its compiled build does not load ({err}); rebuild it: scripts/setup"
    package = importlib.import_module(module.rpartition(".")[0])
    source = Path(next(iter(package.__path__))) / f"{module.rpartition('.')[2]}.py"
    try:
        digest = source_digest(source.read_bytes())
    except OSError as err:
        return None, f"cannot read its source to check the compiled build ({err})"
    if getattr(compiled, "SOURCE_DIGEST", None) != digest:
        log.warning(
            "%s's compiled build is older than its source: running the plain engine; "
            "rebuild it with scripts/setup",
            module,
        )
        return None, "its compiled build was made from another version of the source"
    return compiled, ""
