"""Launching bot processes, and ending them with their whole process group.

A bot is a command (`python example_bots/random_bot.py`) or a directory holding a manifest
(`arena-bot.toml` with `command = "..."`, run inside that directory). The launcher starts it in a
new session (so its own process group), in its own working directory, with an environment that
holds the referee's address and that bot's token only (plus PATH, LANG, and HOME and TMPDIR inside
its working directory), its stdout and stderr going to a per-bot log file, and resource limits and
a umask of 077 applied by `arena.referee.sandbox` just before the bot's program is executed. What
this does not prevent (no namespaces or seccomp: a bot runs as the platform's user) is listed in
docs/reliability.md. `stop()` sends SIGTERM to the group, waits, then SIGKILLs
the group: children the bot forked die with it even when the bot itself has exited.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from arena import botcommand
from arena.botcommand import MANIFEST, BotCommand, BotCommandError  # noqa: F401 (re-exported)

@dataclass(frozen=True, slots=True)
class ResourceLimits:
    """Per-process limits applied to a launched bot (0 = no limit).

    memory_mb caps the address space (RLIMIT_AS); cpu_s caps CPU seconds (RLIMIT_CPU, over the
    bot's whole life, so set it for the ladder's length); open_files caps descriptors
    (RLIMIT_NOFILE); file_mb caps any file the bot writes, its log included (RLIMIT_FSIZE)."""

    memory_mb: int = 4096
    cpu_s: int = 0
    open_files: int = 256
    file_mb: int = 64


def resolve_command(spec: str, base: Path | None = None) -> BotCommand:
    """What a user typed (a command line or a bot directory) made runnable; see
    arena.botcommand. Raises BotCommandError saying what is wrong."""
    return botcommand.resolve(spec, base)


class BotProcess:
    """One launched bot process (and its process group)."""

    def __init__(self, name: str, command: BotCommand, workdir: Path, log_path: Path,
                 env: dict[str, str], limits: ResourceLimits = ResourceLimits()):
        self.name = name
        self.command = command
        self.workdir = workdir
        self.log_path = log_path
        self.env = env
        self.limits = limits
        self.proc: asyncio.subprocess.Process | None = None
        self.pgid: int | None = None

    async def start(self) -> None:
        # Private to the platform's user (mode 700), with the bot's own temporary directory.
        self.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        (self.workdir / "tmp").mkdir(mode=0o700, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cwd = self.command.cwd or self.workdir
        lim = self.limits
        argv = [sys.executable, "-m", "arena.referee.sandbox",
                str(lim.memory_mb), str(lim.cpu_s), str(lim.open_files), str(lim.file_mb),
                "--", *self.command.argv]
        with open(self.log_path, "ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, env=self.env, stdin=asyncio.subprocess.DEVNULL, stdout=log,
                stderr=log, start_new_session=True)
        self.pgid = self.proc.pid  # a new session: the leader's pid is the group id

    async def wait(self) -> int:
        return await self.proc.wait()

    def exit_info(self) -> str | None:
        """None while running, else how the process ended."""
        if self.proc is None or self.proc.returncode is None:
            return None
        code = self.proc.returncode
        if code < 0:
            return f"the bot process was killed by {signal.Signals(-code).name}"
        return f"the bot process exited with code {code}"

    async def stop(self, grace_s: float = 2.0) -> None:
        """Terminate the whole group, wait up to grace_s, then kill what is left; reap."""
        if self.proc is None:
            return
        _signal_group(self.pgid, signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), grace_s)
        except TimeoutError:
            pass
        # Kill the group even if the leader is gone: its children may still be in it.
        _signal_group(self.pgid, signal.SIGKILL)
        await self.proc.wait()
        # SIGKILL is delivered asynchronously and the kernel offers no event for "the group is
        # empty", so look until no member is left running (bounded).
        for _ in range(100):
            if not group_members(self.pgid):
                break
            await asyncio.sleep(0.01)

    def log_tail(self, limit: int = 2000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - limit))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


def group_members(pgid: int) -> list[int]:
    """Pids of the live (not zombie) processes in a process group (Linux /proc)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the command name (which may hold spaces) start after the last ')'.
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _signal_group(pgid: int | None, sig: int) -> None:
    if pgid is None:
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def bot_environment(address: str, token: str, workdir: Path,
                    extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a bot gets: the referee's address, its own token, and nothing of the
    platform's (no other bot's token, no secrets from the caller's environment)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "TMPDIR": str(workdir / "tmp"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "ARENA_ADDRESS": address,
        "ARENA_TOKEN": token,
        "PYTHONUNBUFFERED": "1",
    }
    if extra:
        env.update(extra)
    return env
