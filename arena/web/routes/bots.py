"""The bots' JSON API: every bot, a bot (its ladders, versions, recent matches and faults), its
faults with the end of its log for its owner, its rating history."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Header, HTTPException, Query, Response

from arena.ratings import conservative

from .. import models
from ..owners import ADMIN_KEY_HEADER, BOT_KEY_HEADER, OWNER_KEY_HEADER, Credential, may_read_logs
from .common import BAD_INPUT, BOT, NOT_FOUND, Web, api, plain


def router(web: Web) -> APIRouter:
    router = APIRouter(tags=["bots"])
    public = web.public

    @api(router, "/api/bots", list[models.BotOut], responses={})
    def api_bots() -> Any:
        """Every registered bot (removed ones included, marked), by name."""
        return [plain(b) for b in web.queries().bots()]

    @api(router, "/api/bots/{bot}", models.BotDetailOut)
    def api_bot(
        bot: str = BOT,
        recent: int = Query(20, ge=1, le=200, description="how many recent matches and faults"),
    ) -> Any:
        """A bot: its standing in each ladder, its recent completed matches and faults."""
        q = web.queries()
        info = q.bot(bot)
        return {
            "bot": plain(info),
            "ladders": [plain(r) for r in q.bot_ladders(bot)],
            "versions": [plain(v) for v in q.versions(bot)],
            "recent_matches": [plain(m) for m in q.recent_matches(bot, recent)],
            "recent_faults": [plain(f) for f in public.faults(q.bot_faults(bot, recent))],
        }

    @api(
        router,
        "/api/bots/{bot}/faults",
        models.BotFaultLogsOut,
        responses={
            401: {"model": models.ErrorOut, "description": "no key given"},
            403: {"model": models.ErrorOut, "description": "the key does not open these logs"},
            **NOT_FOUND,
            **BAD_INPUT,
        },
    )
    def api_bot_faults(
        response: Response,
        bot: str = BOT,
        limit: int = Query(20, ge=1, le=200, description="how many recent faulted matches"),
        x_bot_key: str | None = Header(
            None, max_length=512, description="the bot's play token (its owner's)"
        ),
        x_admin_key: str | None = Header(
            None, max_length=512, description="the server's admin key (arena serve)"
        ),
        x_owner_key: str | None = Header(
            None, max_length=512, description="the bot's owner key (docs/submit.md)"
        ),
    ) -> Any:
        """The bot's recent faults with the end of its log as each match ended, for its owner
        (the owner key in X-Owner-Key, or the bot's token in X-Bot-Key) or the organiser
        (X-Admin-Key). Fault details follow
        the public rule (withheld until the set is finished); the excerpt is the bot's own
        output."""
        q = web.queries()
        info = q.bot(bot)
        credential = Credential(bot_key=x_bot_key, admin_key=x_admin_key, owner_key=x_owner_key)
        if not credential.given:
            raise HTTPException(
                401,
                f"the log excerpts of bot {bot} are for its owner and the organiser: give "
                f"its owner key or the bot's token (the organiser: the admin key); the API "
                f"takes them in the {OWNER_KEY_HEADER}, {BOT_KEY_HEADER} or "
                f"{ADMIN_KEY_HEADER} header",
            )
        if not may_read_logs(q, info.name, credential, web.admin_key):
            raise HTTPException(
                403,
                f"this key does not open the log excerpts of bot {bot}: check that it was "
                f"copied whole and is of the right kind; its owner key opens every version, "
                f"that bot's own token only that version, the admin key every bot (the API "
                f"takes them in {OWNER_KEY_HEADER}, {BOT_KEY_HEADER}, {ADMIN_KEY_HEADER})",
            )
        response.headers["Cache-Control"] = "no-store"  # private: no shared cache keeps it
        excerpts = q.bot_fault_logs(info.name, limit)
        faults = [
            {**plain(f), "excerpt": excerpts.get((f.ladder, f.index, f.seat))}
            for f in public.faults(q.bot_faults(info.name, limit))
        ]
        return {"bot": info.name, "remote": info.remote, "faults": faults}

    @api(router, "/api/bots/{bot}/history", list[models.HistoryOut])
    def api_history(
        bot: str = BOT,
        ladder: str | None = Query(None, max_length=64, description="only this ladder"),
    ) -> Any:
        """The bot's rating after each rated match, per ladder."""
        history = web.queries().rating_history(bot, ladder)
        return [
            {
                "ladder": name,
                "bot": bot,
                "points": [
                    {
                        "index": p.index,
                        "mu": p.mu,
                        "sigma": p.sigma,
                        "conservative": conservative(p.mu, p.sigma),
                    }
                    for p in points
                ],
            }
            for name, points in history.items()
        ]

    return router
