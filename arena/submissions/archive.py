"""Bot archives: unpacking an uploaded archive into a directory without trusting it, packing a bot
directory into the archive a client uploads, and the content digest of an unpacked bot.

Pure: files only, no store, no network. An archive is a .tar.gz (.tgz), a .tar or a .zip, told
apart by its content. Every member is checked before anything of it is written (its path stays in
the bot's directory, it is a regular file or a folder, it is new, it fits the limits), sizes are
counted from the bytes actually written (headers can lie), and a refused or broken archive leaves
nothing behind. The same checks, with the same messages, refuse a directory before it is packed
(`pack_directory`) and before the store snapshots it (`check_tree`, used by arena.store.snapshots).
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import os
import re
import secrets
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Protocol

MiB = 1 << 20
ACCEPTED = "a .tar.gz (or .tgz), a .tar or a .zip"
SKIPPED_WHEN_PACKING = frozenset({"__pycache__", ".git", ".venv"})
MAC_METADATA = "__MACOSX"  # left out when unpacking
_CHUNK = 1 << 16
NAME_MAX = 255  # bytes of one file or folder name (Linux's file systems)


class SubmissionRefused(Exception):
    """An upload Arena does not take; the message says what was wrong and what to do."""


@dataclass(frozen=True)
class Limits:
    """What an uploaded bot may be. archive_bytes: the archive as uploaded (20 MiB);
    unpacked_bytes: all its files together once unpacked (100 MiB); files: how many files (2000);
    file_bytes: one file (50 MiB); expansion: how many times its unpacked size may exceed the
    archive's (100), once past expansion_grace_bytes (1 MiB: a small archive of repetitive
    source may compress better than that), so a zip bomb is refused long before it is written out;
    depth: folders inside folders (32); path_chars: a file's path inside the bot (255)."""

    archive_bytes: int = 20 * MiB
    unpacked_bytes: int = 100 * MiB
    files: int = 2000
    file_bytes: int = 50 * MiB
    expansion: int = 100
    expansion_grace_bytes: int = 1 * MiB
    depth: int = 32
    path_chars: int = 255

    def unpacked_budget(self, archive_bytes: int) -> int:
        """The most an archive of `archive_bytes` may unpack to."""
        by_ratio = max(self.expansion * archive_bytes, self.expansion_grace_bytes)
        return min(self.unpacked_bytes, by_ratio)


@dataclass(frozen=True)
class UnpackedBot:
    """What `unpack` made: the bot's directory and what it holds."""

    directory: Path
    format: str  # "tar.gz", "tar" or "zip"
    files: int
    unpacked_bytes: int
    archive_bytes: int
    digest: str  # content_digest(directory)


def size_text(n: int) -> str:
    """A size as people read it (whole units, rounded down)."""
    if n >= 1 << 30:
        return f"{n >> 30} GB"
    if n >= MiB:
        return f"{n >> 20} MB"
    if n >= 1024:
        return f"{n >> 10} KB"
    return f"{n} bytes"


# ------------------------------------------------------------------ checks shared by every path


def check_path(name: str, limits: Limits) -> PurePosixPath | None:
    """A member's name made a relative path inside the bot, or None for the bot's folder itself
    (`.`, `./`). Refuses names that would leave the bot's folder or that the limits exclude."""
    shown = repr(name)
    if "\x00" in name or "\\" in name:
        raise SubmissionRefused(
            f"{shown} has a backslash or a NUL character in its name; a bot's file names use "
            "'/' between folders: make the archive with tar or zip on its folder"
        )
    if name.startswith("/") or re.match(r"[A-Za-z]:(/|$)", name):  # a Windows drive too
        raise SubmissionRefused(
            f"{shown} is an absolute path; every file of a bot is inside its folder: make the "
            "archive from inside the bot's folder (tar -czf bot.tar.gz -C mybot .)"
        )
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise SubmissionRefused(
            f"{shown} has a '..' component, which leads out of the bot's folder; every file of "
            "a bot is inside its folder"
        )
    if not parts:
        return None
    _check_name_bytes(name, parts)
    rel = PurePosixPath(*parts)
    if len(parts) > limits.depth:
        raise SubmissionRefused(
            f"{shown} is {len(parts)} folders deep; the limit is {limits.depth}: flatten the "
            "bot's folders"
        )
    text = str(rel)
    if len(text) > limits.path_chars:
        shown = repr(text) if len(text) <= 60 else f"{text[:60]!r}..."
        raise SubmissionRefused(
            f"{shown} is a path of {len(text)} characters; the limit is "
            f"{limits.path_chars}: use shorter names"
        )
    return rel


