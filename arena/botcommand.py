"""A bot's command and its manifest, `arena-bot.toml`: parsed and checked in one place.

Used by the registry (which checks a bot when it is added), by the owners' API (which checks an
upload) and by the launcher (which runs a bot). A bot is either a command line
(`python example_bots/random_bot.py`, paths relative to the directory it was given in) or a
directory holding `arena-bot.toml`, run inside that directory. `python` and `python3` mean the
interpreter that runs Arena, whose environment has the SDK, whatever is on PATH.

The manifest has two forms. An upload's (docs/submit.md), read and checked in full:

    name = "mybot"            # optional, informative
    game = "balloon"          # optional: the game (or a list of games) the bot plays
    runtime = "python"        # required: a runtime of the server (arena.runtimes): "python"
                              # (the server's Python with arena_sdk), "node", "cpp", or one the
                              # organiser defines ("python-ml")
    command = ["bot.py"]      # required: the program and its arguments, relative to the bot dir
    requirements = "requirements.txt"  # python: installed offline from the bot's wheels/
    build = ["make"]          # cpp: the build's command (or a list of them), run in the sandbox

A `cpp` bot's program is what its build makes (`command = ["bot"]`): it need not be there when
the bot is uploaded. A version that needs an install or a build runs from what its preparation
made (arena.runtimes.find_preparation: a build's folder, an environment on its PYTHONPATH).

The program is a file inside the bot's folder; the arguments after it reach the bot exactly as
written. Nothing of the command is looked up on the server beyond the bot's own folder: a bot
runs in its folder (its working directory), so `data/weights.bin` names its own file, and an
argument such as `/etc/passwd` or `../arena.db` is passed on as that text, whether or not such a
path exists here (the sandbox shows the bot nothing of the server's files anyway). Were
arguments resolved on the server, what a failed verification's log prints would tell the
uploader which of the server's paths exist.

A directory the organiser registers (`arena bot add --dir`) may use that form too, or the older
`command = "python3 bot.py"` (a command line, checked as one), which an upload refuses.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from arena.games import game_names
from arena.runtimes import ORGANISER_PREFIX, Preparation, Runtimes, find_preparation

MANIFEST = "arena-bot.toml"
PYTHON_NAMES = ("python", "python3")
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".sh", ".jar", ".pl", ".lua")
RUNTIMES = {"python": "python", "node": "node"}  # a runtime -> the program that runs the bot
KEYS = ("name", "game", "runtime", "command", "requirements", "wheels", "build")  # an upload's
WHEELS = "wheels"  # the folder of the author's wheels, unless the manifest says another
EXAMPLE = 'runtime = "python"\ncommand = ["bot.py"]'


class BotCommandError(ValueError):
    """A bot's command or manifest is unusable; the message says what to do."""


class CommandNotFound(BotCommandError):
    """The command cannot run: unparsable, empty, or its program or script is missing."""


class BadManifest(BotCommandError):
    """A bot directory without a usable arena-bot.toml."""


