#!/usr/bin/env python3
"""Compile the rules engines: their native cores with the C compiler, and the engines themselves
with mypyc (scripts/setup runs this; safe to run again).

For each native core in NATIVE (a C source beside its engine), build the extension its
package's native.py loads, carrying the digest of the C source (arena.games.engines runs it only
when that matches). For each engine source in ENGINES (a plain, typed module), compile a copy of
it named `_NAME_mypyc` beside it (arena.games.engines loads it in place of the plain module)
carrying the digest of the source it was compiled from, so that a build older than its source
is never run. Skips what is up to date. Without a C compiler or Python's headers (or, for the
mypyc builds, mypyc) it says so and exits 0: the plain engines (or the native cores) then run,
as arena.games.engines logs.

    scripts/build_engines.py           build what is missing or stale
    scripts/build_engines.py --force   build every engine again
    scripts/build_engines.py --clean   remove the builds (the plain engines run)
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.games.engines import compiled_name, native_source_digest, source_digest  # noqa: E402

# The engines compiled: plain module -> its source.
ENGINES = {"arena.games.balloon.engine": ROOT / "arena/games/balloon/engine.py"}
# The native cores (arena.games.engines, docs/architecture.md "A native core"): C source ->
# the extension module built from it, beside it.
NATIVE = {
    ROOT / "arena/games/balloon/_native.c": "_native_core",
    ROOT / "arena/games/boom/_native.c": "_native_core",
}

# The build, run by a fresh interpreter in a scratch directory: mypycify type-checks the copy
# with the rest of arena.games as it is, and build_ext puts the extension beside the source.
BUILD = """
import sys
from setuptools import setup
from mypyc.build import mypycify
source, scratch = sys.argv[1:3]
setup(
    name="arena-engine", packages=[], py_modules=[],
    ext_modules=mypycify([source], opt_level="3", target_dir=scratch + "/c"),
    script_args=["-q", "build_ext", "--inplace", "--build-temp", scratch + "/temp"],
)
"""


def say(text: str) -> None:
    print(f"build_engines: {text}", flush=True)


def missing_tools() -> str | None:
    """Why nothing can be compiled here (no C compiler or headers: the native cores and the
    mypyc builds both need them), or None."""
    if shutil.which(sysconfig.get_config_var("CC").split()[0] or "cc") is None:
        return "no C compiler (apt-get install gcc)"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h; apt-get install python3-dev)"
    return None


def missing_mypyc() -> str | None:
    """Why the engines cannot be compiled by mypyc here, or None."""
    if importlib.util.find_spec("mypyc") is None:
        return "mypyc is not installed (it comes with mypy: pip install -e '.[dev]')"
    if importlib.util.find_spec("setuptools") is None:
        return "setuptools is not installed"
    return None


def built_digest(module: str) -> str | None:
    """The SOURCE_DIGEST of `module`'s compiled build, asked of a fresh interpreter (the
    extension, once loaded, cannot be unloaded), or None if it has none that loads."""
    name = compiled_name(module)
    probe = f"import {name} as m; print(m.SOURCE_DIGEST)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


def built_files(source: Path) -> list[Path]:
    return sorted(source.parent.glob(f"_{source.stem}_mypyc*.so"))


def build(module: str, source: Path, digest: str) -> None:
    name = compiled_name(module).rpartition(".")[2]
    copy = source.with_name(f"{name}.py")
    with tempfile.TemporaryDirectory(prefix="arena-engine-") as scratch:
        try:
            text = source.read_text()
            copy.write_text(
                f"{text}\n\n# Written by scripts/build_engines.py: the digest of {source.name}.\n"
                f'SOURCE_DIGEST = "{digest}"\n'
            )
            for old in built_files(source):
                old.unlink()
            done = subprocess.run(
                [sys.executable, "-c", BUILD, str(copy.relative_to(ROOT)), scratch],
                cwd=ROOT, capture_output=True, text=True, check=False,
            )  # fmt: skip
        finally:
            copy.unlink(missing_ok=True)
    if done.returncode != 0 or not built_files(source):
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"build_engines: compiling {module} failed (output above)")


def native_files(source: Path, name: str) -> list[Path]:
    return sorted(source.parent.glob(f"{name}.*.so"))


def build_native(source: Path, name: str, force: bool) -> bool:
    """Compile a native core with the C compiler Python was built with, its digest in it;
    False (saying why) if it does not compile."""
    package = ".".join(source.parent.relative_to(ROOT).parts)
    digest = native_source_digest(source)
    probe = f"import {package}.{name} as m; print(m.SOURCE_DIGEST)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if not force and done.returncode == 0 and done.stdout.strip() == digest:
        return True
    say(f"compiling {source.relative_to(ROOT)} (seconds)")
    for old in native_files(source, name):
        old.unlink()
    target = source.with_name(name + sysconfig.get_config_var("EXT_SUFFIX"))
    compiler = sysconfig.get_config_var("CC").split()
    done = subprocess.run(
        [
            *compiler, "-O2", "-Wall", "-shared", "-fPIC",
            f"-I{sysconfig.get_paths()['include']}", f'-DSOURCE_DIGEST="{digest}"',
            "-o", str(target), str(source),
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        target.unlink(missing_ok=True)
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        say(f"compiling {source.relative_to(ROOT)} failed (above); the next build will run")
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="build every engine again")
    parser.add_argument("--clean", action="store_true", help="remove the compiled builds")
    args = parser.parse_args()
    if args.clean:
        built = [p for s in ENGINES.values() for p in built_files(s)]
        built += [p for s, name in NATIVE.items() for p in native_files(s, name)]
        for path in built:
            path.unlink()
            say(f"removed {path.relative_to(ROOT)}")
        return 0
    why = missing_tools()
    if why is not None:
        say(f"not compiling the engines: {why}; the plain Python engines will run")
        return 0
    # (a native core that does not compile leaves the mypyc build to run: build that still)
    natives_built = all([build_native(source, name, args.force) for source, name in NATIVE.items()])
    why = missing_mypyc()
    if why is not None:
        say(f"not compiling the engines with mypyc: {why}; the native cores or plain engines run")
        return 0 if natives_built else 1
    for module, source in ENGINES.items():
        digest = source_digest(source.read_bytes())
        if not args.force and built_digest(module) == digest:
            continue
        say(f"compiling {module} with mypyc (a minute or two)")
        build(module, source, digest)
        if built_digest(module) != digest:
            raise SystemExit(f"build_engines: the build of {module} does not load")
    return 0 if natives_built else 1


if __name__ == "__main__":
    sys.exit(main())