def _check_name_bytes(name: str, parts: list[str]) -> None:
    """Names the file system can hold: UTF-8 (a tar may carry other bytes, which would reach the
    disk as they are and name nothing a bot's author can see), each folder or file name at most
    NAME_MAX bytes (counted in bytes: a character outside ASCII takes 2 to 4)."""
    shown = _shortened(name)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise SubmissionRefused(
            f"{shown} is not a UTF-8 name; a bot's file names are UTF-8: rename the file, or "
            "make the archive on a system that writes UTF-8 names"
        ) from None
    for part in parts:
        size = len(part.encode("utf-8"))
        if size > NAME_MAX:
            raise SubmissionRefused(
                f"{shown} has a name of {size} bytes ({_shortened(part)}); a file or folder "
                f"name is at most {NAME_MAX} bytes in UTF-8 (a character outside ASCII takes 2 "
                "to 4): use a shorter name"
            )


def _shortened(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def _name_too_long(rel: PurePosixPath) -> SubmissionRefused:
    return SubmissionRefused(
        f"{_shortened(str(rel))} is a name too long for the server's file system; use shorter names"
    )


def refuse_link(rel: object, target: str | None = None) -> SubmissionRefused:
    to = f" to {target}" if target else ""
    return SubmissionRefused(
        f"{rel} is a link{to}; a bot holds files and folders only (links are refused, "
        "wherever they lead): put the file itself in the bot's folder"
    )


def refuse_special(rel: object, kind: str) -> SubmissionRefused:
    return SubmissionRefused(
        f"{rel} is a {kind}, not a regular file or folder; a bot holds files and folders "
        "only: leave it out"
    )


@dataclass
class Budget:
    """The running count of a bot's files and bytes against its limits: every path (unpacking,
    packing, snapshotting) refuses with the same messages."""

    limits: Limits
    unpacked_limit: int  # limits.unpacked_bytes, or less (the expansion ratio of an archive)
    archive_bytes: int | None = None  # set when unpacking: the ratio is the archive's
    files: int = 0
    bytes: int = 0
    names: dict[PurePosixPath, bool] = field(default_factory=dict)  # path -> is a folder

    def add_folder(self, rel: PurePosixPath) -> None:
        self._parents(rel)
        if self.names.get(rel) is False:
            raise SubmissionRefused(f"{rel} is both a file and a folder; keep one of them")
        self.names[rel] = True

    def add_file(self, rel: PurePosixPath, declared_bytes: int = 0) -> None:
        """Count a file before it is written; `declared_bytes`, what its header says, refuses a
        file declared too big before a byte of it is read."""
        self._parents(rel)
        if rel in self.names:
            what = "a folder" if self.names[rel] else "a file"
            raise SubmissionRefused(
                f"{rel} appears twice in the archive (and is already {what}); keep one of them"
            )
        self.names[rel] = False
        self.files += 1
        if self.files > self.limits.files:
            raise SubmissionRefused(
                f"the bot holds more than {self.limits.files} files (the limit); a bot is its "
                "code and small data: remove build outputs, logs or vendored packages"
            )
        self.check_file_size(rel, declared_bytes)
        self.add_bytes(rel, declared_bytes, declared=True)

    def check_file_size(self, rel: object, n: int) -> None:
        if n > self.limits.file_bytes:
            raise SubmissionRefused(
                f"{rel} is {size_text(n)}; a file of a bot version is at most "
                f"{size_text(self.limits.file_bytes)}: leave big data out of the bot"
            )

    def add_bytes(self, rel: object | None, n: int, declared: bool = False) -> None:
        """Count `n` bytes of `rel` (None: of the whole bot); `declared` only checks them."""
        total = self.bytes + n
        if total > self.unpacked_limit:
            at = f" at {rel}" if rel is not None else ""
            if self.unpacked_limit < self.limits.unpacked_bytes and self.archive_bytes:
                raise SubmissionRefused(
                    f"the archive expands more than {self.limits.expansion} times (from "
                    f"{size_text(self.archive_bytes)} to over {size_text(self.unpacked_limit)}"
                    f"{at}), as a zip bomb does; a bot's files are not that repetitive: "
                    "leave generated data out of it"
                )
            raise SubmissionRefused(
                f"the bot's files add up to more than {size_text(self.limits.unpacked_bytes)} "
                f"(the limit{', passed' + at if at else ''}); a bot is its code and small "
                "data: leave data sets, virtual environments and logs out of it"
            )
        if not declared:
            self.bytes = total

    def _parents(self, rel: PurePosixPath) -> None:
        for parent in list(rel.parents)[:-1]:  # without '.'
            if self.names.get(parent) is False:
                raise SubmissionRefused(f"{parent} is both a file and a folder; keep one of them")
            self.names[parent] = True


def safe_mode(mode: int, is_dir: bool = False) -> int:
    """The mode a bot's file gets: readable, writable by its owner only, executable if it was."""
    return 0o755 if is_dir or mode & 0o111 else 0o644


# --------------------------------------------------------------------------------- unpacking


def unpack(archive: Path, dest: Path, limits: Limits = Limits()) -> UnpackedBot:
    """Unpack the uploaded `archive` into `dest`, which must not exist, checking every member
    before it is written. A single top-level folder (`mybot/...`) is unwrapped into `dest`;
    `__MACOSX/` is left out. On any refusal (SubmissionRefused) or error, `dest` is removed
    entirely."""
    archive, dest = Path(archive), Path(dest)
    size = archive.stat().st_size
    if size > limits.archive_bytes:
        raise SubmissionRefused(
            f"the archive is {size_text(size)}; the limit is {size_text(limits.archive_bytes)}: "
            "leave data sets, virtual environments and build outputs out of the bot"
        )
    kind = _archive_format(archive)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.mkdir()  # FileExistsError when it exists: the caller's mistake, not the upload's
    try:
        budget = Budget(limits, limits.unpacked_budget(size), archive_bytes=size)
        if kind == "zip":
            _unpack_zip(archive, dest, budget)
        else:
            _unpack_tar(archive, dest, budget, gzipped=kind == "tar.gz")
        if budget.files == 0:
            raise SubmissionRefused(
                "the archive holds no files; put the bot's folder in it (its arena-bot.toml and "
                "its code)"
            )
        _open_folders(dest)
        _unwrap(dest)
        return UnpackedBot(dest, kind, budget.files, budget.bytes, size, content_digest(dest))
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, gzip.BadGzipFile) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise SubmissionRefused(
            f"the archive is damaged or truncated ({exc}); make it again and upload it whole"
        ) from None
    except NotImplementedError as exc:  # a zip's compression method zipfile cannot read
        shutil.rmtree(dest, ignore_errors=True)
        raise SubmissionRefused(
            f"the archive uses what Arena cannot read ({exc}); make it with tar, or with zip's "
            "usual compression (deflate)"
        ) from None
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _archive_format(archive: Path) -> str:
    with archive.open("rb") as f:
        head = f.read(512)
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if len(head) == 512 and (head[257:262] == b"ustar" or _tar_checksum_ok(head)):
        return "tar"
    raise SubmissionRefused(
        f"the upload is not an archive Arena accepts (whatever its name says); give {ACCEPTED} "
        "of the bot's folder, or the folder itself to arena submit"
    )