@dataclass(frozen=True, slots=True)
class BotCommand:
    argv: tuple[str, ...]
    cwd: Path | None  # a manifest bot runs in its own directory; None = a fresh work directory
    # Folders the bot imports from before the platform's (its installed environment): put
    # first on its PYTHONPATH and shown read-only in its sandbox.
    pythonpath: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Manifest:
    """A bot directory's arena-bot.toml, read and checked. An upload's form has a `runtime` and
    `command`, the program and its arguments; the organiser's older form has only `line`, its
    command line."""

    runtime: str | None  # None: the organiser's `command = "..."` (in `line`)
    command: tuple[str, ...] = ()  # the program (a file in the bot's folder) and its arguments
    name: str | None = None
    games: tuple[str, ...] = ()  # empty: not said
    line: str = ""  # the organiser's form: the command line as written
    kind: str = "python"  # the runtime's kind: python, node or cpp (arena.runtimes)
    requirements: str | None = None  # python: the requirements file, in the bot's folder
    wheels: str = WHEELS  # python: the folder of the author's wheels
    build: tuple[tuple[str, ...], ...] = ()  # cpp: the build's commands, in order

    def command_line(self) -> str:
        """The bot's command as a command line (`python bot.py --fast`, `./bot` for a built
        program): what the registry stores."""
        if self.runtime is None:
            return self.line
        if self.kind == "cpp":
            return shlex.join([f"./{PurePosixPath(self.command[0])}", *self.command[1:]])
        return shlex.join([RUNTIMES[self.kind], *self.command])

    def needs_preparation(self, runtimes: Runtimes | None = None) -> bool:
        """Whether the bot is installed or built before it runs (arena.referee.build)."""
        if self.kind == "cpp":
            return True
        runtime = (runtimes or Runtimes()).get(self.runtime or "")
        if runtime is None:  # an organiser's runtime (a Python with packages of its own)
            return self.kind == "python"
        return runtime.needs_install(self.requirements)

    def launch_command(self, bot_dir: str | os.PathLike[str]) -> list[str]:
        """The argv that runs the bot from inside `bot_dir`. An upload's form: the runtime
        (`python` is the interpreter that runs Arena, with the SDK), the program's path inside
        `bot_dir` (checked there by read_manifest), then the arguments as written, untouched,
        never looked up on this machine. The organiser's: its command line made runnable as
        any command line is (`runnable`)."""
        if self.runtime is None:
            return runnable(self.line, bot_dir)
        program = os.path.normpath(os.path.join(os.path.abspath(bot_dir), self.command[0]))
        if self.kind == "cpp":
            return [program, *self.command[1:]]
        runtime = sys.executable if self.kind == "python" else RUNTIMES[self.kind]
        return [runtime, program, *self.command[1:]]


def read_manifest(
    directory: str | os.PathLike[str], *, upload: bool = False, runtimes: Runtimes | None = None
) -> Manifest:
    """Read and check `arena-bot.toml` in `directory`; BadManifest says what is wrong. An upload
    (`upload`) must use the upload's form, and its messages name no path of this machine; a
    directory the organiser registers may use either form. An upload's runtime must be one of
    `runtimes` (the server's; None: the built-in ones) with nothing missing; a folder read
    otherwise may name an organiser's runtime (see _runtime_kind)."""
    if upload:
        return _upload_manifest(
            _load_manifest(directory, upload=True), Path(directory), runtimes or Runtimes()
        )
    manifest = _load_manifest(directory, upload=False)
    if "runtime" in manifest or isinstance(manifest.get("command"), list):
        try:
            return _upload_manifest(manifest, Path(directory), runtimes)
        except BadManifest as exc:
            raise BadManifest(f"{directory}: {exc}") from None
    command = manifest.get("command")
    if not isinstance(command, str) or not command.strip():
        raise BadManifest(
            f"{Path(directory) / MANIFEST} has no command; add a line such as "
            'command = "python3 bot.py"'
        )
    return Manifest(None, line=command)


def directory_argv(directory: str | os.PathLike[str]) -> list[str]:
    """The checked argv that runs the bot in `directory` from inside it."""
    return read_manifest(directory).launch_command(directory)


