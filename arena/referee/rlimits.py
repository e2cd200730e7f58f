"""The guard process of one launched bot: it puts the bot into its control group, applies the
bot's resource limits, umask and seccomp filter, starts the bot (or the sandbox that runs it),
and ends every process the bot started when the bot ends, when it is told to stop, or when the
platform process that launched it dies, even by kill -9.

Run as `python -m arena.referee.rlimits MEMORY_MB CPU_S OPEN_FILES FILE_MB PROCESSES PARENT
[--cgroup DIR]... [--seccomp-fd FD] [--workdir DIR] [--release-fd FD] [--ready-fd FD] --
ARGV...` by the launcher (0 = no limit; PARENT is the launching process's pid). It exits as the
bot did (the same code, or killed by the same signal). Limits are set in the guard's child just
before it execs the bot, rather than in a preexec_fn, which is unsafe in a process with threads
(the referee has gRPC's). They are inherited through bubblewrap and the drop to the sandbox's
user, so they bind the bot. PROCESSES is RLIMIT_NPROC, which counts the processes and threads of
the bot's real user: the launcher passes it only when the bot runs as a user of its own (the
sandbox as root), where it caps that bot alone. Each --cgroup DIR is a control group
(arena.referee.cgroups) the child joins before it execs, so bubblewrap and all under it are
counted and capped together, and ending the bot ends the group. --seccomp-fd FD: the child puts
the seccomp filter (arena.referee.seccomp) at that descriptor, where bubblewrap's `--seccomp FD`
reads it. --workdir DIR: the bot's work directory tmpfs (arena.referee.workdir), which the guard
unmounts if the platform dies first. --release-fd FD and --ready-fd FD: see "The keeper" below.

Why a guard rather than exec'ing into bubblewrap: bubblewrap's own child (the sandbox's init)
binds its life to bubblewrap's (`--die-with-parent`) only after it has built the sandbox, and
until bubblewrap has set up the namespaces it waits on an eventfd that never ends if bubblewrap
dies. A kill of bubblewrap during those milliseconds (the platform killed while a bot starts)
left the sandbox, and the bot in it, running with no parent. The guard is a child subreaper:
what bubblewrap leaves behind becomes the guard's child, and the guard kills and reaps it.
The guard gets SIGTERM when the launcher stops the bot, and then kills everything: the control
group, bubblewrap, every child (a sandbox's init: its whole PID namespace dies with it) and every
process left in the guard's process group (an unconfined bot's children), until it has no child
left. It learns of the launcher's death two ways: PR_SET_PDEATHSIG (SIGTERM), and, since that
signal was once seen not to come (issue 29: a Ray node killed mid-ladder left a guard asleep in
waitpid), a pidfd of the launcher that it polls beside the bot's; then it also removes the
bot's control groups and unmounts its work directory, which the launcher would have done.

The keeper: the guard itself may be killed with SIGKILL together with its launcher. A Ray
worker that exits kills its direct children so (Ray's kill_child_processes_on_worker_exit,
on by default), and the guards of a Ray node's bots are such children: the sandboxes died
with them (bubblewrap's death signal) but their work directories stayed mounted and their
control groups stayed on the host. So when there is a work directory or a control group to
remove, the guard first forks a keeper, a process that is nobody's child here (forked through
an intermediate that exits at once, before the guard becomes a subreaper) and so outlives a
kill of the guard's parent's children: it sleeps on pidfds of the guard and of the launcher,
and once both are dead it ends what is left in the control group, unmounts and removes the
work directory and removes the groups (as `_orphaned`; whoever comes second finds nothing to
do). While the launcher lives, the launcher cleans up and then lets the keeper go: `--release-fd
FD` is the guard's end of a socket pair whose other end the launcher holds. The keeper keeps
it (the guard and the bot do not); after the launcher has removed the work directory and the
groups it writes a byte there and the keeper exits without doing anything, closing its end,
which tells the launcher that it has gone. If the socket closes with no byte, the launcher
died. The keeper leaves the guard's process group first: the launcher kills that group when it
stops the bot, before it cleans up, and a launcher killed between the two must still find a
keeper that removes the rest (a Ray node's worker may be killed at any moment).

For the same reason the launcher mounts the work directory only once the keeper runs: a tmpfs
mounted before stayed on the host when the worker died (the node killed) while its guard was
still starting, before it had forked a keeper. `--ready-fd FD` is the guard's end of a second
socket pair: once the keeper has left the guard's group, the guard writes a byte there, and
starts the bot only when the launcher, having mounted the work directory, writes one back. If
that socket closes instead (the launcher died or gave up), the guard ends without starting it.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import select
import signal
import sys
from pathlib import Path

from arena.referee import seccomp, workdir
from arena.referee.cgroups import BotGroup

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# What ends the guard (and so the bot): the launcher's death, a stop, a hang-up, Ctrl-C.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class _Stop(Exception):
    """Raised by the signal handler in the guard's main flow: the bot must end now."""

    def __init__(self, signum: int):
        self.signum = signum


