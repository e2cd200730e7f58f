"""The owners' API in process (the app `arena serve` serves, over the store, without a server
or bots): owner keys (wrong, another bot's, rotated), the body's size cap, two uploads at once,
every hostile archive refused with the archive module's own message and nothing kept, and the
log excerpts shown to the owner only. Verification is not run here (tests/submissions/
test_submit_serve.py runs it for real): the versions it would verify are collected."""

from __future__ import annotations

import asyncio
import sqlite3
import tarfile
import uuid
from pathlib import Path

import httpx
import pytest

from arena.service.service import ArenaService, ServiceSettings
from arena.service.submissions import unpack_upload
from arena.service.webserver import WebServer
from arena.store import AsyncStore, Store
from arena.store.snapshots import snapshot_root
from arena.submissions.archive import Limits, SubmissionRefused, pack_directory
from tests.submissions import hostile
from tests.support.uploads import ADMIN, BOT_PY, bot_dir

INPUTS = "inputs"  # what the tests make to upload, beside the database


def packed(tmp: Path, marker: str) -> bytes:
    inputs = tmp / INPUTS
    inputs.mkdir(exist_ok=True)
    out = inputs / f"bot-{marker}.tar.gz"
    pack_directory(bot_dir(inputs / f"src-{marker}", marker), out)
    return out.read_bytes()


class App:
    """The service's web app over a fresh database, with two bots that have owner keys."""

    def __init__(self, tmp: Path, limits: Limits | None = None):
        self.tmp = tmp
        self.db = tmp / "arena.db"
        self.service = ArenaService(
            ServiceSettings(db=self.db, ladders=(), admin_key=ADMIN, upload_limits=limits)
        )
        self.verified: list[str] = []

    async def __aenter__(self) -> "App":
        self.service.store = await AsyncStore.open(self.db)
        self.service.verify_later = self.verified.append  # type: ignore[method-assign]
        app = WebServer(self.service).app  # uvicorn is not started: the app is called directly
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        self.keys = {name: await self.add_owner(name) for name in ("mine", "other")}
        return self

    async def __aexit__(self, *exc) -> None:
        await self.http.aclose()
        assert self.service.store is not None
        await self.service.store.close()

    async def add_owner(self, name: str) -> str:
        answer = await self.http.post(
            "/api/admin/bots", json={"name": name, "owner": True}, headers={"X-Admin-Key": ADMIN}
        )
        assert answer.status_code == 201, answer.text
        return answer.json()["owner_key"]

    async def upload(self, body, key: str | None = "mine", bot: str = "mine") -> httpx.Response:
        headers = {} if key is None else {"X-Owner-Key": self.keys.get(key, key)}
        return await self.http.post(f"/api/bots/{bot}/versions", content=body, headers=headers)

    def leftovers(self) -> list[Path]:
        """Files outside the bot store, and anything in it but versions' snapshots."""
        root = snapshot_root(self.db)
        out = [
            p
            for p in self.tmp.rglob("*")
            if p.is_file()
            and not p.is_relative_to(root)
            and not p.is_relative_to(self.tmp / INPUTS)
            and not p.name.startswith("arena.db")
        ]
        stray = [p for p in root.glob("*/.*")]  # upload and staging folders
        return out + stray


def run(coro):
    return asyncio.run(coro)


def message(answer: httpx.Response) -> str:
    return answer.json()["error"]["message"]


def test_owner_keys_wrong_another_bots_and_rotated_are_refused(tmp_path):
    async def main():
        async with App(tmp_path) as app:
            body = packed(tmp_path, "a")
            for key in (None, "arena_owner_wrong", "other"):
                answer = await app.upload(body, key=key)
                assert answer.status_code == 401
                assert "owner key" in message(answer) and "X-Owner-Key" in message(answer)
            old = app.keys["mine"]
            rotated = await app.http.post(
                "/api/admin/bots/mine/rotate-owner-key", headers={"X-Admin-Key": ADMIN}
            )
            assert rotated.status_code == 200
            app.keys["mine"] = rotated.json()["owner_key"]
            refused = await app.upload(body, key=old)
            assert refused.status_code == 401 and "rotated" in message(refused)
            answer = await app.upload(body)
            assert answer.status_code == 202, answer.text
            assert answer.json()["bot"] == "mine" and answer.json()["status"] == "verifying"
            assert app.verified == ["mine"]
            assert app.leftovers() == []

    run(main())


