"""A bot's command: parsing and checking a command line or a bot directory's manifest.

One place for the rules, used by the registry (which checks a bot when it is added) and by the
launcher (which runs it). A bot is either a command line (`python example_bots/random_bot.py`,
paths relative to the directory it was given in) or a directory holding `arena-bot.toml` with
`command = "..."`, or an uploaded bot's `runtime = ...` and `command = [...]`
(arena.submissions.manifest), run inside that directory. `python` and `python3` mean the
interpreter that runs Arena, whose environment has the SDK, whatever is on PATH.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "arena-bot.toml"
PYTHON_NAMES = ("python", "python3")
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".sh", ".jar", ".pl", ".lua")


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


def read_manifest(directory: str | os.PathLike[str]) -> str:
    """The command of the bot in `directory`, from its arena-bot.toml (`command = "..."`)."""
    manifest = _load_manifest(directory)
    if _uploaded_form(manifest):
        return _uploaded_manifest(manifest, directory).command_line()
    command = manifest.get("command")
    if not isinstance(command, str) or not command.strip():
        raise BadManifest(
            f"{Path(directory) / MANIFEST} has no command; add a line such as "
            'command = "python3 bot.py"'
        )
    return command


def directory_argv(directory: str | os.PathLike[str]) -> list[str]:
    """The checked argv that runs the bot in `directory` from inside it. An uploaded bot's
    manifest (`runtime = ...`) gives its arguments as written, never looked up on this machine
    (arena.submissions.manifest); an organiser's `command = "..."` is made runnable as a
    command line is (`runnable`)."""
    manifest = _load_manifest(directory)
    if _uploaded_form(manifest):
        return _uploaded_manifest(manifest, directory).launch_command(directory)
    return runnable(read_manifest(directory), directory)


def _load_manifest(directory: str | os.PathLike[str]) -> dict:
    path = Path(directory) / MANIFEST
    if not Path(directory).is_dir():
        raise BadManifest(f"bot directory {directory} does not exist")
    if not path.is_file():
        raise BadManifest(
            f"{directory} has no {MANIFEST}; create one with a line such as "
            'command = "python3 bot.py"'
        )
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadManifest(f"{path} is not valid TOML ({exc}); fix it") from None


def _uploaded_form(manifest: dict) -> bool:
    return "runtime" in manifest or isinstance(manifest.get("command"), list)


def _uploaded_manifest(manifest: dict, directory: str | os.PathLike[str]):
    from arena.submissions.manifest import SubmissionRefused, parse_manifest

    try:
        return parse_manifest(manifest, Path(directory))
    except SubmissionRefused as exc:
        raise BadManifest(f"{directory}: {exc}") from None


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


def resolve(spec: str, base: str | os.PathLike[str] | None = None) -> BotCommand:
    """What a user typed (a command line, or a bot directory) made runnable from anywhere:
    checked, with `python` replaced by Arena's interpreter and paths made absolute."""
    base = Path(base) if base is not None else Path.cwd()
    directory = Path(spec) if os.path.isabs(spec) else base / spec
    if directory.is_dir():
        return BotCommand(tuple(directory_argv(directory)), directory.absolute())
    return BotCommand(tuple(runnable(spec, base)), None)


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
