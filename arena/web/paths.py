"""Where every page and feed is, in one table (`PLACES`): its path on the server and its file in
the static report. The server's routes are declared with these paths (arena/web/routes/), and
the templates' links are made from them (`url.ladder(name)`, `url.match(ladder, index)`, ...) by
`ServerUrls` (absolute paths under the app's mount point) or `ReportUrls` (relative links
between the report's files), so a page's address is written once.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote, urlencode


@dataclass(frozen=True, slots=True)
class Place:
    """A page's or feed's address: `server`, a path with its parameters in braces (as FastAPI
    declares a route), and `report`, its file in the static report relative to the report's
    folder (None: the report has none; a link to it is None and the template leaves it out)."""

    server: str
    report: str | None = None

    @property
    def params(self) -> tuple[str, ...]:
        """The server path's parameters, in order."""
        return _fields(self.server)


PLACES: dict[str, Place] = {
    "home": Place("/", "index.html"),
    "ladder": Place("/ladders/{ladder}", "ladders/{ladder}.html"),
    # The chart of a ladder's leaders' ratings (an SVG image; the report has none).
    "ladder_chart": Place("/ladders/{ladder}/ratings.svg"),
    # The report has no comparison pages (its ladder page lists the matches).
    "comparison": Place("/comparisons/{ladder}"),
    "bots": Place("/bots", "bots.html"),
    "bot": Place("/bots/{bot}", "bots/{bot}.html"),
    "match": Place("/ladders/{ladder}/matches/{index}", "matches/{ladder}/{index}.html"),
    # Filters go in the query; the report has a match list per ladder only, a file a page
    # (no filters without a server).
    "matches": Place("/matches", "matches/{ladder}/list-{page}.html"),
    "static": Place("/static/{path}", "static/{path}"),
    # A competition (docs/competitions.md); its results archive only from a server.
    "competition": Place("/competitions/{competition}", "competitions/{competition}.html"),
    "competition_archive": Place("/competitions/{competition}/archive"),
    # The server's feeds: a static report has none.
    "live": Place("/api/ladders/{ladder}/matches/{index}/live"),
    "match_events": Place("/api/ladders/{ladder}/matches/{index}/events"),
    "ladder_events": Place("/api/ladders/{ladder}/events"),
    # A static report has no server to check an owner's key.
    "bot_faults": Place("/api/bots/{bot}/faults"),
    # A finished set's match's stored replay (arena.replay's format), to download.
    "match_replay": Place("/api/ladders/{ladder}/matches/{index}/replay"),
    # The public export of a ladder's finished sets (export.py), JSON Lines.
    "export": Place("/api/ladders/{ladder}/export.jsonl"),
    # The same as Parquet (needs pyarrow, the `export` extra).
    "export_parquet": Place("/api/ladders/{ladder}/export.parquet"),
    "match_logs": Place("/api/ladders/{ladder}/matches/{index}/logs"),
    # The organiser's view (admin key): a static report has no server to check it.
    "admin": Place("/admin"),
}

# A report link's parameters that have a default (a match list's first page).
_REPORT_DEFAULTS = {"page": 1}


@functools.cache  # a page makes hundreds of links from a handful of templates
def _fields(template: str) -> tuple[str, ...]:
    return tuple(name for _, name, _, _ in string.Formatter().parse(template) if name)


def _params(place: Place, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A link's arguments by name: positional ones fill the server path's parameters in order."""
    if len(args) > len(place.params):
        raise TypeError(f"{place.server} takes {len(place.params)} parameters, got {len(args)}")
    return {**dict(zip(place.params, args)), **kwargs}


class Urls:
    """The links of one rendering: `url.NAME(*params, **params)` for each place in PLACES (a
    str, or None where this way of serving has no such page); `static_mode` says whether it is
    the static report."""

    static_mode: bool = False
    root: str = ""

    def link(self, place: Place, params: dict[str, Any]) -> str | None:
        raise NotImplementedError

    def __getattr__(self, name: str) -> Callable[..., str | None]:
        place = PLACES.get(name)
        if place is None:
            raise AttributeError(f"no page or feed called {name!r} (arena/web/paths.py PLACES)")

        def url(*args: Any, **kwargs: Any) -> str | None:
            return self.link(place, _params(place, args, kwargs))

        return url


@dataclass(frozen=True, slots=True)
class ServerUrls(Urls):
    """Absolute paths under `root` (the mount point when `arena serve` mounts the app); the
    names in a path are quoted, and parameters the path does not take are the query (empty
    ones left out)."""

    root: str = ""
    static_mode: bool = False

    def link(self, place: Place, params: dict[str, Any]) -> str | None:
        path = place.server.format(**{k: quote(str(params[k])) for k in place.params})
        query = urlencode(
            {k: v for k, v in params.items() if k not in place.params and v not in (None, "")}
        )
        return f"{self.root}{path}" + (f"?{query}" if query else "")


@dataclass(frozen=True, slots=True)
class ReportUrls(Urls):
    """Relative links between the report's files, from a page `depth` folders deep, so the
    report opens from file:// or any folder on a web server. A link whose file needs a
    parameter that is not given (a match list with no ladder) is None, as is one to a place
    the report has no file for; parameters the file does not take are ignored."""

    depth: int = 0
    static_mode: bool = True

    @property
    def up(self) -> str:
        return "../" * self.depth

    def link(self, place: Place, params: dict[str, Any]) -> str | None:
        if place.report is None:
            return None
        values = {**_REPORT_DEFAULTS, **{k: v for k, v in params.items() if v is not None}}
        names = _fields(place.report)
        if any(name not in values for name in names):
            return None
        return self.up + place.report.format(**{name: values[name] for name in names})