def _limit(which: int, value: int) -> None:
    if value > 0:
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value if which != resource.RLIMIT_CPU else value + 5))


def _prctl(option: int, arg: int) -> bool:
    """prctl(2) with one argument; False where it is not available (not Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, arg, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _die_with_parent(parent: int, sig: int) -> None:
    """Ask the kernel to send `sig` to this process when `parent` (its parent) dies, even by
    kill -9 (Linux; kept across exec). Best effort elsewhere.

    If the parent died before prctl took effect, this process was already handed to a reaper
    and no signal will come: exit. The reaper is not always pid 1 (a subreaper, a container's
    init), so the check compares with the parent's pid, not with 1."""
    if _prctl(PR_SET_PDEATHSIG, sig) and os.getppid() != parent:
        os._exit(1)


def _proc_stat(pid: str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def _left_behind(spare: int | None = None) -> list[int]:
    """Live processes the guard must end: its children (what bubblewrap or the bot left to this
    subreaper included) and, when it leads its process group (the launcher starts it in a
    session of its own), the other members of that group (an unconfined bot's), but `spare`
    (the keeper)."""
    me = os.getpid()
    group = me if os.getpgrp() == me else -1
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in (me, spare):
            continue
        fields = _proc_stat(entry.name)
        if fields and fields[0] != "Z" and (int(fields[1]) == me or int(fields[2]) == group):
            found.append(int(entry.name))
    return found


def _end_everything(group: BotGroup | None, keeper: int | None = None) -> None:
    """Kill the control group's processes, then every child and group member but the keeper,
    reap, and repeat until no child is left. Killing a sandbox's init ends its whole PID
    namespace; orphans come to this subreaper."""
    if group is not None:
        group.kill()
    while True:
        # With no child, nothing is left: every live descendant of a subreaper whose parent died
        # is its child, and the members of its group are its descendants. (The usual case, and
        # it spares the scan of /proc.)
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        for pid in _left_behind(keeper):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _exit_as(status: int) -> None:
    """End this process the way a child ended (its wait status): same code, or same signal."""
    if os.WIFSIGNALED(status):
        _exit_by(os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


def _exit_by(sig: int) -> None:
    """End this process by `sig` (its default action), or with 128 + sig if that ignores it."""
    signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)


def _ignore_stops() -> None:
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def _on_stop(signum, frame) -> None:
    _ignore_stops()  # first: a second stop signal must not interrupt the clean-up
    raise _Stop(signum)


def _start(argv: list[str], limits: tuple[int, int, int, int, int], options: Options) -> int:
    """Fork the bot's process: control group, limits, umask 077, seccomp filter, death with the
    guard, exec."""
    guard = os.getpid()
    # Blocked across the fork: a stop signal must reach the guard's handler, never run it in
    # the child before the child has reset it.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    pid = os.fork()
    if pid:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        return pid
    try:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        for procs in options.cgroup_procs:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        if options.seccomp_fd is not None:
            _filter_at(options.seccomp_fd)
        memory_mb, cpu_s, open_files, file_mb, processes = limits
        _limit(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
        _limit(resource.RLIMIT_CPU, cpu_s)
        _limit(resource.RLIMIT_NOFILE, open_files)
        _limit(resource.RLIMIT_FSIZE, file_mb * 1024 * 1024)
        _limit(resource.RLIMIT_NPROC, processes)
        # What the bot creates is readable by its user only (not by other users of the machine).
        os.umask(0o077)
        _die_with_parent(guard, signal.SIGKILL)
        os.execvp(argv[0], argv)
    except OSError as err:
        print(f"cannot start the bot {argv[0]}: {err}", file=sys.stderr, flush=True)
    os._exit(127)


def _filter_at(fd: int) -> None:
    """Put the seccomp program for this machine at descriptor `fd` (inherited by bubblewrap)."""
    arch = seccomp.native_arch()
    if arch is None:
        raise OSError(f"no seccomp filter for this machine's architecture ({os.uname().machine})")
    memfd = os.memfd_create("arena-seccomp", 0)
    os.write(memfd, seccomp.program(arch))
    os.lseek(memfd, 0, os.SEEK_SET)
    if memfd != fd:
        os.dup2(memfd, fd)
        os.close(memfd)


class Options:
    """The guard's options between PARENT and `--`."""

    def __init__(self, args: list[str]):
        self.cgroups: list[Path] = []
        self.seccomp_fd: int | None = None
        self.workdir: Path | None = None
        self.release_fd: int | None = None
        self.ready_fd: int | None = None
        pairs = iter(args)
        for flag in pairs:
            value = next(pairs, None)
            if value is None:
                raise ValueError(f"{flag} needs a value")
            if flag == "--cgroup":
                self.cgroups.append(Path(value))
            elif flag == "--seccomp-fd":
                self.seccomp_fd = int(value)
            elif flag == "--workdir":
                self.workdir = Path(value)
            elif flag == "--release-fd":
                self.release_fd = int(value)
                os.set_inheritable(self.release_fd, False)  # the keeper's alone, not the bot's
            elif flag == "--ready-fd":
                self.ready_fd = int(value)
                os.set_inheritable(self.ready_fd, False)
            else:
                raise ValueError(f"unknown option {flag}")
        self.group = (
            BotGroup(2 if len(self.cgroups) == 1 else 1, tuple(self.cgroups))
            if self.cgroups
            else None
        )

    @property
    def cgroup_procs(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.cgroups]


USAGE = (
    "usage: python -m arena.referee.rlimits MEMORY_MB CPU_S OPEN_FILES FILE_MB PROCESSES PARENT "
    "[--cgroup DIR]... [--seccomp-fd FD] [--workdir DIR] [--release-fd FD] [--ready-fd FD] "
    "-- ARGV..."
)


def _watch_parent(parent: int, options: Options) -> int | None:
    """A pidfd of the launching process (None where pidfds are not available). If the parent
    is already gone, or the pid now names another process (checked after opening), clean up
    what the launcher made for the bot and exit."""
    gone = False
    fd = None
    try:
        fd = os.pidfd_open(parent)
    except ProcessLookupError:
        gone = True
    except (AttributeError, OSError):
        pass  # no pidfds here: the death signal alone, checked below
    if gone or os.getppid() != parent:
        _orphaned(options)
        os._exit(1)
    return fd


def _wait_for(bot: int, parent_fd: int | None) -> int | None:
    """Wait until the bot ends (its wait status) or the launcher dies (None)."""
    if parent_fd is None:
        return os.waitpid(bot, 0)[1]
    bot_fd = os.pidfd_open(bot)
    poller = select.poll()
    poller.register(bot_fd, select.POLLIN)
    poller.register(parent_fd, select.POLLIN)
    while True:
        ready = {fd for fd, _ in poller.poll()}
        if bot_fd in ready:
            return os.waitpid(bot, 0)[1]
        if parent_fd in ready:
            return None


def _start_keeper(parent_fd: int | None, options: Options) -> int | None:
    """Fork the keeper (module docstring); its pid, or None when there is nothing for it to
    remove or no pidfd to wait on. Call before the guard becomes a subreaper: the keeper's
    parent, an intermediate process, exits at once, and the keeper must not come back to the
    guard as an orphan (it is then nobody's child here, and no kill of a process's children
    reaches it). Returns once the keeper has left the guard's process group. The guard's own
    copy of the release socket is closed either way: only the keeper holds it."""
    try:
        if parent_fd is None or (options.workdir is None and options.group is None):
            return None
        return _fork_keeper(parent_fd, options)
    finally:
        if options.release_fd is not None:
            os.close(options.release_fd)


def _ready(fd: int) -> bool:
    """Tell the launcher that the keeper runs (a byte on the ready socket) and wait for its
    answer: True once it has mounted the work directory, False if the socket closes instead."""
    try:
        os.write(fd, b"k")
        return os.read(fd, 1) != b""
    except OSError:  # the launcher's end is closed (EPIPE, ECONNRESET)
        return False
    finally:
        os.close(fd)


def _fork_keeper(parent_fd: int, options: Options) -> int | None:
    guard_fd = os.pidfd_open(os.getpid())
    read, write = os.pipe()
    # Blocked across the forks, as in _start: a stop must reach the guard's handler only.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        middle = os.fork()
        if middle == 0:
            try:
                if os.fork() == 0:
                    os.close(read)
                    _keep(guard_fd, parent_fd, write, options)
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(middle, 0)
        told = os.read(read, 32)  # the keeper's pid, once it has left the group (or EOF)
    finally:
        os.close(read)
        os.close(guard_fd)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    return int(told) if told else None


def _keep(guard_fd: int, parent_fd: int, told: int, options: Options) -> None:
    """The keeper's life: leave the guard's process group and tell the guard (`told`), wait
    until the guard and the launcher are both dead, then remove what the launcher made for the
    bot; or exit at once when the launcher has done so (a byte on the release socket). Never
    returns."""
    try:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        if options.release_fd is not None:
            os.setpgid(0, 0)  # out of the group the launcher kills before it cleans up
        # (else it stays in the group, and ends with it while the launcher lives)
        os.write(told, str(os.getpid()).encode())
        os.close(told)
        os.chdir("/")  # not in the work directory: nothing of it may stay held by this process
        # Nor the guard's output (a pipe someone may read to its end) or any other descriptor.
        held = [fd for fd in (guard_fd, parent_fd, options.release_fd) if fd is not None]
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 3) for fd in held]
        guard_fd, parent_fd = moved[0], moved[1]
        release_fd = moved[2] if len(moved) > 2 else None
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        keep = sorted(set(moved))
        os.closerange(3, keep[0])
        for low, high in zip(keep, keep[1:]):
            os.closerange(low + 1, high)
        os.closerange(keep[-1] + 1, os.sysconf("SC_OPEN_MAX"))
        poller = select.poll()
        waiting = set(moved)
        for fd in waiting:
            poller.register(fd, select.POLLIN)
        launcher = {parent_fd} if release_fd is None else {parent_fd, release_fd}
        while guard_fd in waiting or launcher <= waiting:
            for fd, _ in poller.poll():
                if fd == release_fd and os.read(fd, 1):
                    os._exit(0)  # the launcher removed everything: nothing left to do
                # A dead process, or a release socket closed with no byte: its launcher died.
                poller.unregister(fd)
                waiting.discard(fd)
        if options.group is not None:
            options.group.kill()  # what the guard's death left running (none, as a rule)
        _orphaned(options)
    finally:
        os._exit(0)


