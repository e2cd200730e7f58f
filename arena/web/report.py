"""`arena report --out DIR`: the web pages written as a static site that needs no server.

The same templates and pages as the web app (site.PAGES, each written at its report file in
paths.PLACES), with relative links (paths.ReportUrls), the replay frames inlined in each match
page and the CSS and JavaScript copied beside them, so the report opens from file:// or from any
static host. Layout:

    index.html  bots.html  ladders/L.html  bots/B.html
    matches/L/I.html  matches/L/list-N.html  static/

Matches: per ladder the newest `max_matches` that are not pending, plus every match another page
links to (a bot's recent results and faults), so no link in the report is dead.

The report is public: its match pages go through the public's Disclosure, as the web app's do,
so a match whose duplicate set was not finished when the report was written shows no seed and
no hand, and says that it is a snapshot of that moment.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.store import MATCH_STATUSES, StoreError

from . import site
from .paths import PLACES, Place, ReportUrls
from .reader import Reader

LIST_PAGE = 100


@dataclass(frozen=True, slots=True)
class _TrackingUrls(ReportUrls):
    """ReportUrls that remembers every match it linked to."""

    linked: set[tuple[str, int]] = field(default_factory=set)

    def link(self, place: Place, params: dict[str, Any]) -> str | None:
        if place is PLACES["match"]:
            self.linked.add((params["ladder"], params["index"]))
        return ReportUrls.link(self, place, params)


@dataclass(slots=True)
class ReportSummary:
    out: Path
    pages: int
    matches: int


def write_report(
    store_path: str | Path, out: str | Path, *, max_matches: int = 500, title: str = "Arena"
) -> ReportSummary:
    """Write the static site for the database at `store_path` into `out` (created if needed;
    files of an earlier report there are overwritten). Raises StoreError if the database
    cannot be read and OSError if `out` cannot be written."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise StoreError(f"{out} exists and is not a folder; choose another --out")
    reader = Reader(store_path)
    try:
        q = reader.queries()
        env = site.make_env()
        env.globals["site_title"] = title
        written_at = env.globals["written"] = time.time()
        out.mkdir(parents=True, exist_ok=True)
        linked: set[tuple[str, int]] = set()
        pages = 0

        def write(rel: str, build: Any, **params: Any) -> None:
            """Write the page `build(view, **params)` at `rel`, its links relative to it."""
            nonlocal pages
            urls = _TrackingUrls(depth=rel.count("/"), linked=linked)
            template, context = build(site.View(q=q, urls=urls, written=written_at), **params)
            html = env.get_template(template).render(url=urls, **context)
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(html, encoding="utf-8")
            pages += 1

        static = out / "static"
        static.mkdir(exist_ok=True)
        for item in site.STATIC.iterdir():
            if item.is_file():
                shutil.copyfile(item, static / item.name)

        for kind in site.PAGES:
            if kind.in_report is None:
                continue
            for params in kind.in_report(q):
                write(_file(kind.place, params), kind.build, **params)
        for ladder in q.ladders():
            shown = [s for s in MATCH_STATUSES if s != "pending"]
            rows = []
            for status in shown:
                rows += q.match_list(ladder=ladder.name, status=status, limit=max_matches).matches
            rows.sort(key=lambda m: m.id, reverse=True)
            rows = rows[:max_matches]
            for page_no, start in enumerate(range(0, max(len(rows), 1), LIST_PAGE), 1):
                chunk = rows[start : start + LIST_PAGE]
                more = start + LIST_PAGE < len(rows)
                write(
                    f"matches/{ladder.name}/list-{page_no}.html",
                    _list_page,
                    rows=chunk,
                    ladder=ladder.name,
                    page_no=page_no,
                    more=more,
                )
        written: set[tuple[str, int]] = set()
        while linked - written:
            for ladder_name, index in sorted(linked - written):
                written.add((ladder_name, index))
                params = {"ladder": ladder_name, "index": index}
                write(_file("match", params), site.match_page, **params)
        return ReportSummary(out=out, pages=pages, matches=len(written))
    finally:
        reader.close()


def _file(place: str, params: dict[str, Any]) -> str:
    """A page's file in the report, relative to the report's folder (paths.PLACES)."""
    rel = ReportUrls().link(PLACES[place], params)
    assert rel is not None, f"the report has no file for page {place} {params}"
    return rel


def _list_page(
    v: site.View, *, rows: list[Any], ladder: str, page_no: int, more: bool
) -> site.Page:
    """A page of a ladder's match list (the server's list has filters instead)."""
    from arena.store.browse import MatchPage

    page = MatchPage(matches=rows, next=None, filters={"ladder": ladder})
    urls = v.urls
    return "matches.html", {
        "title": f"Matches of {ladder}" + (f", page {page_no}" if page_no > 1 else ""),
        "page": page,
        "older": urls.matches(ladder=ladder, page=page_no + 1) if more else None,
        "newest": urls.matches(ladder=ladder, page=1) if page_no > 1 else None,
        "filters": {"ladder": ladder, "bot": "", "status": "", "faulted": False},
        "ladder_names": [],
        "bot_names": [],
    }
