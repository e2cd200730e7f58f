"""Pure-Python wheels made at test time (no build backend, no network): a package folder
zipped with the dist-info a wheel needs (METADATA, WHEEL, RECORD), as pip wheel would."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def make_wheel(package: Path, out_dir: Path, name: str, version: str) -> Path:
    """Write `name`-`version`-py3-none-any.whl into `out_dir` holding the package folder
    `package` (its .py files); return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{package.name}/{p.relative_to(package).as_posix()}": p.read_bytes()
        for p in sorted(package.rglob("*.py"))
    }
    files[f"{dist_info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    ).encode()
    files[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: arena-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files.items())
    files[f"{dist_info}/RECORD"] = (record + f"{dist_info}/RECORD,,\n").encode()
    wheel = out_dir / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():  # a fixed date: the same files, the same wheel
            zf.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return wheel
