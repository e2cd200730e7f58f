"""The seccomp program (arena/referee/seccomp.py), run through a small classic-BPF interpreter
written here from the kernel's definition: what it answers for each system call, clone's flags
and other ABIs. That each call is refused inside a real sandbox: tests/reliability/
test_resources.py."""

from __future__ import annotations

import errno
import struct

import pytest

from arena.referee import seccomp


def run(program: bytes, nr: int, arch: int, arg0: int = 0) -> int:
    """What the filter returns for one call (struct seccomp_data built from the arguments)."""
    data = struct.pack("=IIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    ops = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    assert len(program) % 8 == 0 and len(ops) < 4096
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        pc += 1
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x15:  # jeq
            pc += jt if acc == k else jf
        elif code == 0x35:  # jge
            pc += jt if acc >= k else jf
        elif code == 0x45:  # jset
            pc += jt if acc & k else jf
        elif code == 0x06:  # ret
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        assert pc < len(ops), "jumped past the end"


EPERM = seccomp.RET_ERRNO | errno.EPERM
ENOSYS = seccomp.RET_ERRNO | errno.ENOSYS
ARCHS = [seccomp.X86_64, seccomp.AARCH64]


@pytest.mark.parametrize("arch", ARCHS, ids=["x86_64", "aarch64"])
def test_every_denied_call_gets_eperm_and_clone3_enosys(arch):
    program = seccomp.program(arch)
    numbers = seccomp.SYSCALLS[arch]
    # x86_64 has every call of the list; aarch64 has no I/O port calls (iopl, ioperm).
    missing = set(seccomp.DENIED) - set(numbers)
    assert missing == (set() if arch == seccomp.X86_64 else {"iopl", "ioperm"})
    for name in set(seccomp.DENIED) - missing:
        assert run(program, numbers[name], arch) == EPERM, name
    assert run(program, numbers["clone3"], arch) == ENOSYS


@pytest.mark.parametrize("arch", ARCHS, ids=["x86_64", "aarch64"])
def test_other_calls_are_allowed(arch):
    program = seccomp.program(arch)
    numbers = seccomp.SYSCALLS[arch]
    denied = {numbers[n] for n in (*seccomp.DENIED, "clone3") if n in numbers}
    for nr in range(0, 460):
        if nr not in denied:
            assert run(program, nr, arch) == seccomp.RET_ALLOW, nr


@pytest.mark.parametrize("arch", ARCHS, ids=["x86_64", "aarch64"])
def test_clone_is_allowed_without_a_namespace_flag_and_denied_with_one(arch):
    program = seccomp.program(arch)
    clone = seccomp.SYSCALLS[arch]["clone"]
    fork_like = 0x01200011  # CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD
    thread_like = 0x003D0F00  # what pthread_create passes
    assert run(program, clone, arch, fork_like) == seccomp.RET_ALLOW
    assert run(program, clone, arch, thread_like) == seccomp.RET_ALLOW
    for flag in (0x80, 0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000):
        assert run(program, clone, arch, fork_like | flag) == EPERM, hex(flag)
    assert run(program, clone, arch, 0x40000000) == EPERM  # CLONE_NEWNET


def test_calls_of_another_abi_are_all_denied():
    program = seccomp.program(seccomp.X86_64)
    i386 = 0x40000003
    assert run(program, 0, i386) == EPERM  # i386's read(2) through int 0x80
    assert run(program, 0x40000000 | 0, seccomp.X86_64) == EPERM  # x32's read
    assert run(program, 0, seccomp.X86_64) == seccomp.RET_ALLOW


def test_the_machine_is_known_here():
    assert seccomp.native_arch() in (seccomp.X86_64, seccomp.AARCH64)