def _tar_checksum_ok(block: bytes) -> bool:
    """A pre-POSIX tar header (no 'ustar' magic), or the zero block of an empty tar."""
    if block == bytes(512):
        return True
    try:
        return int(block[148:156].split(b"\0")[0].strip() or b"-1", 8) == sum(
            block[:148] + b" " * 8 + block[156:]
        )
    except ValueError:
        return False


class _Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class _BoundedReader:
    """A stream that refuses to yield more than `limit` bytes: tar headers (long names, pax
    records) are read whole into memory, so a decompressed stream is bounded before they are."""

    def __init__(self, inner: _Readable, limit: int):
        self.inner, self.limit, self.count = inner, limit, 0

    def read(self, n: int = -1) -> bytes:
        allowed = self.limit - self.count
        data = self.inner.read(allowed + 1 if n < 0 or n > allowed else n)
        self.count += len(data)
        if self.count > self.limit:
            raise SubmissionRefused(
                f"the archive unpacks to more than {size_text(self.limit)} of files and headers; "
                "an archive that expands that much is refused: leave generated data out of the bot"
            )
        return data


def _unpack_tar(archive: Path, dest: Path, budget: Budget, gzipped: bool) -> None:
    # Headers take 512 bytes per member (plus long names): room for them beyond the files.
    limit = budget.unpacked_limit + (budget.limits.files + 2) * 4096 + 2 * MiB
    with archive.open("rb") as raw:
        inner: _Readable = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
        stream = _BoundedReader(inner, limit)
        with tarfile.open(fileobj=stream, mode="r|") as tf:  # type: ignore[call-overload]
            for member in tf:
                rel = check_path(member.name, budget.limits)
                if _is_mac_metadata(rel):
                    continue
                if member.issym() or member.islnk():
                    raise refuse_link(rel or member.name, member.linkname)
                if member.isdir():
                    if rel is not None:
                        budget.add_folder(rel)
                        _make_folder(dest, rel)
                    continue
                if not member.isfile():  # isfile() is true of sparse members: checked by size
                    raise refuse_special(rel or member.name, _tar_kind(member))
                if rel is None:
                    raise refuse_special(member.name, "file named like the bot's folder")
                budget.add_file(rel, member.size)
                data = tf.extractfile(member)
                assert data is not None  # a regular file always has data
                _write_file(dest, rel, data, member.mode, budget)


