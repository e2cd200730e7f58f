"""Bots submitted over HTTP: the owner's API. An upload (the archive as the request's body,
its size capped while it is read) is unpacked by arena.submissions into a folder of its own
inside the bot store, checked (its arena-bot.toml), made the bot's next version by the
registry (Store.update_bot: a content-addressed snapshot, status "verifying") and handed to the
service's verification (verification.py). The owner reads each version's verdict, with its log
excerpt, and rolls back to an earlier version that passed. Every route checks the owner key
(owners.py); nothing here is shown to anyone else.

Two uploads for one bot at once are serialised by the store's writer: each becomes a version of
its own (N and N+1), each verified on its own; an upload identical to a version the bot has
(same digest) is refused with 409. A bot takes at most `arena serve --uploads-per-day`
uploads in 24 hours (arena.store.quotas); past that, 429 with Retry-After, its body read and
dropped unwritten, and nothing is kept."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from pydantic import BaseModel, Field

from arena.botcommand import BadManifest, read_manifest
from arena.runtimes import Runtimes, find_preparation
from arena.store import (
    AsyncStore,
    DuplicateBot,
    Store,
    StoreError,
    UnknownBot,
    UploadLimitReached,
    UploadsClosed,
    version_name,
)
from arena.store.browse import BrowseQueries
from arena.store.registry import VERIFYING
from arena.store.snapshots import snapshot_root
from arena.submissions.archive import Limits, SubmissionRefused, size_text, unpack

from .backends import UploadBackend
from .owners import owned, running_store


class UploadedVersion(BaseModel):
    bot: str = Field(description="The version's bot row: NAME for version 1, NAME@N after.")
    family: str
    version: int
    status: str = Field(description="verifying, failed, active or retired")
    digest: str = Field(description="sha256 of the unpacked files (content_digest)")


class Rollback(BaseModel):
    version: int = Field(ge=1, description="An earlier version that passed its verification.")


async def receive_body(request: Request, out: Path, limit: int) -> int:
    """Write the request's body to `out`, refusing (413) as soon as it passes `limit` bytes,
    before it is read whole (a Content-Length over it is refused before reading anything)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, _too_big(int(declared), limit))
    size = 0
    with out.open("wb") as f:  # noqa: ASYNC230 (a local file: each write is a chunk, instant)
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPException(413, _too_big(size, limit, at_least=True))
            f.write(chunk)
    if size == 0:
        raise HTTPException(
            400, "the request has no body: send the bot's archive (.tar.gz or .zip) as the body"
        )
    return size


async def discard_body(request: Request, limit: int) -> None:
    """Read the request's body (up to `limit` bytes) and drop it: a client that sends its whole
    body before reading the answer (urllib, so `arena submit`) then reads the answer, where an
    answer sent mid-body would reach it as a reset connection."""
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            break


def too_many(err: UploadLimitReached) -> HTTPException:
    """429 for an upload past the bot's limit: when the next may be, in words and Retry-After."""
    return HTTPException(429, str(err), headers={"Retry-After": str(err.retry_after_s())})


def _too_big(size: int, limit: int, at_least: bool = False) -> str:
    return (
        f"the upload is {'over ' if at_least else ''}{size_text(size)}; an archive is at most "
        f"{size_text(limit)}: leave build outputs, data sets and virtual environments out"
    )


def unpack_upload(
    archive: Path, dest: Path, limits: Limits, runtimes: Runtimes | None = None
) -> str:
    """Unpack and check an upload (in a worker thread): its digest, or SubmissionRefused saying
    what is wrong with the archive or its arena-bot.toml (a runtime this server lacks too)."""
    unpacked = unpack(archive, dest, limits)
    try:  # refused now, with its message, rather than by the registry's copy
        read_manifest(dest, upload=True, runtimes=runtimes)
    except BadManifest as exc:
        raise SubmissionRefused(str(exc)) from exc
    return unpacked.digest


def runtimes_router(service: UploadBackend) -> APIRouter:
    """GET /api/runtimes: the runtimes an upload may name, as `arena runtime list` shows them
    (public: what a bot's author needs before writing its arena-bot.toml)."""
    router = APIRouter(prefix="/api/runtimes", tags=["owners"])
    listed = [r.listing() for r in service.runtimes.by_name.values()]

    @router.get("")
    def runtimes() -> list[dict[str, Any]]:
        return listed

    return router