def _orphaned(options: Options) -> None:
    """The launcher died: what it would have done after the bot, the guard does. The work
    directory first (its pages are host memory); then the groups, which may take a moment
    to be free of their last dying process (and are swept at the next start if not)."""
    if options.workdir is not None:
        workdir.unmount(options.workdir)
        try:
            options.workdir.rmdir()
        except OSError:
            pass
    if options.group is not None:
        options.group.remove()
        for d in options.group.dirs:  # the launcher's directory of groups, once empty
            try:
                d.parent.rmdir()
            except OSError:
                pass


def main(args: list[str]) -> None:
    try:
        split = args.index("--")
        options = Options(args[6:split])
        memory_mb, cpu_s, open_files, file_mb, processes, parent = (int(a) for a in args[:6])
    except ValueError as err:
        sys.exit(f"{err}\n{USAGE}")
    if len(args) <= split + 1:
        sys.exit(USAGE)
    keeper = None
    try:
        # The handlers come first: a stop that arrives while the bot starts is not lost.
        for sig in STOP_SIGNALS:
            signal.signal(sig, _on_stop)
        # The launcher's death: SIGTERM from the kernel, and the pidfd (see the docstring).
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        parent_fd = _watch_parent(parent, options)
        keeper = _start_keeper(parent_fd, options)  # before the guard is a subreaper
        if options.ready_fd is not None and not _ready(options.ready_fd):
            # The launcher died, or gave up on this launch: no bot. What is left is the
            # launcher's to remove, or the keeper's (and this guard's) if it died. Said in the
            # bot's log, where its owner looks when its seat says it exited before connecting.
            print(
                "arena: the bot was not started: the platform gave up on its launch "
                "(its work directory was not ready)",
                file=sys.stderr,
                flush=True,
            )
            _ignore_stops()
            if os.getppid() != parent:
                _orphaned(options)
            os._exit(1)
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        limits = (memory_mb, cpu_s, open_files, file_mb, processes)
        bot = _start(args[split + 1 :], limits, options)
        status = _wait_for(bot, parent_fd)
        _ignore_stops()
    except _Stop as stop:
        _end_everything(options.group, keeper)
        if os.getppid() != parent:
            _orphaned(options)
        _exit_by(stop.signum)  # as if the signal had ended the bot, as it did before the guard
    _end_everything(options.group, keeper)
    # The launcher is gone (or went while the bot ended: its death may have ended the bot, as
    # a held sandbox reading from it): what it would have cleaned up is the guard's to do.
    if status is None or os.getppid() != parent:
        _orphaned(options)
    if status is None:
        _exit_by(signal.SIGTERM)
    else:
        _exit_as(status)


if __name__ == "__main__":
    main(sys.argv[1:])
