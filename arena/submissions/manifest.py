"""The manifest of an uploaded bot, `arena-bot.toml` at the top of its folder: which runtime runs
it and with what command, read and checked in full, and turned into the command the sandbox runs.

    name = "mybot"            # optional, informative
    game = "balloon"          # optional: the game (or a list of games) the bot plays
    runtime = "python"        # required: "python" (the server's Python with arena_sdk) or "node"
    command = ["bot.py"]      # required: the program and its arguments, relative to the bot dir

The program is a file inside the bot's folder; the arguments after it reach the bot exactly as
written. Nothing of the command is looked up on the server beyond the bot's own folder: a bot
runs in its folder (its working directory), so `data/weights.bin` names its own file, and an
argument such as `/etc/passwd` or `../arena.db` is passed on as that text, whether or not such a
path exists here (the sandbox shows the bot nothing of the server's files anyway). Were
arguments resolved on the server, what a failed verification's log prints would tell the
uploader which of the server's paths exist.

A directory registered with `arena bot add --dir` may use this form too (arena.botcommand reads
it through `command_line`), or the older `command = "python3 bot.py"`, which an upload refuses.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from arena.botcommand import MANIFEST

from .archive import SubmissionRefused

RUNTIMES = {"python": "python", "node": "node"}  # runtime -> the program botcommand runs
KEYS = ("name", "game", "runtime", "command")
EXAMPLE = 'runtime = "python"\ncommand = ["bot.py"]'


@dataclass(frozen=True)
class Manifest:
    runtime: str
    command: tuple[str, ...]  # the program (a file in the bot's folder) and its arguments
    name: str | None = None
    games: tuple[str, ...] = ()  # empty: not said

    def command_line(self) -> str:
        """The bot's command as arena.botcommand reads one (`python bot.py --fast`): what the
        registry stores and the launcher runs inside the bot's folder."""
        return shlex.join([RUNTIMES[self.runtime], *self.command])

    def launch_command(self, bot_dir: str | os.PathLike[str]) -> list[str]:
        """The argv the sandbox runs, from inside `bot_dir`: the runtime (`python` is the
        interpreter that runs Arena, with the SDK), the program's path inside `bot_dir` (checked
        there by parse_manifest), then the arguments as written, untouched."""
        runtime = sys.executable if self.runtime == "python" else RUNTIMES[self.runtime]
        program = os.path.normpath(os.path.join(os.path.abspath(bot_dir), self.command[0]))
        return [runtime, program, *self.command[1:]]


def read_manifest(bot_dir: str | os.PathLike[str]) -> Manifest:
    """Read and check `arena-bot.toml` in `bot_dir`; SubmissionRefused says what is wrong."""
    path = Path(bot_dir) / MANIFEST
    if not path.is_file():
        raise SubmissionRefused(
            f"the bot has no {MANIFEST} at the top of its folder; create one, for example:\n"
            f"{EXAMPLE}"
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise SubmissionRefused(f"{MANIFEST} is not UTF-8 text; save it as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:  # its message says the line and column
        raise SubmissionRefused(f"{MANIFEST} is not valid TOML: {exc}; fix it") from None
    return parse_manifest(data, Path(bot_dir))


def parse_manifest(data: dict[str, Any], bot_dir: Path) -> Manifest:
    """A manifest's TOML table checked against the bot's folder."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise SubmissionRefused(
            f"{MANIFEST} has unknown keys: {', '.join(unknown)}; the keys are {', '.join(KEYS)}"
        )
    runtime = data.get("runtime")
    if runtime is None:
        raise SubmissionRefused(
            f'{MANIFEST} says no runtime; add one: runtime = "python" or runtime = "node"'
        )
    if runtime not in RUNTIMES:
        raise SubmissionRefused(
            f"{MANIFEST} has runtime = {runtime!r}, which Arena does not know; the runtimes are "
            f"{', '.join(RUNTIMES)}"
        )
    if runtime == "node" and shutil.which("node") is None:
        raise SubmissionRefused(
            'this server has no Node.js runtime; submit a Python bot (runtime = "python"), or '
            "ask the organiser to install Node.js"
        )
    command = _command(data.get("command"), bot_dir)
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise SubmissionRefused(f'{MANIFEST}: name is text, such as name = "mybot"')
    return Manifest(runtime, command, name, _games(data.get("game")))


def _command(command: object, bot_dir: Path) -> tuple[str, ...]:
    if isinstance(command, str):
        raise SubmissionRefused(
            f"{MANIFEST}: command is a list, the program and its arguments, with the runtime "
            f'beside it, for example:\n{EXAMPLE}\n(command = "python3 bot.py" is the form of '
            "bots the organiser registers, not of uploads)"
        )
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(a, str) and a for a in command)
    ):
        raise SubmissionRefused(
            f"{MANIFEST}: command is a list of non-empty strings, the program (a file in the "
            f'bot\'s folder) then its arguments, such as command = ["bot.py", "--fast"]'
        )
    if any("\x00" in a for a in command):
        raise SubmissionRefused(
            f"{MANIFEST}: the command holds a NUL character (\\u0000), which no program's "
            "arguments can; remove it"
        )
    program = command[0]
    parts = PurePosixPath(program).parts
    inside = bot_dir.resolve()
    if PurePosixPath(program).is_absolute() or ".." in parts:
        raise SubmissionRefused(
            f"{MANIFEST}: the program {program!r} leaves the bot's folder; give its path inside "
            'the folder, such as command = ["bot.py"]'
        )
    target = (bot_dir / program).resolve()
    if not target.is_relative_to(inside):
        raise SubmissionRefused(f"{MANIFEST}: the program {program!r} leaves the bot's folder")
    if not _is_file(target):
        raise SubmissionRefused(
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
    from arena.games import game_names

    if game is None:
        return ()
    games = [game] if isinstance(game, str) else game
    if not isinstance(games, list) or not all(isinstance(g, str) for g in games):
        raise SubmissionRefused(
            f'{MANIFEST}: game is a game\'s name or a list of them, such as game = "balloon"'
        )
    known = game_names()
    for g in games:
        if g not in known:
            raise SubmissionRefused(
                f"{MANIFEST}: there is no game {g!r} here; the games are {', '.join(known)}"
            )
    return tuple(games)