def submissions_router(service: UploadBackend) -> APIRouter:
    router = APIRouter(prefix="/api/bots", tags=["owners"])

    def store() -> AsyncStore:
        return running_store(service)

    async def owner(name: str, key: str | None) -> str:
        return await owned(service, name, key)

    @router.post("/{name}/versions", status_code=202, response_model=UploadedVersion)
    async def upload(
        request: Request,
        name: str,
        note: str | None = Query(None, max_length=500),
        x_owner_key: str | None = Header(None),
    ) -> UploadedVersion:
        """Submit a new version of the bot: its archive (.tar.gz, .tar or .zip with an
        arena-bot.toml) as the body, the owner key in X-Owner-Key. It is verified before it
        plays: poll GET /api/bots/{name}/versions/{version} for the verdict."""
        if "@" in name:
            raise HTTPException(
                400, f"submit to the bot, {name.partition('@')[0]!r}, not to a version"
            )
        family = await owner(name, x_owner_key)
        limits = service.upload_limits
        try:  # a competition's terms (docs/competitions.md)
            per_day = await service.upload_terms(family)
        except UploadsClosed as err:
            await discard_body(request, limits.archive_bytes)
            raise HTTPException(403, str(err)) from None
        try:  # before anything is written
            await store().run(Store.check_upload_allowed, family, per_day)
        except UploadLimitReached as err:
            await discard_body(request, limits.archive_bytes)
            raise too_many(err) from None
        root = snapshot_root(service.db) / family
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".upload-", dir=root))
        try:
            await receive_body(request, work / "upload", limits.archive_bytes)
            bot_dir = work / "bot"
            try:
                digest = await asyncio.to_thread(
                    unpack_upload, work / "upload", bot_dir, limits, service.runtimes
                )
            except SubmissionRefused as err:
                raise HTTPException(422, str(err)) from None
            try:
                bot, _ = await store().run(
                    Store.update_bot,
                    family,
                    directory=bot_dir,
                    note=note,
                    status=VERIFYING,
                    digest=digest,
                    uploads_per_day=per_day,  # checked again: two uploads at once
                )
            except UploadLimitReached as err:
                raise too_many(err) from None
            except DuplicateBot as err:
                raise HTTPException(409, str(err)) from None
            except UnknownBot as err:
                raise HTTPException(404, str(err)) from None
            except StoreError as err:
                raise HTTPException(422, str(err)) from None
        finally:
            await asyncio.to_thread(shutil.rmtree, work, True)
        service.verify_later(bot.name)
        return UploadedVersion(
            bot=bot.name, family=family, version=bot.version, status=bot.status, digest=digest
        )

    @router.get("/{name}/owner")
    async def owner_view(name: str, x_owner_key: str | None = Header(None)) -> dict[str, Any]:
        """The author's view: every version's status, verification verdict with its log
        excerpt, verification match and ratings. Owner key only."""
        family = await owner(name, x_owner_key)
        return await store().run(author_view, family)

    @router.get("/{name}/versions/{version}")
    async def version_view(
        name: str, version: int, x_owner_key: str | None = Header(None)
    ) -> dict[str, Any]:
        """One version's status and verdict (with its log excerpt). Owner key only."""
        family = await owner(name, x_owner_key)
        for v in (await store().run(author_view, family))["versions"]:
            if v["version"] == version:
                return v
        raise HTTPException(404, f"bot {family!r} has no version {version}")

    @router.get("/{name}/versions/{version}/verification")
    async def verification_match(
        name: str, version: int, x_owner_key: str | None = Header(None)
    ) -> dict[str, Any]:
        """The replay of the version's verification match. Owner key only."""
        family = await owner(name, x_owner_key)
        replay = await store().run(Store.verification_replay, version_name(family, version))
        if replay is None:
            raise HTTPException(404, f"version {version} of {family!r} has no verification match")
        return replay

    @router.post("/{name}/rollback", response_model=UploadedVersion)
    async def rollback(
        name: str, body: Rollback, x_owner_key: str | None = Header(None)
    ) -> UploadedVersion:
        """Make an earlier version that passed the one the ladders play again."""
        family = await owner(name, x_owner_key)
        try:
            bot = await store().run(rollback_to, family, body.version)
        except UnknownBot as err:
            raise HTTPException(404, str(err)) from None
        except StoreError as err:
            raise HTTPException(409, str(err)) from None
        return UploadedVersion(
            bot=bot["bot"],
            family=family,
            version=bot["version"],
            status=bot["status"],
            digest=bot["digest"] or "",
        )

    return router


def rollback_to(store: Store, family: str, version: int) -> dict[str, Any]:
    """Store.rollback, and the version as author_view shows it."""
    store.rollback(family, version)
    return next(v for v in author_view(store, family)["versions"] if v["version"] == version)


def author_view(store: Store, family: str) -> dict[str, Any]:
    """What a bot's owner sees of it (and nobody else: its log excerpts): each version's status,
    verdict, log excerpt, opponents and ratings."""
    submitted = {s.version: s for s in store.submissions(family)}
    queries = BrowseQueries(store)
    versions = []
    for bot in store.versions(family):
        s = submitted.get(bot.version)
        versions.append(
            {
                "bot": bot.name,
                "version": bot.version,
                "status": "removed" if bot.removed else bot.status,
                "created": bot.created,
                "note": bot.note,
                "submitted": s is not None,
                "digest": s.digest if s else None,
                "verdict": s.verdict if s else None,
                "log_excerpt": s.log_excerpt if s else None,
                "opponents": list(s.opponents) if s else [],
                "steps": _steps(bot.directory),
                "verification_match": (
                    f"/api/bots/{family}/versions/{bot.version}/verification"
                    if s is not None and s.replayed
                    else None
                ),
                "ratings": [
                    {
                        "ladder": r.ladder,
                        "rank": r.rank,
                        "of": r.of,
                        "mu": r.mu,
                        "sigma": r.sigma,
                        "matches": r.matches,
                    }
                    for r in queries.bot_ladders(bot.name)
                ],
            }
        )
    return {"bot": family, "versions": versions}


def _steps(directory: str | None) -> list[dict[str, Any]]:
    """A version's install or build steps (arena.runtimes.Step), as its owner reads them: the
    command, whether it passed, its time and its output's last lines."""
    prepared = find_preparation(directory) if directory else None
    return [dict(s.__dict__) for s in prepared.steps] if prepared is not None else []
