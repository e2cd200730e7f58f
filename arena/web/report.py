"""`arena report --out DIR`: the web pages written as a static site that needs no server.

The same templates and page functions as the web app (site.py), with relative links
(site.ReportUrls), the replay frames inlined in each match page and the CSS and JavaScript
copied beside them, so the report opens from file:// or from any static host. Layout:

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
from .queries import Reader

LIST_PAGE = 100


@dataclass(frozen=True, slots=True)
class _TrackingUrls(site.ReportUrls):
    """ReportUrls that remembers every match it linked to."""

    linked: set[tuple[str, int]] = field(default_factory=set)

    def match(self, ladder: str, index: int) -> str:
        self.linked.add((ladder, index))
        return site.ReportUrls.match(self, ladder, index)


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

        def write(rel: str, depth: int, page: site.Page) -> None:
            nonlocal pages
            template, context = page
            html = env.get_template(template).render(
                url=_TrackingUrls(depth=depth, linked=linked), **context
            )
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(html, encoding="utf-8")
            pages += 1

        static = out / "static"
        static.mkdir(exist_ok=True)
        for item in site.STATIC.iterdir():
            if item.is_file():
                shutil.copyfile(item, static / item.name)

        ladders = q.ladders()
        write("index.html", 0, site.index_page(q))
        write("bots.html", 0, site.bots_page(q))
        for ladder in ladders:
            write(f"ladders/{ladder.name}.html", 1, site.ladder_page(q, ladder.name))
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
                    2,
                    _list_page(chunk, ladder.name, page_no, more),
                )
        for bot in q.bots():
            write(f"bots/{bot.name}.html", 1, site.bot_page(q, bot.name))
        written: set[tuple[str, int]] = set()
        while linked - written:
            for ladder_name, index in sorted(linked - written):
                written.add((ladder_name, index))
                write(
                    f"matches/{ladder_name}/{index}.html",
                    2,
                    site.match_page(
                        q, ladder_name, index, None, site.ReportUrls(depth=2), written=written_at
                    ),
                )
        return ReportSummary(out=out, pages=pages, matches=len(written))
    finally:
        reader.close()


def _list_page(rows: list[Any], ladder: str, page_no: int, more: bool) -> site.Page:
    from arena.store.browse import MatchPage

    page = MatchPage(matches=rows, next=None, filters={"ladder": ladder})
    urls = site.ReportUrls(depth=2)
    return "matches.html", {
        "title": f"Matches of {ladder}" + (f", page {page_no}" if page_no > 1 else ""),
        "page": page,
        "older": urls.matches(ladder=ladder, page=page_no + 1) if more else None,
        "newest": urls.matches(ladder=ladder, page=1) if page_no > 1 else None,
        "filters": {"ladder": ladder, "bot": "", "status": ""},
        "ladder_names": [],
        "bot_names": [],
    }
