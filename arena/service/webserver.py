"""The service's web server: the web app over the store (arena.web), plus the admin API, the
owners' API (submissions.py) and live matches, served by uvicorn on the service's own event loop."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from typing import Iterator

from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Request, Response
from pydantic import BaseModel, Field

from arena.store import Store, StoreError, UnknownBot

from .backends import AdminBackend, WebBackend
from .scrimmages import scrimmages_router
from .submissions import runtimes_router, submissions_router


class NewBot(BaseModel):
    name: str = Field(description="Letters, digits, '_', '.', '-'; at most 64.")
    command: str | None = Field(None, description="How the server starts it (run on the server).")
    remote: bool = Field(False, description="Its owner runs it and connects with the token.")
    owner: bool = Field(
        False,
        description="Give it an owner key (to submit versions: docs/submit.md); alone, without "
        "command or remote, the bot awaits its first upload.",
    )


class NewBotToken(BaseModel):
    name: str
    token: str | None = Field(None, description="Shown once; only its hash is stored.")
    owner_key: str | None = Field(None, description="Shown once; only its hash is stored.")


class NewOwnerKey(BaseModel):
    name: str
    owner_key: str = Field(description="Shown once; the old key stops working.")


class Suspension(BaseModel):
    reason: str


class BotStatus(BaseModel):
    name: str
    suspended: bool
    reason: str | None = None


def admin_router(service: AdminBackend) -> APIRouter:
    router = APIRouter(prefix="/api/admin", tags=["admin"])

    def check_key(x_admin_key: str | None = Header(None)) -> None:
        expected = service.admin_key
        if not expected:
            raise HTTPException(
                403,
                "the admin API is disabled: start arena serve with "
                "--admin-key-file FILE (or ARENA_ADMIN_KEY set)",
            )
        if x_admin_key is None or not hmac.compare_digest(x_admin_key.encode(), expected.encode()):
            raise HTTPException(401, "a wrong or missing X-Admin-Key header")

    async def call(fn, *args, **kwargs):
        store = service.store
        assert store is not None, "the web server runs only while the service has its store open"
        try:
            return await store.run(fn, *args, **kwargs)
        except UnknownBot as err:
            raise HTTPException(404, str(err)) from None
        except StoreError as err:
            raise HTTPException(400, str(err)) from None

    async def version(name: str) -> str:
        """The bot row a name means here, as on the command line: NAME its latest version,
        NAME@N that one."""
        return (await call(Store.resolve_bot, name)).name

    @router.post(
        "/bots", status_code=201, response_model=NewBotToken, dependencies=[Depends(check_key)]
    )
    async def add_bot(bot: NewBot) -> NewBotToken:
        """Register a bot; the response holds its token (and with owner=true its owner key),
        shown this once. With owner=true alone, the bot has no version until its owner
        submits one."""
        if bot.command is not None and bot.remote:
            raise HTTPException(400, "give one of command or remote=true, not both")
        if bot.command is None and not bot.remote and not bot.owner:
            raise HTTPException(400, "give one of command or remote=true (or owner=true)")
        token = None
        if bot.command is not None or bot.remote:
            token = await call(Store.add_bot, bot.name, bot.command, remote=bot.remote)
        key = await call(Store.new_owner_key, bot.name) if bot.owner else None
        return NewBotToken(name=bot.name, token=token, owner_key=key)

    @router.post(
        "/bots/{name}/rotate-owner-key",
        response_model=NewOwnerKey,
        dependencies=[Depends(check_key)],
    )
    async def rotate_owner_key(name: str) -> NewOwnerKey:
        """Give a bot a new owner key, shown this once; the old one stops working at once."""
        family = name.partition("@")[0]
        return NewOwnerKey(
            name=family, owner_key=await call(Store.new_owner_key, family, rotate=True)
        )

    @router.post(
        "/bots/{name}/suspend", response_model=BotStatus, dependencies=[Depends(check_key)]
    )
    async def suspend(name: str, body: Suspension) -> BotStatus:
        """Suspend a bot; its open stream is ended before the answer (its running seats fault
        as disconnected)."""
        name = await version(name)
        await call(Store.suspend_bot, name, body.reason)
        await service.check_access()
        return BotStatus(name=name, suspended=True, reason=body.reason)

    @router.post(
        "/bots/{name}/reinstate", response_model=BotStatus, dependencies=[Depends(check_key)]
    )
    async def reinstate(name: str) -> BotStatus:
        name = await version(name)
        await call(Store.suspend_bot, name, None)
        return BotStatus(name=name, suspended=False)

    @router.get("/ladders/{ladder}/matches/{index}", dependencies=[Depends(check_key)])
    def match(request: Request, ladder: str, index: int, frames: bool = False) -> Response:
        """One match with nothing withheld: its seed, fault details and, with frames=true,
        every frame with the hands, even while its duplicate set is still being played (the
        public's answer, /api/ladders/{ladder}/matches/{index}, withholds them until then)."""
        from arena.web.routes.matches import full_match

        return full_match(request.app, ladder, index, frames)

    @router.post(
        "/bots/{name}/rotate-token", response_model=NewBotToken, dependencies=[Depends(check_key)]
    )
    async def rotate_token(name: str) -> NewBotToken:
        """Give a bot a new token, shown this once; a stream that presented the old one is
        ended before the answer."""
        name = await version(name)
        token = await call(Store.rotate_token, name)
        await service.check_access()
        return NewBotToken(name=name, token=token, owner_key=None)

    @router.delete("/bots/{name}", status_code=204, dependencies=[Depends(check_key)])
    async def remove(name: str) -> None:
        """Remove a bot, every version of it (NAME), or one version (NAME@N); past results
        stay, and open streams of what was removed are ended before the answer."""
        await call(Store.remove_bot, name)
        await service.check_access()

    return router


class WebServer:
    """uvicorn serving the app inside the service's event loop; stopped gracefully."""

    def __init__(self, service: WebBackend, host: str = "127.0.0.1", port: int = 8000):
        import uvicorn

        from arena.web.factory import create_app

        # service.live_replay; the admin key opens every bot's log excerpts too
        self.app: FastAPI = create_app(
            service.db, live=service, admin_key=service.admin_key or None
        )
        self.app.include_router(admin_router(service))
        self.app.include_router(submissions_router(service))
        self.app.include_router(runtimes_router(service))
        self.app.include_router(scrimmages_router(service))
        self.app.state.owners_api = True
        # The bot page's upload form lists them (_owner.html).
        self.app.state.web.env.globals["runtimes"] = [
            r.listing() for r in service.runtimes.by_name.values()
        ]
        config = uvicorn.Config(self.app, host=host, port=port, log_level="warning", lifespan="off")

        class Server(uvicorn.Server):
            # The service owns the signals (arena.stopsignals). uvicorn (0.29 on) would take
            # SIGINT and SIGTERM over with signal.signal while it serves, and stop only itself.
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        self.server = Server(config)
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        self._task = asyncio.ensure_future(self.server.serve())
        # uvicorn offers no event for "listening"; look, bounded.
        deadline = asyncio.get_running_loop().time() + 30
        while not self.server.started:
            if asyncio.get_running_loop().time() > deadline:
                raise OSError("the web server did not start within 30 s")
            if self._task.done():
                self._task.result()  # raises why it could not start (port taken, ...)
                raise OSError("the web server stopped as it started")
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        self.app.state.feeds.close()  # open event streams end, or uvicorn would wait on them
        self.server.should_exit = True
        if self._task is not None:
            await self._task
