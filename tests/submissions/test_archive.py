"""arena.submissions.archive: uploaded archives unpacked safely (every hostile case refused with
its message, nothing kept of it, nothing written outside), directories packed for upload, and
the content digest."""

from __future__ import annotations

import bz2
import os
import stat
import tarfile
from pathlib import Path

import pytest

from arena.submissions.archive import (
    Limits,
    SubmissionRefused,
    content_digest,
    pack_directory,
    unpack,
)

from .hostile import (
    many_files_tar_gz,
    sparse_tar,
    tar_gz_bomb,
    tar_gz_long_name,
    tar_member,
    write_tar,
    write_zip,
    zip_of_zeros,
)

BOT = b"print('hello')\n"


def tree(root: Path) -> set[Path]:
    return set(root.rglob("*"))


def refused(archive: Path, tmp_path: Path, match: str, limits: Limits | None = None) -> None:
    """unpack refuses `archive` saying `match`; its destination is gone and nothing else under
    tmp_path was added or removed."""
    dest = tmp_path / "unpacked" / "bot"
    dest.parent.mkdir(exist_ok=True)
    before = tree(tmp_path)
    with pytest.raises(SubmissionRefused, match=match):
        unpack(archive, dest, limits or Limits())
    assert not dest.exists()
    assert tree(tmp_path) == before


# ------------------------------------------------------------------------------- good archives


def test_a_tar_gz_unpacks_with_safe_modes_and_its_digest(tmp_path):
    archive = write_tar(
        tmp_path / "bot.tgz",  # a name says nothing: the content decides
        [
            tar_member("./", kind=tarfile.DIRTYPE, mode=0o777),
            tar_member("./bot.py", BOT, mode=0o4777),  # setuid, world-writable, executable
            tar_member("./data/table.txt", b"1 2 3\n", mode=0o666),
            tar_member("./empty", kind=tarfile.DIRTYPE, mode=0o700),
        ],
    )
    umask = os.umask(0o077)  # a server's strict umask: the sandbox's user still reads the bot
    try:
        bot = unpack(archive, tmp_path / "bot")
    finally:
        os.umask(umask)
    assert (bot.format, bot.files, bot.unpacked_bytes) == ("tar.gz", 2, len(BOT) + 6)
    assert stat.S_IMODE(bot.directory.stat().st_mode) == 0o755
    assert bot.archive_bytes == archive.stat().st_size
    assert (bot.directory / "bot.py").read_bytes() == BOT
    assert (bot.directory / "data" / "table.txt").read_bytes() == b"1 2 3\n"
    modes = {
        p.relative_to(bot.directory).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in bot.directory.rglob("*")
    }
    assert modes == {"bot.py": 0o755, "data": 0o755, "data/table.txt": 0o644, "empty": 0o755}
    assert bot.digest == content_digest(bot.directory)


def test_a_zip_in_a_wrapper_folder_unpacks_as_its_contents_with_the_same_digest(tmp_path):
    zipped = write_zip(
        tmp_path / "upload.bin",
        {
            "mybot/": b"",
            "mybot/bot.py": BOT,
            "mybot/lib/util.py": b"X = 1\n",
            "__MACOSX/mybot/._bot.py": b"\0\5\26\7",  # what macOS's zip adds: left out
        },
        modes={"mybot/bot.py": stat.S_IFREG | 0o755, "mybot/lib/util.py": stat.S_IFREG | 0o644},
    )
    tarred = write_tar(
        tmp_path / "plain.tar",
        [tar_member("bot.py", BOT, mode=0o700), tar_member("lib/util.py", b"X = 1\n")],
        gz=False,
    )
    from_zip = unpack(zipped, tmp_path / "a")
    from_tar = unpack(tarred, tmp_path / "b")
    assert (from_zip.format, from_tar.format) == ("zip", "tar")
    assert sorted(p.name for p in from_zip.directory.iterdir()) == ["bot.py", "lib"]
    assert os.access(from_zip.directory / "bot.py", os.X_OK)  # the executable bit is kept
    assert not os.access(from_zip.directory / "lib" / "util.py", os.X_OK)
    assert from_zip.digest == from_tar.digest  # same files, whatever the archive


