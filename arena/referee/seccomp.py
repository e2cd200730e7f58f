"""The seccomp filter of a sandboxed bot: a classic-BPF program, built here by hand, that
bubblewrap installs (`--seccomp FD`) just before it runs the bot's command.

Allow by default, deny with EPERM a short list of system calls a bot never needs and that widen
the kernel's surface or reach past the sandbox: io_uring, keys, bpf, perf events, ptrace and
other processes' memory, mounting and every new namespace (unshare, setns, clone with a
CLONE_NEW* flag: no user namespace can be made inside), kexec, modules, swap, reboot,
userfaultfd, accounting, the clock, raw I/O ports. clone3 gets ENOSYS, so that the C library
falls back to clone, whose flags the filter can read (clone3's are behind a pointer). A system
call of another ABI than the machine's (i386 or x32 calls on x86_64, whose numbers differ) is
denied whatever it is.

Kept small and tested (tests/referee/test_seccomp.py for the program, tests/reliability/
test_resources.py for each call refused inside a real sandbox).
"""

from __future__ import annotations

import errno
import os
import struct

# struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args (6 x u64).
_NR, _ARCH, _ARG0 = 0, 4, 16
# Classic BPF opcodes.
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
X32_BIT = 0x40000000

# Every CLONE_NEW* flag: NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
CLONE_NEW_FLAGS = 0x80 | 0x20000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
CLONE_NEW_FLAGS |= 0x20000000 | 0x40000000

DENIED = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "reboot",
    "userfaultfd",
    "acct",
    "quotactl",
    "syslog",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "open_by_handle_at",
    "name_to_handle_at",
    "fanotify_init",
    "iopl",
    "ioperm",
)

# System call numbers per architecture (AUDIT_ARCH value, numbers). x86_64 from
# arch/x86/entry/syscalls/syscall_64.tbl, aarch64 from include/uapi/asm-generic/unistd.h.
X86_64 = 0xC000003E
AARCH64 = 0xC00000B7
# The io_uring, new mount API and clone3 numbers are the same on every architecture.
_COMMON = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "pidfd_getfd": 438,
    "mount_setattr": 442,
}
SYSCALLS = {
    X86_64: {
        **_COMMON,
        "clone": 56,
        "ptrace": 101,
        "syslog": 103,
        "pivot_root": 155,
        "adjtimex": 159,
        "chroot": 161,
        "acct": 163,
        "settimeofday": 164,
        "mount": 165,
        "umount2": 166,
        "swapon": 167,
        "swapoff": 168,
        "reboot": 169,
        "iopl": 172,
        "ioperm": 173,
        "init_module": 175,
        "delete_module": 176,
        "quotactl": 179,
        "clock_settime": 227,
        "kexec_load": 246,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "unshare": 272,
        "perf_event_open": 298,
        "fanotify_init": 300,
        "name_to_handle_at": 303,
        "open_by_handle_at": 304,
        "clock_adjtime": 305,
        "setns": 308,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "finit_module": 313,
        "kexec_file_load": 320,
        "bpf": 321,
        "userfaultfd": 323,
    },
    AARCH64: {
        **_COMMON,
        "clone": 220,
        "ptrace": 117,
        "syslog": 116,
        "pivot_root": 41,
        "adjtimex": 171,
        "chroot": 51,
        "acct": 89,
        "settimeofday": 170,
        "mount": 40,
        "umount2": 39,
        "swapon": 224,
        "swapoff": 225,
        "reboot": 142,
        "init_module": 105,
        "delete_module": 106,
        "quotactl": 60,
        "clock_settime": 112,
        "kexec_load": 104,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "unshare": 97,
        "perf_event_open": 241,
        "fanotify_init": 262,
        "name_to_handle_at": 264,
        "open_by_handle_at": 265,
        "clock_adjtime": 266,
        "setns": 268,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "finit_module": 273,
        "kexec_file_load": 294,
        "bpf": 280,
        "userfaultfd": 282,
    },
}
MACHINES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(arch: int) -> bytes:
    """The filter for `arch` (an AUDIT_ARCH value in SYSCALLS), as bubblewrap reads it: an array
    of struct sock_filter."""
    numbers = SYSCALLS[arch]
    denied = sorted({numbers[name] for name in DENIED if name in numbers})
    eperm, enosys = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS
    checks = [(n, "deny") for n in denied] + [(numbers["clone3"], "enosys")]
    checks.append((numbers["clone"], "clone"))
    # Layout: the arch check, the number checks, then the targets they jump forward to.
    head = 5 if arch == X86_64 else 4  # the instructions before the number checks
    targets = {"allow": 0, "deny": 1, "enosys": 2, "clone": 3}  # offsets after the checks
    first_target = head + len(checks)
    out = [
        _op(_LD_ABS, _ARCH),
        _op(_JEQ, arch, jt=1),
        _op(_RET, eperm),  # another ABI's call (i386 on x86_64): its numbers are not these
        _op(_LD_ABS, _NR),
    ]
    if arch == X86_64:
        # x32 calls are x86_64's numbers with this bit set: deny them all.
        out.append(_op(_JGE, X32_BIT, jt=first_target + targets["deny"] - (len(out) + 1)))
    for number, what in checks:
        at = len(out)
        out.append(_op(_JEQ, number, jt=first_target + targets[what] - (at + 1)))
    out += [
        _op(_RET, RET_ALLOW),
        _op(_RET, eperm),
        _op(_RET, enosys),
        # clone: deny any new namespace (its flags are the first argument's low 32 bits).
        _op(_LD_ABS, _ARG0),
        _op(_JSET, CLONE_NEW_FLAGS, jt=0, jf=1),
        _op(_RET, eperm),
        _op(_RET, RET_ALLOW),
    ]
    return b"".join(out)


def native_arch() -> int | None:
    """This machine's AUDIT_ARCH value, when the filter knows its system call numbers."""
    return MACHINES.get(os.uname().machine.lower())
