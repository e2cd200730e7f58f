"""What the service's web side asks of it: each router (the admin API in web.py, the owners' API in
submissions.py, its scrimmages in scrimmages.py) and the web server (web.py) is given an object with
just these members, not the whole ArenaService. ArenaService has them all; a test gives a router a
small object of its own. (So web.py needs nothing of service.py, which starts it.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, Sequence

from arena.runtimes import Runtimes
from arena.store import AsyncStore, Bot, Ladder
from arena.submissions.archive import Limits


class StoreBackend(Protocol):
    @property
    def store(self) -> AsyncStore | None:
        """The service's store while it runs (None while it starts or stops)."""


class AdminBackend(StoreBackend, Protocol):
    """What the admin API asks of the service."""

    @property
    def admin_key(self) -> str | None:
        """The admin key (None or empty: the admin API is off)."""

    async def check_access(self) -> None:
        """End the streams of bots revoked just now."""


class UploadBackend(StoreBackend, Protocol):
    """What the owners' API asks of the service."""

    @property
    def db(self) -> Path:
        """The database's path (uploads are unpacked in the bot store beside it)."""

    @property
    def uploads_per_day(self) -> int:
        """The uploads a bot may have in 24 hours."""

    @property
    def upload_limits(self) -> Limits:
        """What an uploaded archive may hold."""

    @property
    def runtimes(self) -> Runtimes:
        """The runtimes an upload may name (arena.runtimes)."""

    def verify_later(self, name: str) -> None:
        """Verify the submitted version `name` in the background."""

    async def upload_terms(self, family: str) -> int:
        """The uploads the bot `family` may have in 24 hours now (raises UploadsClosed when a
        competition it enters takes no more)."""


class ScrimmageBackend(StoreBackend, Protocol):
    """What the owners' scrimmage API asks of the service (scrimmages.py)."""

    @property
    def scrimmage_sets_per_day(self) -> int:
        """The scrimmage sets a bot may have in 24 hours."""

    async def plan_scrimmage(
        self, family: str, opponents: Sequence[str]
    ) -> tuple[Ladder, Bot, list[Bot]]:
        """The ladder, the bot's version and the opponents' of a scrimmage (raises
        scrimmages.ScrimmageRefused saying why none can be played)."""

    def scrimmage_later(self, scrimmage_id: int, family: str) -> None:
        """Play the stored scrimmage in the background."""


class WebBackend(AdminBackend, UploadBackend, ScrimmageBackend, Protocol):
    """What the service's web server asks of it: both APIs' members, and the replay so far of
    a match it is playing (the web app's LiveSource, arena/web/site.py)."""

    def live_replay(self, ladder: str, index: int) -> dict[str, Any] | None: ...