def test_the_digest_follows_names_contents_and_the_executable_bit_only(tmp_path):
    bot = tmp_path / "bot"
    (bot / "lib").mkdir(parents=True)
    (bot / "bot.py").write_bytes(BOT)
    (bot / "lib" / "a.py").write_bytes(b"A = 1\n")
    first = content_digest(bot)
    os.utime(bot / "bot.py", (0, 0))
    assert content_digest(bot) == first
    (bot / "bot.py").chmod(0o755)
    executable = content_digest(bot)
    assert executable != first
    (bot / "lib" / "a.py").write_bytes(b"A = 2\n")
    assert content_digest(bot) not in (first, executable)
    (bot / "lib" / "a.py").rename(bot / "lib" / "b.py")
    assert content_digest(bot).startswith("sha256:")
    assert len({first, executable, content_digest(bot)}) == 3


def test_pack_directory_leaves_out_caches_and_unpacks_back(tmp_path):
    src = tmp_path / "mybot"
    for folder in ("__pycache__", ".git/objects", ".venv/bin", "lib"):
        (src / folder).mkdir(parents=True)
    (src / "bot.py").write_bytes(BOT)
    (src / "bot.py").chmod(0o755)
    (src / "lib" / "util.py").write_bytes(b"X = 1\n")
    (src / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0" * 10)
    (src / ".git" / "objects" / "ab").write_bytes(b"blob")
    (src / ".venv" / "bin" / "python").write_bytes(b"#!")
    (src / "run.py").symlink_to("bot.py")  # a link inside: packed as the file (node_modules/.bin)
    archive = pack_directory(src, tmp_path / "mybot.tar.gz")
    bot = unpack(archive, tmp_path / "unpacked")
    assert sorted(p.relative_to(bot.directory).as_posix() for p in bot.directory.rglob("*")) == [
        "bot.py",
        "lib",
        "lib/util.py",
        "run.py",
    ]
    assert not (bot.directory / "run.py").is_symlink()
    assert (bot.directory / "run.py").read_bytes() == BOT
    assert os.access(bot.directory / "bot.py", os.X_OK)
    assert (bot.directory / "lib" / "util.py").read_bytes() == b"X = 1\n"


def test_the_destination_must_not_exist_and_is_left_alone(tmp_path):
    archive = write_tar(tmp_path / "bot.tgz", [tar_member("bot.py", BOT)])
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep")
    with pytest.raises(FileExistsError):
        unpack(archive, dest)
    assert (dest / "mine.txt").read_text() == "keep"


# ---------------------------------------------------------------------------- hostile archives


@pytest.mark.parametrize(
    "name, said",
    [
        ("../evil", "'..' component, which leads out of the bot's folder"),
        ("lib/../../evil", "'..' component"),
        ("ABSOLUTE", "is an absolute path; every file of a bot is inside its folder"),
    ],
)
@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_zip_slip_is_refused_and_nothing_is_written_outside(tmp_path, name, said, kind):
    name = name.replace("ABSOLUTE", str(tmp_path / "abs-evil"))
    if kind == "zip":
        archive = write_zip(tmp_path / "slip", {"bot.py": BOT, name: b"owned"})
    else:
        archive = write_tar(tmp_path / "slip", [tar_member("bot.py", BOT), tar_member(name, b"x")])
    refused(archive, tmp_path, said)
    assert not (tmp_path / "abs-evil").exists() and not (tmp_path / "evil").exists()


@pytest.mark.parametrize(
    "member, said",
    [
        (
            tar_member("passwd", kind=tarfile.SYMTYPE, linkname="/etc/passwd"),
            "passwd is a link to /etc/passwd; a bot holds files and folders only",
        ),
        (
            tar_member("again.py", kind=tarfile.LNKTYPE, linkname="bot.py"),
            "again.py is a link to bot.py; a bot holds files and folders only",
        ),
        (tar_member("tty", kind=tarfile.CHRTYPE), "tty is a device file, not a regular file"),
        (tar_member("disk", kind=tarfile.BLKTYPE), "disk is a device file"),
        (tar_member("pipe", kind=tarfile.FIFOTYPE), r"pipe is a named pipe \(fifo\)"),
    ],
    ids=["symlink", "hardlink", "chardev", "blockdev", "fifo"],
)
def test_links_devices_and_fifos_in_a_tar_are_refused(tmp_path, member, said):
    archive = write_tar(tmp_path / "bot.tgz", [tar_member("bot.py", BOT), member])
    refused(archive, tmp_path, said)


def test_links_and_devices_in_a_zip_are_refused(tmp_path):
    link = write_zip(
        tmp_path / "link.zip",
        {"bot.py": BOT, "passwd": b"/etc/passwd"},
        modes={"passwd": stat.S_IFLNK | 0o777},
    )
    refused(link, tmp_path, "passwd is a link; a bot holds files and folders only")
    device = write_zip(
        tmp_path / "dev.zip", {"bot.py": BOT, "tty": b""}, modes={"tty": stat.S_IFCHR | 0o600}
    )
    refused(device, tmp_path, "tty is a device file")


def test_a_10_gb_sparse_file_is_refused_by_its_header_before_anything_is_written(tmp_path):
    archive = sparse_tar(tmp_path / "sparse.tar", 10 << 30)
    refused(archive, tmp_path, "huge.bin is 10 GB; a file of a bot version is at most 50 MB")


@pytest.mark.parametrize("build", [zip_of_zeros, tar_gz_bomb], ids=["zip", "tar.gz"])
def test_a_bomb_of_zeros_is_refused_by_its_header_before_anything_is_written(tmp_path, build):
    archive = build(tmp_path / "bomb", 200)
    assert archive.stat().st_size < 250_000
    refused(archive, tmp_path, "zeros.bin is 200 MB; a file of a bot version is at most 50 MB")
    smaller = build(tmp_path / "smaller", 40)  # each file under the limit: the ratio refuses
    said = r"the archive expands more than 100 times \(from 4\d KB to over \d MB at zeros.bin\)"
    refused(smaller, tmp_path, said + ", as a zip bomb does")


def test_a_zip_whose_header_understates_its_member_is_refused_as_damaged(tmp_path):
    # zipfile reads no more than the declared size: the member's check fails at that point.
    archive = zip_of_zeros(tmp_path / "liar.zip", 200, declared_size=1000)
    refused(archive, tmp_path, "damaged or truncated .*CRC")


def test_a_sparse_member_counts_at_its_full_size_and_unpacks_with_its_holes(tmp_path):
    archive = sparse_tar(tmp_path / "sparse.tar", 4096)
    refused(archive, tmp_path, "huge.bin is 4 KB; a file of a bot version is at most 2 KB",
            Limits(file_bytes=2048))  # fmt: skip
    bot = unpack(archive, tmp_path / "ok")
    assert (bot.directory / "huge.bin").read_bytes() == bytes(3584) + b"x" * 512


def test_a_zip_compressed_in_a_way_zipfile_cannot_read_is_refused(tmp_path):
    archive = zip_of_zeros(tmp_path / "odd.zip", 1, method=99)  # 99: AES encryption
    refused(archive, tmp_path, "the archive uses what Arena cannot read")


def test_a_huge_header_is_refused_before_it_is_read_into_memory(tmp_path):
    archive = tar_gz_long_name(tmp_path / "long.tgz", 50)
    refused(archive, tmp_path, "unpacks to more than .* of files and headers")


def test_100k_tiny_files_are_refused_at_the_limit(tmp_path):
    archive = many_files_tar_gz(tmp_path / "many.tgz", 100_000)
    refused(archive, tmp_path, "more than 2000 files .*remove build outputs")
    zipped = write_zip(tmp_path / "many.zip", {f"f{k}": b"" for k in range(6)})
    refused(zipped, tmp_path, r"holds 6 files \(and 0 folders\); the limit is 5 files",
            Limits(files=5))  # fmt: skip


@pytest.mark.parametrize(
    "content",
    [b"", b"#!/bin/sh\necho not an archive\n", bz2.compress(b"x" * 2000)],
    ids=["empty-file", "text", "bzip2"],
)
def test_what_is_not_an_archive_is_refused_naming_the_formats(tmp_path, content):
    archive = tmp_path / "bot.tar.gz"
    archive.write_bytes(content)
    said = r"not an archive Arena accepts \(whatever its name says\); give a .tar.gz \(or .tgz\)"
    refused(archive, tmp_path, said + ", a .tar or a .zip of the bot's folder")


def test_empty_archives_and_damaged_ones_are_refused(tmp_path):
    said = "the archive holds no files"
    refused(write_tar(tmp_path / "empty.tgz", []), tmp_path, said)
    refused(write_tar(tmp_path / "empty.tar", [], gz=False), tmp_path, said)
    refused(write_zip(tmp_path / "empty.zip", {}), tmp_path, said)
    folders = [tar_member("a", kind=tarfile.DIRTYPE), tar_member("a/b", kind=tarfile.DIRTYPE)]
    refused(write_tar(tmp_path / "folders.tgz", folders), tmp_path, said)
    whole = write_tar(tmp_path / "whole.tgz", [tar_member("bot.py", os.urandom(50_000))])
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(whole.read_bytes()[:20_000])
    refused(cut, tmp_path, "the archive is damaged or truncated")


def test_duplicates_and_names_both_file_and_folder_are_refused(tmp_path):
    twice = write_tar(tmp_path / "twice.tgz", [tar_member("bot.py", BOT), tar_member("bot.py")])
    refused(twice, tmp_path, "bot.py appears twice in the archive")
    both = write_tar(tmp_path / "both.tgz", [tar_member("lib", BOT), tar_member("lib/x.py", BOT)])
    refused(both, tmp_path, "lib is both a file and a folder")


def test_size_count_and_path_limits(tmp_path):
    archive = write_tar(
        tmp_path / "bot.tar",
        [tar_member("a.py", b"a" * 600), tar_member("b.py", b"b" * 600)],
        gz=False,
    )
    refused(archive, tmp_path, r"the archive is \d+ KB; the limit is 100 bytes",
            Limits(archive_bytes=100))  # fmt: skip
    refused(archive, tmp_path, "the bot's files add up to more than 1000 bytes .*passed at b.py",
            Limits(unpacked_bytes=1000))  # fmt: skip
    deep = write_tar(tmp_path / "deep.tgz", [tar_member("a/b/c/d.py", BOT)])
    refused(deep, tmp_path, "is 4 folders deep; the limit is 3", Limits(depth=3))
    refused(deep, tmp_path, "is a path of 10 characters; the limit is 8", Limits(path_chars=8))


def test_names_longer_than_the_file_system_takes_in_bytes_are_refused(tmp_path, monkeypatch):
    # 200 characters pass the path limit (255 characters), but take 400 bytes in UTF-8.
    for i, name in enumerate(["é" * 200, f"lib/{'名' * 86}/x.py", f"{'é' * 128}.py"]):
        members = [tar_member("bot.py", BOT), tar_member(name)]
        archive = write_tar(tmp_path / f"long-{i}.tgz", members)
        refused(archive, tmp_path, r"has a name of \d+ bytes .*; a file or folder name is at "
                r"most 255 bytes in UTF-8 .*: use a shorter name")  # fmt: skip
    fits = write_tar(tmp_path / "fits.tgz", [tar_member("é" * 127 + "x", BOT)])  # 255 bytes
    assert unpack(fits, tmp_path / "fits").files == 1
    # A file system whose own limit is lower: its ENAMETOOLONG is a refusal too, not an error.
    monkeypatch.setattr("arena.submissions.archive.NAME_MAX", 1000)
    long_one = write_tar(tmp_path / "long.tgz", [tar_member("é" * 200, BOT)])
    refused(long_one, tmp_path, "is a name too long for the server's file system")
    folder = write_tar(tmp_path / "long-dir.tgz", [tar_member("é" * 200, kind=tarfile.DIRTYPE)])
    refused(folder, tmp_path, "is a name too long for the server's file system")


def test_a_name_that_is_not_utf8_is_refused(tmp_path):
    archive = tmp_path / "latin1.tar"
    with tarfile.open(archive, "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tf:
        info = tarfile.TarInfo("caf\xe9.py")
        tf.addfile(info)
    refused(archive, tmp_path, r"is not a UTF-8 name; a bot's file names are UTF-8")


# ----------------------------------------------------------------------- packing refuses alike


def test_pack_directory_refuses_links_fifos_and_sizes_and_leaves_no_archive(tmp_path):
    src = tmp_path / "mybot"
    src.mkdir()
    (src / "bot.py").write_bytes(BOT)
    out = tmp_path / "out.tar.gz"
    (src / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(
        SubmissionRefused, match="passwd is a symbolic link to /etc/passwd, outside the bot"
    ):
        pack_directory(src, out)
    (src / "passwd").unlink()
    (src / "lib").mkdir()
    (src / "lib.link").symlink_to("lib")
    with pytest.raises(SubmissionRefused, match=r"lib.link is a link to a folder \(lib\)"):
        pack_directory(src, out)
    (src / "lib.link").unlink()
    os.mkfifo(src / "pipe")
    with pytest.raises(SubmissionRefused, match=r"pipe is a named pipe \(fifo\)"):
        pack_directory(src, out)
    (src / "pipe").unlink()
    with pytest.raises(SubmissionRefused, match="bot.py is 15 bytes; .* at most 10 bytes"):
        pack_directory(src, out, Limits(file_bytes=10))
    (src / "more.py").write_bytes(BOT)
    with pytest.raises(SubmissionRefused, match="more than 1 files"):
        pack_directory(src, out, Limits(files=1))
    (src / "zeros.bin").write_bytes(bytes(2 << 20))
    with pytest.raises(SubmissionRefused, match=r"expands more than 100 times \(from \d+ KB to "
                       r"over 1 MB\), as a zip bomb does"):  # fmt: skip
        pack_directory(src, out)
    assert not out.exists()
