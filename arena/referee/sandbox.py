"""Exec wrapper that applies a bot's resource limits, then becomes the bot.

Run as `python -m arena.referee.sandbox MEMORY_MB CPU_S OPEN_FILES FILE_MB -- ARGV...` by the
launcher (0 = no limit). Limits are set here rather than in a preexec_fn, which is unsafe in a
process with threads (the referee has gRPC's).
"""

import os
import resource
import sys


def _limit(which: int, value: int) -> None:
    if value > 0:
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value if which != resource.RLIMIT_CPU else value + 5))


def main(args: list[str]) -> None:
    if len(args) < 6 or args[4] != "--":
        sys.exit("usage: python -m arena.referee.sandbox MEMORY_MB CPU_S OPEN_FILES FILE_MB "
                 "-- ARGV...")
    memory_mb, cpu_s, open_files, file_mb = (int(a) for a in args[:4])
    argv = args[5:]
    _limit(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    _limit(resource.RLIMIT_CPU, cpu_s)
    _limit(resource.RLIMIT_NOFILE, open_files)
    _limit(resource.RLIMIT_FSIZE, file_mb * 1024 * 1024)
    try:
        os.execvp(argv[0], argv)
    except OSError as err:
        sys.exit(f"cannot start the bot {argv[0]}: {err}")


if __name__ == "__main__":
    main(sys.argv[1:])
