"""Exec wrapper that applies a bot's resource limits and umask, then becomes the bot (or the
sandbox that runs it).

Run as `python -m arena.referee.rlimits MEMORY_MB CPU_S OPEN_FILES FILE_MB PROCESSES PARENT --
ARGV...` by the launcher (0 = no limit; PARENT is the launching process's pid). Limits are set
here rather than in a preexec_fn, which is unsafe in a process with threads (the referee has
gRPC's). They are inherited through bubblewrap and the drop to the sandbox's user, so they bind
the bot. PROCESSES is RLIMIT_NPROC, which counts the processes and threads of the bot's real
user: the launcher passes it only when the bot runs as a user of its own (the sandbox as root),
where it caps that bot alone.
"""

import ctypes
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1


def _limit(which: int, value: int) -> None:
    if value > 0:
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value if which != resource.RLIMIT_CPU else value + 5))


def _die_with_parent(parent: int) -> None:
    """Ask the kernel to kill the bot if the platform process that launched it (`parent`) dies,
    even by kill -9 (Linux; kept across exec). Best effort elsewhere.

    If the parent died before prctl took effect, this process was already handed to a reaper
    and no signal will come: exit. The reaper is not always pid 1 (a subreaper, a container's
    init), so the check compares with the launcher's own pid, not with 1."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(1)


USAGE = (
    "usage: python -m arena.referee.rlimits MEMORY_MB CPU_S OPEN_FILES FILE_MB PROCESSES PARENT "
    "-- ARGV..."
)


def main(args: list[str]) -> None:
    if len(args) < 8 or args[6] != "--":
        sys.exit(USAGE)
    memory_mb, cpu_s, open_files, file_mb, processes, parent = (int(a) for a in args[:6])
    argv = args[7:]
    _limit(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    _limit(resource.RLIMIT_CPU, cpu_s)
    _limit(resource.RLIMIT_NOFILE, open_files)
    _limit(resource.RLIMIT_FSIZE, file_mb * 1024 * 1024)
    _limit(resource.RLIMIT_NPROC, processes)
    # What the bot creates is readable by its user only (not by other users of the machine).
    os.umask(0o077)
    _die_with_parent(parent)
    try:
        os.execvp(argv[0], argv)
    except OSError as err:
        sys.exit(f"cannot start the bot {argv[0]}: {err}")


if __name__ == "__main__":
    main(sys.argv[1:])