def _tar_kind(member: tarfile.TarInfo) -> str:
    if member.ischr() or member.isblk():
        return "device file"
    if member.isfifo():
        return "named pipe (fifo)"
    return f"tar member of type {member.type!r}"


def _unpack_zip(archive: Path, dest: Path, budget: Budget) -> None:
    with zipfile.ZipFile(archive) as zf:
        members = zf.infolist()
        files = sum(not info.is_dir() for info in members)
        if files > budget.limits.files or len(members) > 2 * budget.limits.files:
            raise SubmissionRefused(
                f"the archive holds {files} files (and {len(members) - files} folders); the "
                f"limit is {budget.limits.files} files: remove build outputs, logs or vendored "
                "packages"
            )
        for info in members:
            rel = check_path(info.filename, budget.limits)
            if _is_mac_metadata(rel):
                continue
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind == stat.S_IFLNK:
                raise refuse_link(rel or info.filename)
            if info.is_dir() or kind == stat.S_IFDIR:
                if rel is not None:
                    budget.add_folder(rel)
                    _make_folder(dest, rel)
                continue
            if kind not in (0, stat.S_IFREG):
                raise refuse_special(rel or info.filename, _mode_kind(kind))
            if rel is None:
                raise refuse_special(info.filename, "file named like the bot's folder")
            if info.flag_bits & 0x1:
                raise SubmissionRefused(f"{rel} is encrypted; upload the bot's files unencrypted")
            budget.add_file(rel, info.file_size)
            with zf.open(info) as data:
                _write_file(dest, rel, data, mode, budget)