def hostile_archives(folder: Path) -> tuple[dict[str, Path], str]:
    folder.mkdir()
    escape = f"arena-escape-{uuid.uuid4().hex}"
    manifest = b'runtime = "python"\ncommand = ["bot.py"]\n'
    good = {"arena-bot.toml": manifest, "bot.py": BOT_PY.encode()}
    t = hostile.tar_member
    return {
        "zip slip": hostile.write_zip(folder / "slip.zip", {**good, f"../{escape}": b"x"}),
        "absolute path": hostile.write_zip(folder / "abs.zip", {**good, f"/tmp/{escape}": b"x"}),
        "link to /etc/passwd": hostile.write_tar(
            folder / "link.tar.gz", [t("passwd", kind=tarfile.SYMTYPE, linkname="/etc/passwd")]
        ),
        "hard link": hostile.write_tar(
            folder / "hard.tar.gz",
            [t("bot.py", b"x"), t("copy.py", kind=tarfile.LNKTYPE, linkname="bot.py")],
        ),
        "device": hostile.write_tar(folder / "dev.tar.gz", [t("null", kind=tarfile.CHRTYPE)]),
        "fifo": hostile.write_tar(folder / "fifo.tar.gz", [t("pipe", kind=tarfile.FIFOTYPE)]),
        "10 GB sparse file": hostile.sparse_tar(folder / "sparse.tar", 10 << 30),
        "zip bomb": hostile.zip_of_zeros(folder / "bomb.zip", 200),
        "tar.gz bomb": hostile.tar_gz_bomb(folder / "bomb.tar.gz", 200),
        "100k tiny files": hostile.many_files_tar_gz(folder / "many.tar.gz", 100_000),
        "not an archive": _write(folder / "notes.txt", b"just some text\n" * 10),
        "empty archive": hostile.write_tar(folder / "empty.tar.gz", []),
        "no manifest": hostile.write_zip(folder / "nomanifest.zip", {"bot.py": b"x"}),
        "unknown runtime": hostile.write_zip(
            folder / "ruby.zip", {"arena-bot.toml": b'runtime = "ruby"\ncommand = ["bot.rb"]\n'}
        ),
        "invalid manifest": hostile.write_zip(
            folder / "bad.zip", {"arena-bot.toml": b"runtime = python\n", "bot.py": b"x"}
        ),
    }, escape


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_hostile_archives_are_refused_with_the_archive_modules_message(tmp_path):
    archives, escape = hostile_archives(tmp_path / INPUTS)

    async def main():
        async with App(tmp_path) as app:
            for what, archive in archives.items():
                probe = tmp_path / INPUTS / f"probe-{uuid.uuid4().hex}"
                probe.mkdir()
                as_received = probe / "upload"  # the name the server gives the body
                as_received.write_bytes(archive.read_bytes())
                with pytest.raises(SubmissionRefused) as refused:
                    unpack_upload(as_received, probe / "bot", Limits())
                answer = await app.upload(archive.read_bytes())
                assert answer.status_code == 422, (what, answer.text)
                assert message(answer) == str(refused.value), what
                assert app.leftovers() == [], what
            # The server is up and takes a good upload; nothing of the refused ones was kept.
            good = await app.upload(packed(tmp_path, "good"))
            assert good.status_code == 202 and good.json()["version"] == 1
            assert app.leftovers() == []

    run(main())
    assert not (tmp_path.parent / escape).exists() and not Path("/tmp", escape).exists()


def test_an_oversized_body_is_refused_before_it_is_read_whole(tmp_path):
    limits = Limits(archive_bytes=64 << 10)
    big = bytes(200 << 10)

    async def chunks():
        for i in range(0, len(big), 16 << 10):
            yield big[i : i + 16 << 10]

    async def main():
        async with App(tmp_path, limits) as app:
            declared = await app.upload(big)  # Content-Length says it: refused before reading
            assert declared.status_code == 413
            assert "an archive is at most 64 KB" in message(declared)
            streamed = await app.upload(chunks())  # no Content-Length: cut off at the cap
            assert streamed.status_code == 413 and "over" in message(streamed)
            assert app.leftovers() == [] and app.verified == []

    run(main())


