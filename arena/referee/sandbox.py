"""The sandbox a launched bot runs in: bubblewrap's command line, and whether it can run here.

A sandboxed bot gets (see docs/reliability.md for what this guarantees and what it does not):
- new PID, mount, IPC, UTS and network namespaces. The bot is the child of the namespace's init,
  so when the sandbox ends every process in it ends, `setsid` and double-forked children
  included; `--die-with-parent` ends it when the platform dies, even by kill -9;
- a user of its own: when the platform runs as root, bubblewrap keeps only CAP_SETUID,
  CAP_SETGID and CAP_SETPCAP, and `setpriv` drops to a uid/gid picked at random for this launch
  (no groups, no capabilities, no new privileges) before the bot's program runs, so RLIMIT_NPROC
  caps this bot's processes alone. As another user, bubblewrap maps that user into a user
  namespace: the bot runs as the platform's user there, without capabilities;
- a file system of read-only system directories (`/usr`, the `/bin` and `/lib` links or
  directories, `/etc` with its secrets masked), the Python environment Arena runs in and the
  directories it imports Arena and the SDK from, the bot's own directory (read-only), its work
  directory (its HOME, writable, kept in the run directory), a private `/tmp`, and the referee's
  Unix socket at `/run/arena/referee.sock`; nothing else: no database, no other bot's directory
  or work directory, no home directory of the platform's user, no other process in `/proc`;
- no network but its own empty loopback: it reaches the referee through the socket;
- a seccomp filter (arena.referee.seccomp) denying the system calls a bot never needs, new
  namespaces of any kind (a user namespace included) among them.

`Sandbox.argv` is a pure function of its fields (tested as such); `unavailable_reason` runs
bubblewrap once to tell whether it works on this machine.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Where the referee's socket and the protocol file appear inside every sandbox.
SOCKET_IN_SANDBOX = "/run/arena/referee.sock"
PROTO_IN_SANDBOX = "/run/arena/arena.proto"
ADDRESS_IN_SANDBOX = f"unix:{SOCKET_IN_SANDBOX}"
# Where the bot's work directory appears inside: the same path for every bot and lane, so that
# the path says nothing of the run, the bot's name or its lane (its rotation: issue 28).
WORKDIR_IN_SANDBOX = "/home/bot"

# The system's read-only directories an interpreter needs. On merged-/usr systems the top-level
# ones are links into /usr and are made links again inside.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Secrets under /etc, hidden inside (an empty file or directory in their place).
ETC_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/security/opasswd",
    "/etc/krb5.keytab",
    "/etc/machine-id",
    "/etc/arena",
)
# The uids/gids a sandboxed bot runs as when the platform is root: one picked at random per
# launch, far from any real account, so that no other process shares it.
SANDBOX_UIDS = range(1_500_000_000, 1_600_000_000)
SETPRIV = "setpriv"


class SandboxUnavailable(RuntimeError):
    """Bubblewrap cannot run here; the message says why and what to do."""


def pick_uid() -> int:
    return random.SystemRandom().choice(SANDBOX_UIDS)


@dataclass(frozen=True)
class Sandbox:
    """What one launched bot sees. Paths are the host's; inside they keep the same names."""

    workdir: Path  # writable: the bot's HOME (and cwd, unless its manifest directory is),
    # bound at WORKDIR_IN_SANDBOX
    referee_socket: Path | None  # the referee's Unix socket, bound at SOCKET_IN_SANDBOX (None:
    # none, for a build: arena.referee.build)
    read_only: tuple[Path, ...] = ()  # the bot's own directory, the Python environment, ...
    proto: Path | None = None  # the protocol file, bound at PROTO_IN_SANDBOX
    uid: int | None = None  # None: keep the platform's user (in a user namespace when not root)
    tmp_mb: int = 64  # size of the private /tmp (memory-backed)
    # A descriptor the bubblewrap process inherits holding the seccomp program
    # (arena.referee.seccomp; the guard puts it there), or None for no filter.
    seccomp_fd: int | None = None
    system_dirs: tuple[str, ...] = SYSTEM_DIRS
    etc_secrets: tuple[str, ...] = ETC_SECRETS

    def argv(self, command: list[str] | tuple[str, ...], cwd: Path) -> list[str]:
        """The bubblewrap command line that runs `command` in `cwd` inside this sandbox."""
        args = [
            "bwrap",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "arena-bot",
        ]
        if self.seccomp_fd is not None:
            args += ["--seccomp", str(self.seccomp_fd)]
        if self.uid is not None:
            # As root: keep just what setpriv needs to drop to the bot's own user.
            args += [
                "--cap-add",
                "CAP_SETUID",
                "--cap-add",
                "CAP_SETGID",
                "--cap-add",
                "CAP_SETPCAP",
            ]
        else:
            args += ["--unshare-user"]
        for d in self.system_dirs:
            if os.path.islink(d):
                args += ["--symlink", os.readlink(d), d]
            elif os.path.exists(d):
                args += ["--ro-bind", d, d]
        args += ["--ro-bind", "/etc", "/etc"]
        for secret in self.etc_secrets:
            if os.path.isdir(secret) and not os.path.islink(secret):
                args += ["--tmpfs", secret, "--remount-ro", secret]
            elif os.path.lexists(secret):
                args += ["--ro-bind", "/dev/null", secret]
        args += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            str(self.tmp_mb * 1024 * 1024),
            "--perms",
            "1777",
            "--tmpfs",
            "/tmp",
        ]
        # Every bound path's parents are made first, mode 0755: bubblewrap would make them 0700
        # when it runs as root, and the bot's user could not walk through them.
        binds = [
            (str(p), "--ro-bind", str(p))  # (the host's path, how, the path inside)
            for p in _outermost(self.read_only)
            if not _under(p, self.system_dirs)
        ]
        binds.append((str(self.workdir), "--bind", WORKDIR_IN_SANDBOX))
        made: set[str] = set(self.system_dirs) | {"/", "/etc", "/proc", "/dev", "/tmp"}
        for _, _, inside in binds:
            for parent in reversed(Path(inside).parents):
                if str(parent) not in made:
                    made.add(str(parent))
                    args += ["--perms", "0755", "--dir", str(parent)]
        for path, how, inside in binds:
            args += [how, path, inside]
            made.add(inside)
        args += ["--perms", "0755", "--dir", "/run", "--perms", "0755", "--dir", "/run/arena"]
        if self.referee_socket is not None:
            args += ["--bind", str(self.referee_socket), SOCKET_IN_SANDBOX]
        if self.proto is not None:
            args += ["--ro-bind", str(self.proto), PROTO_IN_SANDBOX]
        inside_cwd = WORKDIR_IN_SANDBOX if Path(cwd) == self.workdir else str(cwd)
        args += ["--chdir", inside_cwd, "--"]
        if self.uid is not None:
            args += [
                SETPRIV,
                f"--reuid={self.uid}",
                f"--regid={self.uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
        return args + list(command)


def _under(path: Path, roots) -> bool:
    return any(path == Path(r) or Path(r) in path.parents for r in roots)


def _outermost(paths) -> list[Path]:
    """The paths with those inside another one dropped, parents first."""
    kept: list[Path] = []
    for p in sorted({Path(os.path.abspath(p)) for p in paths}, key=lambda p: len(p.parts)):
        if not any(k == p or k in p.parents for k in kept):
            kept.append(p)
    return kept


def python_paths() -> list[Path]:
    """What a Python bot needs to import the SDK and the engines as this process does: the
    interpreter's prefixes (a virtual environment and the Python it was made from) and the
    directories `arena` and `arena_sdk` are imported from (an editable install's sources live
    outside the environment; only the packages are shown, not the checkout around them)."""
    import arena
    import arena_sdk

    paths = {
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        Path(os.path.realpath(sys.executable)).parent.parent,
        Path(arena.__file__).parent,
        Path(arena_sdk.__file__).parent,
    }
    return sorted(paths)


@functools.cache  # the same for every launch of this process
def runtime_paths() -> tuple[Path, ...]:
    """Python's paths (python_paths) and Node's installation when it is outside /usr (a Node
    bot's own packages are in its directory)."""
    paths = python_paths()
    node = shutil.which("node")
    if node is not None:
        prefix = Path(os.path.realpath(node)).parent.parent
        if not _under(prefix, SYSTEM_DIRS):
            paths.append(prefix)
    return tuple(paths)


@functools.cache
def protocol_file() -> Path | None:
    """proto/arena/v1/arena.proto beside the arena package (a checkout), if it is there: bots in
    other languages load it at run time (ARENA_PROTO)."""
    import arena

    path = Path(arena.__file__).resolve().parent.parent / "proto" / "arena" / "v1" / "arena.proto"
    return path if path.is_file() else None


def bot_directory(argv: list[str] | tuple[str, ...], cwd: Path | None) -> Path | None:
    """The directory a bot's own files are in: its manifest directory, else the directory of its
    script (the first operand, `python dir/bot.py`) or of its program (`dir/bot`)."""
    if cwd is not None:
        return cwd
    for arg in list(argv[1:]) + [argv[0]]:
        if not arg.startswith("-") and os.path.isabs(arg) and os.path.isfile(arg):
            return Path(arg).parent
    return None


@functools.cache
def unavailable_reason() -> str | None:
    """None when bubblewrap can run a sandbox here, else why not and what to do (checked once per
    process by running `true` in a sandbox like a bot's)."""
    if not sys.platform.startswith("linux"):
        return (
            "launched bots run in a bubblewrap sandbox, which needs Linux; run Arena on "
            "Linux, or pass --no-sandbox to run bots unconfined (only bots you trust)"
        )
    if shutil.which("bwrap") is None:
        return (
            "launched bots run in a bubblewrap sandbox, and bwrap is not installed; install "
            "it (scripts/setup does: apt-get install bubblewrap), or pass --no-sandbox to "
            "run bots unconfined (only bots you trust)"
        )
    if os.geteuid() == 0 and shutil.which(SETPRIV) is None:
        return (
            "launched bots run as a user of their own, and setpriv (util-linux) is not "
            "installed; install util-linux, or pass --no-sandbox (only bots you trust)"
        )
    import tempfile

    with tempfile.TemporaryDirectory(prefix="arena-check-") as tmp:
        sock = Path(tmp) / "sock"
        sock.touch()
        work = Path(tmp) / "work"
        work.mkdir()
        uid = pick_uid() if os.geteuid() == 0 else None
        if uid is not None:
            os.chown(work, uid, uid)
        box = Sandbox(work, sock, uid=uid)
        try:
            done = subprocess.run(
                box.argv(["true"], work), capture_output=True, timeout=20, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return (
                f"bubblewrap could not run a sandbox here ({err}); pass --no-sandbox "
                "to run bots unconfined (only bots you trust)"
            )
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()
        return (
            f"bubblewrap cannot make a sandbox here ({said or f'exit {done.returncode}'}): "
            "it needs user namespaces (kernel.unprivileged_userns_clone=1, or running "
            "Arena as root); or pass --no-sandbox to run bots unconfined (only bots you "
            "trust)"
        )
    return None


def require() -> None:
    """Raise SandboxUnavailable unless bubblewrap can run here."""
    reason = unavailable_reason()
    if reason is not None:
        raise SandboxUnavailable(reason)