def _load_manifest(directory: str | os.PathLike[str], upload: bool) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    if upload:
        if not path.is_file():
            raise BadManifest(
                f"the bot has no {MANIFEST} at the top of its folder; create one, for "
                f"example:\n{EXAMPLE}"
            )
    elif not Path(directory).is_dir():
        raise BadManifest(f"bot directory {directory} does not exist")
    elif not path.is_file():
        raise BadManifest(
            f"{directory} has no {MANIFEST}; create one with a line such as "
            'command = "python3 bot.py"'
        )
    where = MANIFEST if upload else str(path)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise BadManifest(f"{where} is not UTF-8 text; save it as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:  # its message says the line and column
        raise BadManifest(f"{where} is not valid TOML: {exc}; fix it") from None


def _upload_manifest(data: dict[str, Any], bot_dir: Path, runtimes: Runtimes | None) -> Manifest:
    """A manifest's TOML table in the upload's form, checked against the bot's folder and, when
    given, the server's runtimes."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise BadManifest(
            f"{MANIFEST} has unknown keys: {', '.join(unknown)}; the keys are {', '.join(KEYS)}"
        )
    runtime = data.get("runtime")
    if runtime is None:
        raise BadManifest(
            f'{MANIFEST} says no runtime; add one: runtime = "python" or runtime = "node"'
        )
    kind = _runtime_kind(runtime, runtimes, bot_dir)
    command = _upload_command(data.get("command"), bot_dir, built=kind == "cpp")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise BadManifest(f'{MANIFEST}: name is text, such as name = "mybot"')
    requirements = data.get("requirements")
    if requirements is not None:
        if kind != "python":
            raise BadManifest(f"{MANIFEST}: requirements is for a Python bot; remove it")
        _inside(requirements, bot_dir, "requirements", "requirements.txt")
    wheels = data.get("wheels", WHEELS)
    if "wheels" in data:
        if kind != "python":
            raise BadManifest(f"{MANIFEST}: wheels is for a Python bot; remove it")
        _inside(wheels, bot_dir, "wheels", WHEELS, folder=True)
    build = _build(data.get("build"), kind)
    return Manifest(
        runtime,
        command,
        name,
        _games(data.get("game")),
        kind=kind,
        requirements=requirements,
        wheels=wheels,
        build=build,
    )


LABELS = {"python": "Python", "node": "Node.js", "cpp": "C++"}  # a built-in runtime's, in words


def _runtime_kind(runtime: object, runtimes: Runtimes | None, bot_dir: Path) -> str:
    """The kind of the runtime a manifest names, checked against the server's runtimes. With
    none given (not an upload: a folder the registry copies, or a version checked when it was
    uploaded), a `python-NAME` is taken for an organiser's Python runtime (the registry does
    not know the server's; arena.runtimes names them so), and a version already prepared is not
    checked again."""
    if runtimes is None:
        known = Runtimes().get(runtime) if isinstance(runtime, str) else None
        if known is None and isinstance(runtime, str) and runtime.startswith(ORGANISER_PREFIX):
            return "python"
        if known is not None and find_preparation(bot_dir) is not None:
            return known.kind
        runtimes = Runtimes()
    found = runtimes.get(runtime) if isinstance(runtime, str) else None
    if found is None:
        raise BadManifest(
            f"{MANIFEST} has runtime = {runtime!r}, which Arena does not know; the runtimes are "
            f"{', '.join(runtimes.names())} (arena runtime list)"
        )
    lacks = found.missing()
    if lacks:
        others = ", ".join(n for n in runtimes.names() if n != runtime)
        raise BadManifest(
            f"this server has no {LABELS.get(found.name, found.name)} runtime: it lacks "
            f"{'; '.join(lacks)}. Ask the organiser to install it, or submit a bot of another "
            f"runtime ({others})"
        )
    return found.kind


def _inside(value: object, bot_dir: Path, key: str, example: str, folder: bool = False) -> None:
    """Check that a manifest's `key` names a file (or folder) inside the bot's folder."""
    if not isinstance(value, str) or not value:
        raise BadManifest(f'{MANIFEST}: {key} is a path in the bot\'s folder, such as "{example}"')
    path = PurePosixPath(value)
    target = (bot_dir / value).resolve()
    if path.is_absolute() or ".." in path.parts or not target.is_relative_to(bot_dir.resolve()):
        raise BadManifest(f"{MANIFEST}: {key} {value!r} leaves the bot's folder")
    if not (target.is_dir() if folder else _is_file(target)):
        what = "folder" if folder else "file"
        raise BadManifest(f"{MANIFEST}: {key} {value!r} is not a {what} in the bot's folder")


def _build(build: object, kind: str) -> tuple[tuple[str, ...], ...]:
    """A manifest's build: one command (a list of strings) or several (a list of such lists)."""
    if build is None:
        if kind == "cpp":
            raise BadManifest(
                f'{MANIFEST}: a cpp bot says how it is built, such as build = ["make"] (or '
                'build = [["cmake", "-B", "out"], ["cmake", "--build", "out"]])'
            )
        return ()
    if kind != "cpp":
        raise BadManifest(
            f"{MANIFEST}: build is for a cpp bot; a Python bot lists its wheels in a "
            'requirements file instead (requirements = "requirements.txt")'
        )
    steps = [build] if isinstance(build, list) and all(isinstance(a, str) for a in build) else build
    if (
        not isinstance(steps, list)
        or not steps
        or not all(
            isinstance(s, list)
            and s
            and all(isinstance(a, str) and a and "\x00" not in a for a in s)
            for s in steps
        )
    ):
        raise BadManifest(
            f'{MANIFEST}: build is a command, such as build = ["make"], or a list of them, '
            'such as build = [["cmake", "-B", "out"], ["cmake", "--build", "out"]]'
        )
    return tuple(tuple(s) for s in steps)


def _upload_command(command: object, bot_dir: Path, built: bool = False) -> tuple[str, ...]:
    if isinstance(command, str):
        raise BadManifest(
            f"{MANIFEST}: command is a list, the program and its arguments, with the runtime "
            f'beside it, for example:\n{EXAMPLE}\n(command = "python3 bot.py" is the form of '
            "bots the organiser registers, not of uploads)"
        )
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(a, str) and a for a in command)
    ):
        raise BadManifest(
            f"{MANIFEST}: command is a list of non-empty strings, the program (a file in the "
            f'bot\'s folder) then its arguments, such as command = ["bot.py", "--fast"]'
        )
    if any("\x00" in a for a in command):
        raise BadManifest(
            f"{MANIFEST}: the command holds a NUL character (\\u0000), which no program's "
            "arguments can; remove it"
        )
    program = command[0]
    parts = PurePosixPath(program).parts
    inside = bot_dir.resolve()
    if PurePosixPath(program).is_absolute() or ".." in parts:
        raise BadManifest(
            f"{MANIFEST}: the program {program!r} leaves the bot's folder; give its path inside "
            'the folder, such as command = ["bot.py"]'
        )
    target = (bot_dir / program).resolve()
    if not target.is_relative_to(inside):
        raise BadManifest(f"{MANIFEST}: the program {program!r} leaves the bot's folder")
    if not built and not _is_file(target):  # a built program is made by the bot's build
        raise BadManifest(
            f"{MANIFEST}: the program {program!r} is not in the bot's folder; check its name "
            "and path, which are relative to the folder that holds arena-bot.toml"
        )
    return tuple(command)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system: no file of the bot has it
        return False


