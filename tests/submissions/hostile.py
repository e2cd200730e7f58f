"""Archives built for tests, hostile ones included, written quickly and without ever holding or
writing what they expand to: deflated zeros are made once per MiB and repeated (after a full
flush, deflate's output for the same input is the same), zip files are laid out by hand so
their headers can say anything, and tar headers are made from a template."""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

MiB = 1 << 20


def tar_member(name: str, data: bytes = b"", *, mode: int = 0o644, kind: bytes = tarfile.REGTYPE,
               linkname: str = "") -> tuple[tarfile.TarInfo, bytes]:  # fmt: skip
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname = kind, mode, linkname
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data


def write_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]], gz: bool = True) -> Path:
    with tarfile.open(path, "w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if info.size else None)
    return path


def _deflated_zeros(prefix: bytes, mib: int, suffix: bytes) -> tuple[bytes, int, int]:
    """Raw deflate of prefix + mib MiB of zeros + suffix, its crc32 and its length."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    zero = bytes(MiB)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    unit = c.compress(zero) + c.flush(zlib.Z_FULL_FLUSH)
    tail = c.compress(suffix) + c.flush()
    crc = zlib.crc32(prefix)
    for _ in range(mib):
        crc = zlib.crc32(zero, crc)
    crc = zlib.crc32(suffix, crc)
    return head + unit * mib + tail, crc, len(prefix) + mib * MiB + len(suffix)


def _gzip(prefix: bytes, mib: int, suffix: bytes) -> bytes:
    body, crc, size = _deflated_zeros(prefix, mib, suffix)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body + struct.pack("<LL", crc, size)


def tar_gz_bomb(path: Path, mib: int = 200) -> Path:
    """A .tar.gz of one file of `mib` MiB of zeros (~1000 times smaller)."""
    info = tarfile.TarInfo("zeros.bin")
    info.size = mib * MiB
    path.write_bytes(_gzip(info.tobuf(tarfile.GNU_FORMAT), mib, bytes(1024)))
    return path


def tar_gz_long_name(path: Path, mib: int = 50) -> Path:
    """A .tar.gz whose first header is a GNU long name of `mib` MiB (tarfile reads such a header
    whole into memory)."""
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = tarfile.GNUTYPE_LONGNAME, mib * MiB
    path.write_bytes(_gzip(info.tobuf(tarfile.GNU_FORMAT), mib, bytes(1024)))
    return path


def sparse_tar(path: Path, real_size: int, name: str = "huge.bin") -> Path:
    """A tar with one GNU sparse member declaring `real_size` bytes, holding one block of data."""
    info = tarfile.TarInfo(name)
    info.size = 512
    header = bytearray(info.tobuf(tarfile.GNU_FORMAT))
    header[156:157] = tarfile.GNUTYPE_SPARSE
    header[386:410] = b"%012o%012o" % (real_size - 512, 512)  # one chunk: at the end
    header[482] = 0  # no extended sparse headers
    header[483:495] = b"%012o" % real_size
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    path.write_bytes(bytes(header) + b"x" * 512 + bytes(1024))
    return path


def many_files_tar_gz(path: Path, n: int) -> Path:
    """A .tar.gz of `n` empty files, f0 ... f{n-1} (headers from a template: fast)."""
    template = bytearray(tarfile.TarInfo("x").tobuf(tarfile.USTAR_FORMAT))
    template[0:100] = bytes(100)
    template[148:156] = b" " * 8
    base = sum(template)
    blocks = []
    for k in range(n):
        name = b"f%d" % k
        header = bytearray(template)
        header[0 : len(name)] = name
        header[148:156] = b"%06o\0 " % (base + sum(name))
        blocks.append(bytes(header))
    blocks.append(bytes(1024))
    c = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: the gzip container
    path.write_bytes(c.compress(b"".join(blocks)) + c.flush())
    return path


def write_zip(path: Path, files: dict[str, bytes], modes: dict[str, int] | None = None) -> Path:
    """A zip made with zipfile; `modes` sets a member's Unix mode (its type bits too)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if modes and name in modes:
                info.external_attr = modes[name] << 16
            zf.writestr(info, data)
    return path


def zip_of_zeros(
    path: Path, mib: int, declared_size: int | None = None, method: int = zipfile.ZIP_DEFLATED
) -> Path:
    """A zip, laid out by hand, of one member of `mib` MiB of zeros whose headers declare
    `declared_size` (default: the truth) and compression `method` (the data is deflated)."""
    body, crc, size = _deflated_zeros(b"", mib, b"")
    declared = size if declared_size is None else declared_size
    name = b"zeros.bin"
    local = struct.pack(
        "<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, len(body), declared, len(name), 0
    )
    central = struct.pack(
        "<4s6H3L5H2L", b"PK\x01\x02", 0x0314, 20, 0, method, 0, 0x21, crc, len(body), declared,
        len(name), 0, 0, 0, 0, 0o100644 << 16, 0,
    ) + name  # fmt: skip
    offset = len(local) + len(name) + len(body)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central), offset, 0)
    path.write_bytes(local + name + body + central + end)
    return path