def _mode_kind(kind: int) -> str:
    if kind in (stat.S_IFCHR, stat.S_IFBLK):
        return "device file"
    if kind == stat.S_IFIFO:
        return "named pipe (fifo)"
    if kind == stat.S_IFSOCK:
        return "socket"
    return "special file"


def _inside(dest: Path, rel: PurePosixPath) -> Path:
    path = dest / rel
    # No member is a link, so nothing written can redirect a path; checked all the same.
    if not path.parent.resolve().is_relative_to(dest.resolve()):
        raise SubmissionRefused(f"{rel} resolves outside the bot's folder; it is refused")
    return path


def _make_folder(dest: Path, rel: PurePosixPath) -> None:
    path = _inside(dest, rel)
    try:
        path.mkdir(mode=0o755, parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:  # a file system whose NAME_MAX is below 255
            raise _name_too_long(rel) from None
        raise


def _write_file(dest: Path, rel: PurePosixPath, data: IO[bytes], mode: int, budget: Budget) -> None:
    path = _inside(dest, rel)
    written = 0
    try:
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:  # a file system whose NAME_MAX is below 255
            raise _name_too_long(rel) from None
        raise
    with os.fdopen(fd, "wb") as out:
        while chunk := data.read(_CHUNK):
            written += len(chunk)
            budget.check_file_size(rel, written)  # counted as written: headers can lie
            budget.add_bytes(rel, len(chunk))
            out.write(chunk)
    os.chmod(path, safe_mode(mode))


def _is_mac_metadata(rel: PurePosixPath | None) -> bool:
    """macOS's archivers add __MACOSX/ (resource forks) beside the folder: never a bot's."""
    return rel is not None and rel.parts[0] == MAC_METADATA


def _open_folders(dest: Path) -> None:
    """Folders readable by all (the sandbox's user may be another), whatever the umask was
    when they were made; files got their modes as they were written."""
    for dirpath, _, _ in os.walk(dest):
        os.chmod(dirpath, 0o755)


def _unwrap(dest: Path) -> None:
    """An archive of `mybot/...` unpacks as if it were `...`: its single top folder is removed."""
    top = list(dest.iterdir())
    if len(top) != 1 or not top[0].is_dir() or top[0].is_symlink():
        return
    moving = top[0].rename(dest / f".unwrapping-{secrets.token_hex(8)}")
    for child in moving.iterdir():
        child.rename(dest / child.name)
    moving.rmdir()


# ------------------------------------------------------------------------- directories


def bot_files(
    source: Path, budget: Budget, *, links_inside: bool = False, skip: frozenset[str] = frozenset()
) -> Iterator[tuple[PurePosixPath, Path, os.stat_result]]:
    """Walk a bot directory (sorted, folders before what they hold), refusing what a bot may
    not hold, and yield (relative path, path, stat) of each file and folder. With
    `links_inside`, a symbolic link to a file or folder inside `source` counts as what it leads
    to (the store's snapshots copy it so); otherwise every link is refused. Names in `skip` are
    left out (with what they hold)."""
    source = Path(source).resolve()
    for dirpath, dirnames, filenames in os.walk(source, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        for name in dirnames + sorted(filenames):
            path = Path(dirpath) / name
            rel = check_path(path.relative_to(source).as_posix(), budget.limits)
            assert rel is not None
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                if not links_inside:
                    raise refuse_link(rel, os.readlink(path))
                st = _inner_link(source, path)
            if stat.S_ISDIR(st.st_mode):
                budget.add_folder(rel)
            elif stat.S_ISREG(st.st_mode):
                budget.add_file(rel, st.st_size)
                budget.add_bytes(rel, st.st_size)
            else:
                raise refuse_special(rel, _mode_kind(stat.S_IFMT(st.st_mode)))
            yield rel, path, st


def _inner_link(source: Path, path: Path) -> os.stat_result:
    target = path.resolve()
    if not target.is_relative_to(source):
        raise SubmissionRefused(
            f"{path} is a symbolic link to {target}, outside the bot directory {source}; a "
            "version keeps only the directory's own files: copy what it needs into the directory"
        )
    if path.parent.is_relative_to(target):
        raise SubmissionRefused(
            f"{path} is a symbolic link to {target}, a folder that holds it (a loop); remove it"
        )
    if not target.exists():
        raise SubmissionRefused(
            f"{path} is a symbolic link to {target}, which does not exist; remove it or fix it"
        )
    return target.stat()


def check_tree(source: Path, limits: Limits, *, links_inside: bool = False) -> None:
    """Refuse, before anything is copied, a directory a bot version may not be (see bot_files)."""
    budget = Budget(limits, limits.unpacked_bytes)
    for _ in bot_files(source, budget, links_inside=links_inside):
        pass


def pack_directory(src: Path, out: Path, limits: Limits = Limits()) -> Path:
    """Pack the bot directory `src` into the .tar.gz `out` for upload, refusing (with unpack's
    messages) what the server would refuse: devices, sizes, counts. A symbolic link to a file
    inside `src` is packed as that file (node_modules/.bin holds such links), as the store's
    snapshots copy it; other links are refused. __pycache__, .git and .venv are left out.
    Returns `out`; on refusal nothing is left at `out`."""
    src, out = Path(src), Path(out)
    if not src.is_dir():
        raise SubmissionRefused(f"{src} is not a directory; give the bot's folder")
    budget = Budget(limits, limits.unpacked_bytes)
    try:
        with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as tf:
            for rel, path, st in bot_files(
                src, budget, links_inside=True, skip=SKIPPED_WHEN_PACKING
            ):
                if stat.S_ISDIR(st.st_mode) and path.is_symlink():
                    raise SubmissionRefused(
                        f"{rel} is a link to a folder ({os.readlink(path)}); an uploaded bot "
                        "holds no links: put the folder itself in the bot's folder"
                    )
                info = tarfile.TarInfo(rel.as_posix())
                info.mtime = int(st.st_mtime)
                info.mode = safe_mode(st.st_mode, stat.S_ISDIR(st.st_mode))
                if stat.S_ISDIR(st.st_mode):
                    info.type = tarfile.DIRTYPE
                    tf.addfile(info)
                    continue
                info.size = st.st_size
                with path.open("rb") as f:
                    tf.addfile(info, f)
        if budget.files == 0:
            raise SubmissionRefused(
                f"{src} holds no files; a bot's folder holds its arena-bot.toml and its code"
            )
        size = out.stat().st_size
        if size > limits.archive_bytes:
            raise SubmissionRefused(
                f"the archive is {size_text(size)}; the limit is "
                f"{size_text(limits.archive_bytes)}: leave data sets, virtual environments and "
                "build outputs out of the bot"
            )
        Budget(limits, limits.unpacked_budget(size), archive_bytes=size).add_bytes(
            None, budget.bytes
        )
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    return out


def content_digest(directory: Path) -> str:
    """sha256 over the bot's sorted relative paths, whether each is executable, and contents
    ("sha256:<hex>"): the same files give the same digest, whoever packed them and when."""
    directory = Path(directory)
    h = hashlib.sha256()
    entries = sorted(
        (path.relative_to(directory).as_posix(), path)
        for dirpath, dirnames, filenames in os.walk(directory, followlinks=False)
        for path in (Path(dirpath) / name for name in dirnames + filenames)
    )
    for rel, path in entries:
        st = path.lstat()
        if stat.S_ISDIR(st.st_mode):
            h.update(b"D\0" + rel.encode() + b"\0")
        elif stat.S_ISREG(st.st_mode):
            x = b"x" if st.st_mode & 0o111 else b"-"
            h.update(b"F\0" + rel.encode() + b"\0" + x + b"\0" + str(st.st_size).encode() + b"\0")
            with path.open("rb") as f:
                while chunk := f.read(_CHUNK):
                    h.update(chunk)
        else:
            raise ValueError(f"{path} is not a regular file or folder; a bot holds only those")
    return "sha256:" + h.hexdigest()