def _games(game: object) -> tuple[str, ...]:
    if game is None:
        return ()
    games = [game] if isinstance(game, str) else game
    if not isinstance(games, list) or not all(isinstance(g, str) for g in games):
        raise BadManifest(
            f'{MANIFEST}: game is a game\'s name or a list of them, such as game = "balloon"'
        )
    known = game_names()
    for g in games:
        if g not in known:
            raise BadManifest(
                f"{MANIFEST}: there is no game {g!r} here; the games are {', '.join(known)}"
            )
    return tuple(games)


def check_command(command: str, cwd: str | os.PathLike[str]) -> list[str]:
    """Split a bot command and check that it can run from `cwd`: its program is Python, on PATH
    or a path relative to `cwd`, and a script argument such as `bot.py` exists. Returns argv."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise CommandNotFound(
            f"cannot parse command {command!r} ({exc}); check its quoting"
        ) from None
    if not argv:
        raise CommandNotFound("the command is empty; give the command that starts the bot")
    _refuse_shell_syntax(command)
    exe = argv[0]
    base = Path(cwd)
    if exe in PYTHON_NAMES:
        pass
    elif os.sep in exe or (os.altsep and os.altsep in exe):
        path = base / exe
        if not path.is_file():
            raise CommandNotFound(
                f"bot command {exe!r} does not exist (looked for {path}); check the path, which "
                f"is relative to {base}"
            )
        if not os.access(path, os.X_OK):
            raise CommandNotFound(
                f"bot command {path} is not executable; make it executable (chmod +x) or run it "
                "through its interpreter, for example 'python3 bot.py'"
            )
    elif shutil.which(exe) is None:
        raise CommandNotFound(
            f"bot command {exe!r} was not found on PATH; install it, or give a path to it"
        )
    for arg in argv[1:]:
        if arg.startswith("-"):
            continue
        if arg.endswith(SCRIPT_SUFFIXES) and not (base / arg).is_file():
            raise CommandNotFound(
                f"the bot's script {arg!r} does not exist (looked for {base / arg}); check the "
                f"path, which is relative to {base}"
            )
        break  # only the first operand is the script; later ones are the bot's own arguments
    return argv


_SHELL_OPERATOR_CHARS = set(";&|<>()")
_SHELL_EXPANSION = re.compile(r"`|\$[({A-Za-z_]|^\$$")
_SINGLE_QUOTED = re.compile(r"'[^']*'")


def _refuse_shell_syntax(command: str) -> None:
    """A bot's command is split like a shell would split it but run without one, so `;`, `&&`,
    pipes, redirections and `$VAR` would reach the bot as arguments (or, worse, seem to work
    somewhere else): refuse them when the bot is registered, not when it is launched. Quoted
    (or escaped), they are arguments, as they would be in a shell."""
    lexer = shlex.shlex(command, posix=False, punctuation_chars=True)  # keeps quotes in tokens
    lexer.whitespace_split = True
    previous = ""
    try:
        tokens = list(lexer)
    except ValueError:  # quoting this lexer reads otherwise than shlex.split, which accepted it
        return
    for token in tokens:
        operator = set(token) <= _SHELL_OPERATOR_CHARS and not previous.endswith("\\")
        if operator or _SHELL_EXPANSION.search(_SINGLE_QUOTED.sub("", token)):
            raise CommandNotFound(
                f"the command {command!r} uses shell syntax ({token!r}), but a bot's command "
                "runs without a shell: there is no ';', '&&', '|', redirection or $variable. "
                "Put what you need in a script and give the command that runs it"
            )
        previous = token


def resolve(
    spec: str, base: str | os.PathLike[str] | None = None, prepared: Preparation | None = None
) -> BotCommand:
    """What a user typed (a command line, or a bot directory) made runnable from anywhere:
    checked, with `python` replaced by Arena's interpreter and paths made absolute. A bot
    directory's `prepared` (its install or build, where it is on this machine) is found beside
    it unless given (a Ray node is given the shipped copies: arena.ladder.ray_executor)."""
    base = Path(base) if base is not None else Path.cwd()
    directory = Path(spec) if os.path.isabs(spec) else base / spec
    if directory.is_dir():
        return _prepared_command(directory.absolute(), read_manifest(directory), prepared)
    return BotCommand(tuple(runnable(spec, base)), None)


def _prepared_command(
    directory: Path, manifest: Manifest, prepared: Preparation | None = None
) -> BotCommand:
    """A manifest bot's command: from what its preparation made when it has one (a server's
    version: arena.runtimes.find_preparation), else from its own folder (the author's own
    build, or a Python bot using the caller's environment)."""
    if prepared is None and manifest.needs_preparation():
        prepared = find_preparation(directory)
    if prepared is not None and not prepared.ok:
        step = prepared.failed_step()
        raise CommandNotFound(
            f"bot {directory.name}'s {step.name if step else 'preparation'} failed; it cannot run"
        )
    run_dir = prepared.run_dir if prepared is not None and prepared.run_dir else directory
    argv = manifest.launch_command(run_dir)
    if manifest.kind == "cpp" and not _is_file(Path(argv[0])):
        raise CommandNotFound(
            f"{manifest.command[0]} is not built in {run_dir}; run the bot's build "
            f"({' && '.join(shlex.join(s) for s in manifest.build)}) first"
        )
    return BotCommand(tuple(argv), run_dir, prepared.pythonpath if prepared is not None else ())


def runnable(command: str, directory: str | os.PathLike[str]) -> list[str]:
    """The argv that runs `command` from `directory`, checked (check_command), with `python`
    replaced by Arena's interpreter and paths made absolute."""
    return _absolutise(check_command(command, directory), Path(directory))


def _absolutise(argv: list[str], base: Path) -> list[str]:
    # The bot runs in its own working directory, so arguments naming existing files are made
    # absolute (not resolved: a venv's python is a symlink, and following it would leave the
    # venv and its packages behind).
    out = []
    for i, arg in enumerate(argv):
        if i == 0 and arg in PYTHON_NAMES:
            out.append(sys.executable)
        elif not arg.startswith("-") and (base / arg).exists():
            out.append(os.path.normpath(os.path.join(base, arg)))
        else:
            out.append(arg)
    return out