def test_two_uploads_at_once_become_two_versions_and_a_twin_is_refused(tmp_path):
    a, b = packed(tmp_path, "a"), packed(tmp_path, "b")

    async def main():
        async with App(tmp_path) as app:
            first, second = await asyncio.gather(app.upload(a), app.upload(b))
            assert {first.status_code, second.status_code} == {202}
            assert sorted([first.json()["version"], second.json()["version"]]) == [1, 2]
            twins = await asyncio.gather(app.upload(a), app.upload(packed(tmp_path, "c")))
            assert sorted(t.status_code for t in twins) == [202, 409]
            assert "identical to version" in message(next(t for t in twins if t.status_code == 409))
            with Store(app.db, readonly=True) as store:
                versions = store.versions("mine")
            assert [v.version for v in versions] == [1, 2, 3]
            for v in versions:  # each a whole snapshot of its own upload
                assert (Path(v.directory) / "bot.py").read_text().startswith(BOT_PY)
            assert sorted(app.verified) == ["mine", "mine@2", "mine@3"]
            assert app.leftovers() == []
            # Both pass; the owner rolls back to version 1 (a version still verifying: no).
            for name in ("mine", "mine@2"):
                await app.service.store.run(Store.record_verification, name, True, "passed")
            owner = {"X-Owner-Key": app.keys["mine"]}
            refused = await app.http.post(
                "/api/bots/mine/rollback", json={"version": 3}, headers=owner
            )
            assert refused.status_code == 409 and "is verifying" in message(refused)
            back = await app.http.post(
                "/api/bots/mine/rollback", json={"version": 1}, headers=owner
            )
            assert back.status_code == 200 and back.json()["status"] == "active"
            with Store(app.db, readonly=True) as store:
                assert store.resolve_bot("mine").name == "mine"
                assert store.get_bot("mine@2").status == "retired"

    run(main())


def test_log_excerpts_are_shown_to_the_owner_only(tmp_path):
    secret = "SECRET-LOG-LINE-" + uuid.uuid4().hex

    async def main():
        async with App(tmp_path) as app:
            assert (await app.upload(packed(tmp_path, "a"))).status_code == 202
            store = app.service.store
            assert store is not None
            status = await store.run(
                Store.record_verification, "mine", False, "failed: crash", f"boom\n{secret}\n"
            )
            assert status == "failed"
            for url in ("/bots/mine", "/api/bots/mine", "/api/bots", "/bots"):
                page = await app.http.get(url)
                assert page.status_code == 200 and secret not in page.text, url
            assert 'id="owner"' in (await app.http.get("/bots/mine")).text  # the key form
            for path in ("/owner", "/versions/1"):
                for key in (None, "arena_owner_wrong", app.keys["other"]):
                    headers = {"X-Owner-Key": key} if key else {}
                    answer = await app.http.get(f"/api/bots/mine{path}", headers=headers)
                    assert answer.status_code == 401 and secret not in answer.text
                mine = await app.http.get(
                    f"/api/bots/mine{path}", headers={"X-Owner-Key": app.keys["mine"]}
                )
                assert mine.status_code == 200 and secret in mine.text
            version = mine.json()
            assert (version["status"], version["verdict"]) == ("failed", "failed: crash")
            assert version["verification_match"] is None  # no match played: no replay offered

    run(main())


def test_two_uploads_at_once_for_the_last_allowed_one_take_it_once(tmp_path):
    async def main():
        async with App(tmp_path) as app:
            app.service.uploads_per_day = 2
            assert (await app.upload(packed(tmp_path, "a"))).status_code == 202
            both = await asyncio.gather(
                app.upload(packed(tmp_path, "b")), app.upload(packed(tmp_path, "c"))
            )
            assert sorted(a.status_code for a in both) == [202, 429]
            late = next(a for a in both if a.status_code == 429)
            assert "has had 2 uploads in the last 24 hours" in message(late)
            assert 0 < int(late.headers["Retry-After"]) <= 24 * 3600
            with Store(app.db, readonly=True) as store:
                assert [v.version for v in store.versions("mine")] == [1, 2]
            assert app.leftovers() == []
            # Uploads older than 24 hours no longer count: the oldest leaves the window.
            con = sqlite3.connect(app.db)
            with con:  # version 1 made a day and a second ago
                con.execute("UPDATE submissions SET submitted = submitted - 86401 WHERE version=1")
            con.close()
            assert (await app.upload(packed(tmp_path, "d"))).status_code == 202
            refused = await app.upload(packed(tmp_path, "e"))
            assert refused.status_code == 429 and "has had 2 uploads" in message(refused)

    run(main())
