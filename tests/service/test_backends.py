"""The service's routers run over the narrow backends of arena/service/backends.py, not the
whole ArenaService: here each router is given a small object of the test's own (just the
members its Protocol names) over a real store, and does its work through it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from fastapi import FastAPI

from arena.runtimes import Runtimes
from arena.service.backends import AdminBackend, UploadBackend
from arena.service.submissions import submissions_router
from arena.service.webserver import admin_router
from arena.store import AsyncStore, Store
from arena.submissions.archive import Limits, pack_directory

KEY = "admin-key-for-the-backend-test"


@dataclass
class Admin:
    store: AsyncStore | None
    admin_key: str | None = KEY
    checks: int = 0

    async def check_access(self) -> None:
        self.checks += 1


@dataclass
class Uploads:
    store: AsyncStore | None
    db: Path
    uploads_per_day: int = 5
    upload_limits: Limits = Limits()
    verifying: list[str] = field(default_factory=list)
    runtimes: Runtimes = field(default_factory=Runtimes)

    def verify_later(self, name: str) -> None:
        self.verifying.append(name)

    async def upload_terms(self, family: str) -> int:
        return self.uploads_per_day


def client(*routers) -> httpx.AsyncClient:
    app = FastAPI()
    for router in routers:
        app.include_router(router)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


def test_the_admin_api_runs_over_its_backend_alone(tmp_path):
    async def main():
        async with await AsyncStore.open(tmp_path / "arena.db") as store:
            admin = Admin(store)
            backend: AdminBackend = admin
            async with client(admin_router(backend)) as http:
                said = await http.post("/api/admin/bots", json={"name": "a", "remote": True})
                assert said.status_code == 401  # no key given
                headers = {"X-Admin-Key": KEY}
                said = await http.post(
                    "/api/admin/bots", json={"name": "a", "remote": True}, headers=headers
                )
                assert said.status_code == 201 and said.json()["token"]
                said = await http.post(
                    "/api/admin/bots/a/suspend", json={"reason": "tested"}, headers=headers
                )
                assert said.status_code == 200 and admin.checks == 1
                assert (await store.run(Store.get_bot, "a")).suspended
                admin.admin_key = None  # the backend's key is read at each request
                said = await http.post("/api/admin/bots/a/reinstate", headers=headers)
                assert said.status_code == 403 and "disabled" in said.text

    asyncio.run(main())


def test_the_owners_api_runs_over_its_backend_alone(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "arena-bot.toml").write_text('runtime = "python"\ncommand = ["bot.py"]\n')
    (source / "bot.py").write_text("from arena_sdk import Bot, run\n")
    archive = pack_directory(source, tmp_path / "bot.tar.gz").read_bytes()

    async def main():
        db = tmp_path / "arena.db"
        async with await AsyncStore.open(db) as store:
            uploads = Uploads(store, db)
            backend: UploadBackend = uploads
            key = await store.run(Store.new_owner_key, "mine")
            async with client(submissions_router(backend)) as http:
                said = await http.post(
                    "/api/bots/mine/versions", content=archive, headers={"X-Owner-Key": key}
                )
                assert said.status_code == 202, said.text
                assert uploads.verifying == ["mine"]  # handed to the backend's verification
                uploads.store = None  # the service stopping: the router says so
                said = await http.get("/api/bots/mine/owner", headers={"X-Owner-Key": key})
                assert said.status_code == 503

    asyncio.run(main())
