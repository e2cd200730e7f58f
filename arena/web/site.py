"""The pages, independent of how they are served: the Jinja environment and its filters, the
server-drawn rating chart, one function per page that gathers its context from the queries,
and `PAGES`, the list of pages: the web app's routes (routes/pages.py) serve each one at its
address (paths.PLACES) and `arena report` (report.py) writes each one, so both show the same
pages. A page is added here (its function and its line in PAGES) plus its template and its
address in paths.PLACES.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

import jinja2
from markupsafe import Markup, escape

from arena.compare import verdict
from arena.competitions import archive as competition_archive
from arena.competitions import phases as competition_phases
from arena.games import option_labels
from arena.ratings import conservative, rating_interval
from arena.store import (
    COMPLETED,
    FINISHED,
    INFRA_FAILED,
    MATCH_STATUSES,
    PENDING,
    RUNNING,
    UnknownLadder,
)
from arena.store.browse import (
    BrowseQueries,
    HeadToHead,
    HistoryPoint,
    LadderPace,
    LadderRow,
    MatchDetail,
    TimedPoint,
)

from .disclosure import Disclosure, MatchView
from .frames import card_legend
from .paths import Urls

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

# A match page with one of these statuses polls the live feed: the match may start or move on.
FOLLOWED = (PENDING, RUNNING, INFRA_FAILED)


class LiveSource(Protocol):
    """What `arena serve` gives the web app to show matches in progress (see docs/web.md).

    `live_replay(ladder, index)` returns the match's replay so far — a dict in arena.replay's
    format with at least config, seed, seat_names and the moves played so far (faults, scores
    and ranks may be empty lists) — or None if this process is not playing that match. It is
    called from worker threads, about once a second per watcher, and must return a snapshot
    (a copy), never a list the referee goes on appending to."""

    def live_replay(self, ladder: str, index: int) -> dict[str, Any] | None: ...


# ------------------------------------------------------------------------------- formatting


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}"


def _when(value: float | None) -> str:
    if not value:
        return "–"
    return dt.datetime.fromtimestamp(value, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _duration(ms: float | None) -> str:
    if ms is None:
        return "–"
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"


def script_json(value: Any) -> Markup:
    """JSON safe to put inside <script type="application/json">: no '<', '>' or '&' that could
    end the script element or start a comment."""
    text = json.dumps(value, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)


def variant(game: str, options: dict[str, Any]) -> Markup:
    """A game's options not at their default, as a page shows them after the game's name: each
    its label, with what it does on hover (arena.games.option_labels)."""
    return Markup("").join(
        Markup(' <span class="variant" title="{}">{}</span>').format(help_text, label)
        for label, help_text in option_labels(game, options)
    )


def make_env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(("html",)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters.update(num=_num, when=_when, duration=_duration, script_json=script_json)
    env.globals["STATUSES"] = MATCH_STATUSES
    env.globals["variant"] = variant
    env.globals["written"] = None  # when a static report was written (report.py sets it)
    return env


# ------------------------------------------------------------------------------------ chart


def rating_chart(
    points: Sequence[HistoryPoint],
    width: int = 640,
    height: int = 220,
    max_points: int = 300,
    *,
    x: Callable[[Any], float] = lambda p: p.index,
    x_label: Callable[[float], str] = lambda v: f"match {v:.0f}",
    tip: Callable[[Any], str] | None = None,
) -> Markup:
    """An SVG chart of a rating history: the mu ± sigma band, mu, and the conservative rating
    mu - 3 sigma, against `x` of each point (the match index unless told), its ends labelled
    by `x_label`. Long histories are thinned to `max_points`. With `tip`, each point is a
    circle carrying its values (`data-tip`) for static/chart.js to show on hover."""
    if not points:
        return Markup("")
    if len(points) > max_points:
        step = len(points) / max_points
        thinned = [points[int(i * step)] for i in range(max_points)]
        if thinned[-1] is not points[-1]:
            thinned.append(points[-1])
        points = thinned
    left, right, top, bottom = 48, 12, 12, 28
    xs = [x(p) for p in points]
    lows = [conservative(p.mu, p.sigma) for p in points]
    highs = [p.mu + p.sigma for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = math.floor(min(lows)), math.ceil(max(highs))
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return top + (y1 - y) / (y1 - y0) * plot_h

    def line(values: Sequence[float]) -> str:
        return " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, values))

    band = (
        line(highs)
        + " "
        + " ".join(
            f"{px(x):.1f},{py(p.mu - p.sigma):.1f}" for x, p in zip(reversed(xs), reversed(points))
        )
    )
    ticks = _y_grid(y0, y1, py, left, width - right, 'class="grid"', 'class="tick"')
    last = points[-1]
    svg = (
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="rating after each rated match: mu {last.mu:.2f}, sigma '
        f'{last.sigma:.2f} after match {last.index}">'
        + "".join(ticks)
        + f'<polygon class="band" points="{band}"/>'
        f'<polyline class="mu" points="{line([p.mu for p in points])}"/>'
        f'<polyline class="conservative" points="{line(lows)}"/>'
        + "".join(
            f'<circle class="pt" cx="{px(xv):.1f}" cy="{py(p.mu):.1f}" r="2.5" '
            f'data-tip="{escape(tip(p))}"/>'
            for xv, p in zip(xs, points)
            if tip is not None
        )
        + f'<text class="tick" x="{left}" y="{height - 8}">{escape(x_label(xs[0]))}</text>'
        f'<text class="tick" x="{width - right}" y="{height - 8}" text-anchor="end">'
        f"{escape(x_label(xs[-1]))}</text></svg>"
    )
    return Markup(svg)


def _y_grid(
    y0: float,
    y1: float,
    py: Callable[[float], float],
    x_from: float,
    x_to: float,
    line: str,
    text: str,
) -> list[str]:
    """A chart's five horizontal grid lines from y0 to y1, each with its value at the left
    (`line` and `text`: the attributes that style them)."""
    out = []
    for i in range(5):
        y = y0 + (y1 - y0) * i / 4
        out.append(
            f'<line {line} x1="{x_from}" x2="{x_to}" y1="{py(y):.1f}" y2="{py(y):.1f}"/>'
            f'<text {text} x="{x_from - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.0f}</text>'
        )
    return out


# ------------------------------------------------------------------------------------ pages

Page = tuple[str, dict[str, Any]]  # (template, context)


@dataclass(frozen=True, slots=True)
class View:
    """What a page is built with besides its own parameters: the queries, the links of this
    way of serving (server paths or report files), and what only the server has (matches in
    progress, the head-to-head cache, the owners' API) or only the report (when it was written:
    a match not finished then is said to be a snapshot). Matches are shown through `disclosure`
    (the public's unless told otherwise)."""

    q: BrowseQueries
    urls: Urls
    live: LiveSource | None = None
    disclosure: Disclosure | None = None
    h2h: HeadToHeadCache | None = None
    movement: MovementCache | None = None
    owners_api: bool = False
    written: float | None = None


def index_page(v: View) -> Page:
    """The ladders, and apart from them the comparisons (arena compare), which are never
    ranked: a comparison's leader would be a test's side, not a standing."""
    everything = v.q.ladders()
    pace = v.q.ladder_pace()
    return "index.html", {
        "title": "Ladders",
        "ladders": [lad for lad in everything if not lad.comparison],
        "comparisons": [lad for lad in everything if lad.comparison],
        "competitions": competition_banners(v.q),
        "left": {lad.name: time_left(lad, pace.get(lad.name)) for lad in everything},
        "running": {lad.name: pace[lad.name].running for lad in everything if lad.name in pace},
        "playing": v.q.match_list(status=RUNNING, limit=PLAYING_SHOWN).matches,
        "playing_max": PLAYING_SHOWN,
    }


# The home page lists at most this many matches being played (the match list has them all).
PLAYING_SHOWN = 12


def time_left(ladder: LadderRow, pace: LadderPace | None) -> str:
    """What is left of a ladder's schedule, in words: done, not being played now (no match
    running: stopped, or between runs), or about how long at its recent pace."""
    left = ladder.scheduled - ladder.completed
    if left <= 0:
        return "done"
    if pace is None or not pace.running:
        return "not being played now"
    if pace.per_hour is None:
        return "just started"
    seconds = left / pace.per_hour * 3600
    if seconds < 90:
        return "about a minute"
    if seconds < 5400:
        return f"about {seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"about {seconds / 3600:.1f} h"
    return f"about {seconds / 86400:.0f} days"


@dataclass(frozen=True, slots=True)
class Interval:
    """Where a bot's rating interval μ ± 3σ sits on a leaderboard's common scale, in percent of
    the scale's width (`left` and `width` of the interval, `mu` the position of μ), and the
    interval's ends as ratings (`low` is μ − 3σ, the conservative rating)."""

    left: float
    width: float
    mu: float
    low: float
    high: float


def rating_intervals(standings: Sequence[Any]) -> list[Interval]:
    """Each standing's μ ± 3σ on one scale shared by the whole board (the lowest μ − 3σ to the
    highest μ + 3σ), so that the bars compare: a long bar is an uncertain rating, and two bars
    side by side that overlap much are two bots the ladder has not told apart yet."""
    if not standings:
        return []
    intervals = [rating_interval(s.mu, s.sigma) for s in standings]
    lo, hi = min(low for low, _ in intervals), max(high for _, high in intervals)
    span = (hi - lo) or 1.0

    def at(x: float) -> float:
        return round((x - lo) / span * 100, 2)

    return [
        Interval(left=at(low), width=round(at(high) - at(low), 2), mu=at(s.mu), low=low, high=high)
        for s, (low, high) in zip(standings, intervals)
    ]


# A head-to-head matrix is drawn for ladders of at most this many bots (a bigger one would be
# a page of thousands of cells; each bot's page has its own row).
MATRIX_MAX_BOTS = 16


class HeadToHeadCache:
    """Ladders' head to head, kept and added to: on a big ladder the counts read every
    completed match, and the leaderboard page (and its live feed) must stay fast; so must a
    bot's page, whose head to head is kept per ladder and bot (a bot of a 102,000-match ladder
    among 100 bots reads its 3,000 matches: about 30 ms a view, then nothing until the ladder
    moves, and then only the matches after the finished prefix).

    What lies before a ladder's first unfinished set (BrowseQueries.finished_prefix) never changes,
    so it is counted once and then only as the prefix grows; the rest (finished sets after an
    unfinished one, as parallel play leaves them) is counted afresh, and only when the ladder's
    progress (its completed, rated and scheduled counts) changed. Never early: only matches of
    finished sets are counted, and a set never becomes unfinished again."""

    def __init__(self) -> None:
        # (ladder, bot or None: every bot) -> (progress, prefix end, counts before it, answer)
        self._items: dict[tuple[str, str | None], tuple[tuple, int, dict, list[HeadToHead]]] = {}
        self._lock = threading.Lock()

    def __call__(
        self, q: BrowseQueries, info: LadderRow, bot: str | None = None
    ) -> list[HeadToHead]:
        """The ladder's head to head (as BrowseQueries.head_to_head), only `bot`'s rows if
        given, sorted by bot and opponent."""
        progress = (info.completed, info.rated, info.scheduled)
        key = (info.name, bot)
        with self._lock:
            item = self._items.get(key)
        if item is not None and item[0] == progress:
            return item[3]
        end, counts = (item[1], dict(item[2])) if item is not None else (0, {})
        prefix = q.finished_prefix(info.name)
        if prefix > end:
            _add(
                counts,
                q.head_to_head(ladder=info.name, bot=bot, from_index=end, to_index=prefix - 1),
            )
            end = prefix
        total = dict(counts)
        if end < info.scheduled:  # none after the prefix once every set is finished (a
            # bot's query would still read each of its matches to find none): a ladder grown
            # since `info` was read has other progress, so the next call counts its new matches
            _add(total, q.head_to_head(ladder=info.name, bot=bot, from_index=end))
        answer = [
            HeadToHead(info.name, b, opponent, *numbers)
            for (b, opponent), numbers in sorted(total.items())
        ]
        with self._lock:
            self._items[key] = (progress, end, counts, answer)
        return answer


def _add(counts: dict[tuple[str, str], tuple[int, ...]], rows: Sequence[HeadToHead]) -> None:
    for h in rows:
        old = counts.get((h.bot, h.opponent), (0, 0, 0, 0))
        counts[(h.bot, h.opponent)] = tuple(
            a + b for a, b in zip(old, (h.matches, h.ahead, h.level, h.behind))
        )


def ladder_page(v: View, ladder: str) -> Page:
    """The ladder's page; its part that changes (`_ladder_live.html`, from ladder_live) is
    pushed again by the ladder's live feed (live.py). Besides: its latest results, and where
    served, the chart of its leaders' ratings (ladder_chart, an image of its own address, so
    the leaderboard never waits for it)."""
    context = ladder_live(v.q, ladder, v.h2h, v.movement)[1]
    recent = v.q.match_list(ladder=ladder, status=COMPLETED, limit=RECENT_RESULTS).matches
    return "ladder.html", {
        "title": f"Ladder {ladder}",
        "recent": recent,
        "chart_bots": CHART_BOTS,
        **context,
    }


# The ladder page's latest results, and how many of its leaders its rating chart draws.
RECENT_RESULTS = 10
CHART_BOTS = 8
# Rank movement is counted over this many completed matches a bot of the ladder (at least
# MOVEMENT_MIN): long enough that each bot has played since.
MOVEMENT_PER_BOT, MOVEMENT_MIN = 2, 10

CHART_COLOURS = (
    "#2456a6",
    "#c2410c",
    "#15803d",
    "#7e22ce",
    "#b91c1c",
    "#0e7490",
    "#a16207",
    "#475569",
)


class MovementCache:
    """Each ladder's ratings as they stood N completed matches ago (rank_movement), kept until
    the ladder's progress changes: the leaderboard page (and its live feed) reads them once
    per change, not once a viewer."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[tuple, dict[str, tuple[float, float]] | None]] = {}
        self._lock = threading.Lock()

    def __call__(
        self, q: BrowseQueries, info: LadderRow, back: int
    ) -> dict[str, tuple[float, float]] | None:
        progress = (info.completed, info.rated, info.scheduled, back)
        with self._lock:
            item = self._items.get(info.name)
        if item is not None and item[0] == progress:
            return item[1]
        then = q.ratings_back(info.name, back)
        with self._lock:
            self._items[info.name] = (progress, then)
        return then


def rank_movement(
    q: BrowseQueries,
    ladder: LadderRow,
    standings: Sequence[Any],
    cache: MovementCache | None = None,
) -> tuple[dict[str, int | None], int]:
    """How many places each bot moved (positive: up) over the last N completed matches (N
    returned too); None for a bot not rated N matches ago (new since). Empty while the ladder
    has not played N."""
    back = max(MOVEMENT_MIN, MOVEMENT_PER_BOT * ladder.bots)
    then = cache(q, ladder, back) if cache is not None else q.ratings_back(ladder.name, back)
    if not then:
        return {}, back
    order = sorted(then, key=lambda b: -conservative(*then[b]))
    rank_then = {b: i + 1 for i, b in enumerate(order)}
    return {
        s.bot: (rank_then[s.bot] - s.rank if s.bot in rank_then else None) for s in standings
    }, back


def ladder_chart(
    histories: Mapping[str, Sequence[HistoryPoint]], width: int = 640, height: int = 240
) -> str:
    """An SVG of the conservative rating μ−3σ of each bot of `histories` over the ladder's
    matches (by index), a line and a label each, thinned to about 150 points a line."""
    lines = {b: list(p) for b, p in histories.items() if p}
    left, right, top, bottom = 44, 96, 10, 26
    if not lines:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 40" width="{width}" '
            'height="40"><text x="4" y="24" font-size="13">No rated match yet.</text></svg>'
        )
    for b, points in lines.items():
        if len(points) > 150:
            step = len(points) / 150
            lines[b] = [points[int(i * step)] for i in range(150)] + [points[-1]]
    xs = [p.index for pts in lines.values() for p in pts]
    ys = [conservative(p.mu, p.sigma) for pts in lines.values() for p in pts]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = math.floor(min(ys)), math.ceil(max(ys))
    if y1 == y0:
        y1 = y0 + 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return top + (y1 - y) / (y1 - y0) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" font-family="system-ui, sans-serif" font-size="11">'
    ]
    # A standalone image: styled inline, the page's CSS does not reach it.
    parts += _y_grid(y0, y1, py, left, left + plot_w, 'stroke="#e5e7eb"', 'fill="#555"')
    for i in range(5):
        x = x0 + (x1 - x0) * i / 4
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        parts.append(
            f'<text x="{px(x):.1f}" y="{height - 8}" text-anchor="{anchor}" fill="#555">'
            f"match {x:.0f}</text>"
        )
    labels = []
    for (bot, points), colour in zip(lines.items(), CHART_COLOURS):
        coords = " ".join(
            f"{px(p.index):.1f},{py(conservative(p.mu, p.sigma)):.1f}" for p in points
        )
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.6" points="{coords}">'
            f"<title>{escape(bot)}</title></polyline>"
        )
        labels.append((py(conservative(points[-1].mu, points[-1].sigma)), bot, colour))
    # Labels at the lines' ends, pushed apart so that they never overlap.
    labels.sort()
    last = -1e9
    for y, bot, colour in labels:
        y = max(y, last + 12)
        last = y
        parts.append(
            f'<text x="{left + plot_w + 6}" y="{y + 4:.1f}" fill="{colour}">'
            f"{escape(bot[:14])}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def ladder_live(
    q: BrowseQueries,
    ladder: str,
    h2h: HeadToHeadCache | None = None,
    movement: MovementCache | None = None,
) -> Page:
    """What changes on a ladder's page as it plays: progress, standings, head to head (finished
    sets only; for ladders of at most MATRIX_MAX_BOTS bots), the matches being played."""
    info, standings = q.standings(ladder)
    matrix = None
    if len(standings) <= MATRIX_MAX_BOTS:
        rows = h2h(q, info) if h2h is not None else q.head_to_head(ladder=ladder)
        matrix = {(h.bot, h.opponent): h for h in rows}
    moves, back = rank_movement(q, info, standings, movement) if not info.comparison else ({}, 0)
    return "_ladder_live.html", {
        "ladder": info,
        "standings": standings,
        "moves": moves,
        "moves_back": back,
        "intervals": rating_intervals(standings),
        "matrix": matrix,
        "matrix_max": MATRIX_MAX_BOTS,
        "running": q.match_list(ladder=ladder, status=RUNNING, limit=10).matches,
    }


@dataclass(frozen=True, slots=True)
class PairedDeal:
    """One finished deal of a comparison, paired: its matches (first and last index), the new
    version's and the base's total scores over them, the new one's gain per match and in
    places (verdict.observations), and the test's LLR after it (None: a deal the test did
    not use, given up or after the verdict)."""

    deal: int
    first: int
    last: int
    new_score: float | None
    base_score: float | None
    gain: float | None
    place_gain: float | None
    llr: float | None


def paired_deals(settings: Any, rows: Sequence[Any], path: Sequence[float]) -> list[PairedDeal]:
    """The comparison's finished deals in order, up to the first one not finished (as the test
    reads them; a later deal's scores are not public yet): what each side scored on the same
    deals and seats, and the LLR after each deal the test used (`path`)."""
    observed = iter(verdict.observations(settings.table_size, settings.new, settings.base, rows)[0])
    llrs = iter(path)
    by_deal: dict[int, list[Any]] = {}
    for row in rows:
        by_deal.setdefault(row.set_index, []).append(row)
    out = []
    for deal in sorted(by_deal):
        matches = by_deal[deal]
        if len(matches) < 2 * settings.table_size or any(m.status not in FINISHED for m in matches):
            break
        first, last = min(m.index for m in matches), max(m.index for m in matches)
        if any(m.status != COMPLETED for m in matches):
            out.append(PairedDeal(deal, first, last, None, None, None, None, None))
            continue
        totals = {
            side: sum(m.scores[m.bots.index(side)] for m in matches if side in m.bots)
            for side in (settings.new, settings.base)
        }
        gain, place_gain = next(observed)
        out.append(
            PairedDeal(
                deal,
                first,
                last,
                totals[settings.new],
                totals[settings.base],
                gain,
                place_gain,
                next(llrs, None),
            )
        )
    return out


def comparison_page(v: View, ladder: str, width: int = 480, height: int = 200) -> Page:
    """A comparison (arena compare; `ladder` is its name): the two versions, the opponents, the
    running estimate with its interval, the test's LLR against its bounds (deal by deal), and
    the matches. Only finished deals count (a deal's matches are one set: disclosure as for a
    ladder's sets). The chart's drawing is 480 wide, shown at most 40rem wide (arena.css): its
    values stay legible on a phone (about 8 px at 390), not 5 px as a 640-wide drawing was."""
    q, name = v.q, ladder
    try:
        settings = verdict.stored(q.store.get_ladder(name))
    except ValueError:
        raise UnknownLadder(f"there is no comparison called {name!r}") from None
    rows = q.store.match_scores(name)
    result = verdict.outcome(settings, rows)
    path = verdict.llr_path(settings, rows)
    lower, upper = result.status.lower, result.status.upper
    top = max([upper, *path]) + 0.5
    bottom = min([lower, *path]) - 0.5
    n = max(len(path), 8)

    def x(i: float) -> float:
        return round(40 + (width - 50) * i / n, 1)

    def y(value: float) -> float:
        return round(10 + (height - 30) * (top - value) / (top - bottom), 1)

    # Values along each axis: about five deal numbers, and the LLR at whole steps between
    # the bounds' margins.
    step = max(1, math.ceil(n / 5))
    chart = {
        "x_ticks": [(x(i), i) for i in range(0, n + 1, step)],
        "y_ticks": [
            (y(float(t)), t)
            for t in range(math.ceil(bottom), math.floor(top) + 1)
            if min(abs(t - lower), abs(t - upper)) > 0.3 * (top - bottom) / 8 and t != 0
        ],
        "width": width,
        "height": height,
        "x0": x(0),
        "x1": x(n),
        "line": " ".join(f"{x(i + 1)},{y(llr)}" for i, llr in enumerate(path)),
        "upper": y(upper),
        "lower": y(lower),
        "zero": y(0.0),
        "deals": len(path),
        "span": n,  # the x axis' end, in deals
    }
    return "comparison.html", {
        "title": f"Comparison {name}",
        "settings": settings,
        "result": result,
        "json": verdict.outcome_json(settings, result),
        "chart": chart,
        "deals": paired_deals(settings, rows, path),
        # The latest few: all of them are a link away (a phone scrolled 11,000 px through 60).
        "matches": q.match_list(ladder=name, limit=20).matches,
    }


def bots_page(v: View) -> Page:
    return "bots.html", {"title": "Bots", "bots": v.q.bots()}


def point_tip(p: TimedPoint) -> str:
    """A rating-history point's values, as the chart shows them on hover."""
    return (
        f"its rating update {p.nth} (after match #{p.index}, {_when(p.finished)}): μ {p.mu:.2f}, "
        f"σ {p.sigma:.2f}, μ−3σ {conservative(p.mu, p.sigma):.2f}"
    )


def history_charts(points: Sequence[TimedPoint]) -> dict[str, Markup]:
    """A ladder's rating history drawn twice: over the bot's own matches (1, 2, ...) and over
    time (when each match finished)."""

    def day(v: float) -> str:
        return dt.datetime.fromtimestamp(v, dt.UTC).strftime("%Y-%m-%d %H:%M")

    timed = [p for p in points if p.finished]
    # 150 points a chart (4 px apart): two charts of hoverable points stay a light page.
    return {
        "matches": rating_chart(
            points,
            x=lambda p: p.nth,
            tip=point_tip,
            max_points=150,
            x_label=lambda v: f"its rating update {v:.0f}",
        ),
        "time": rating_chart(
            timed, x=lambda p: p.finished, tip=point_tip, max_points=150, x_label=day
        ),
    }


def rating_changes(history: Mapping[str, Sequence[HistoryPoint]]) -> dict[tuple[str, int], float]:
    """How much each rating update moved the bot's conservative rating μ−3σ, by the match that
    carried it (ladder, index): one update a duplicate set, at its last match to finish (the
    set's other matches moved nothing on their own). The first update has no change: what it
    moved from is the ladder's prior, not a rating the bot had."""
    changes: dict[tuple[str, int], float] = {}
    for ladder, points in history.items():
        before = None
        for p in points:
            now = conservative(p.mu, p.sigma)
            if before is not None:
                changes[(ladder, p.index)] = now - before
            before = now
    return changes


def bot_page(v: View, bot: str, recent: int = 20) -> Page:
    """A bot's page; its faults' details go through the public's Disclosure, its head-to-head
    counts only finished sets (BrowseQueries.head_to_head). Where the owners' API is served (arena
    serve), the owner's part (_owner.html)."""
    q = v.q
    info = q.bot(bot)
    # A comparison is a test, not a ladder: no rank, rating chart or recent result of it here,
    # only a link to its verdict.
    every = {lad.name: lad for lad in q.ladders()}
    comparisons = {name for name, lad in every.items() if lad.comparison}
    history = q.rating_history_timed(bot)
    standings = q.bot_ladders(bot)
    ladders = [s for s in standings if s.ladder not in comparisons]
    charts = {
        name: history_charts(points) for name, points in history.items() if name not in comparisons
    }
    if v.h2h is not None:  # the server's: kept until the ladder moves (HeadToHeadCache)
        # (A ladder made since q.ladders() was read has no finished set yet: none to count.)
        names = sorted(s.ladder for s in ladders if s.ladder in every)
        head_to_head = [h for name in names for h in v.h2h(q, every[name], bot)]
    else:
        head_to_head = [h for h in q.head_to_head(bot=bot) if h.ladder not in comparisons]
    return "bot.html", {
        "title": f"Bot {info.name}",
        "bot": info,
        "ladders": ladders,
        "versions": q.versions(bot),
        "charts": charts,
        "recent": [m for m in q.recent_matches(bot, recent) if m.ladder not in comparisons],
        "comparisons": sorted({s.ladder for s in standings} & comparisons),
        "head_to_head": head_to_head,
        "changes": rating_changes({k: v for k, v in history.items() if k not in comparisons}),
        "opponents": sorted({h.opponent for h in head_to_head}),
        "faults": Disclosure().faults(q.bot_faults(bot, recent)),
        "owners_api": v.owners_api,
    }


def matches_page(
    v: View,
    *,
    ladder: str | None,
    bot: str | None,
    status: str | None,
    before: int | None,
    limit: int,
    opponent: str | None = None,
    faulted: bool = False,
) -> Page:
    """The match list; with `opponent` or `faulted` (the caller checks `bot` is given too),
    the bot's completed matches against the opponent, or where it faulted. With a bot, each
    match's change of its rating (rating_changes)."""
    q, urls = v.q, v.urls
    if opponent is not None or faulted:
        page = q.matches_against(
            bot or "", opponent, ladder=ladder, before=before, limit=limit, faulted=faulted
        )
    else:
        page = q.match_list(ladder=ladder, bot=bot, status=status, before=before, limit=limit)
    filters = {
        "ladder": ladder,
        "bot": bot,
        "opponent": opponent,
        "status": status,
        "faulted": "true" if faulted else None,
    }
    older = urls.matches(**filters, before=page.next, limit=limit) if page.next else None
    newest = urls.matches(**filters, limit=limit) if before is not None else None
    return "matches.html", {
        "title": "Matches",
        "page": page,
        "older": older,
        "newest": newest,
        "filters": {
            "ladder": ladder or "",
            "bot": bot or "",
            "opponent": opponent or "",
            "status": status or "",
            "faulted": faulted,
        },
        "changes": rating_changes(q.rating_history_timed(bot)) if bot else {},
        "ladder_names": [lad.name for lad in q.ladders()],
        "bot_names": [b.name for b in q.bots()],
    }


def viewer_data(view: MatchView, urls: Urls) -> dict[str, Any]:
    """The replay viewer's data: the frames the viewer may see (every frame with hands for a
    match shown in full; public frames otherwise: the stored replay's, the live moves so far
    or the deal), `live`: the URL of its event stream (live.py) while the match may still
    move on, and why the hands are not shown (`withheld`)."""
    m = view.detail.match
    return {
        "ladder": m.ladder,
        "index": m.index,
        "status": m.status,
        "seat_names": [s.bot for s in m.seats],
        "legend": card_legend(view.detail.game),
        "frames": view.frames or [],
        "full": view.full,
        "withheld": view.withheld,
        "live": urls.match_events(m.ladder, m.index) if m.status in FOLLOWED else None,
    }


def replay_command(detail: MatchDetail) -> str:
    """The `arena match` command that deals this match's deal again, its bots to be given
    (one per seat): for a match whose seed is public."""
    flags = "".join(f" --{k.replace('_', '-')}" for k, v in sorted(detail.options.items()) if v)
    bots = " ".join(f"BOT{i + 1}" for i in range(detail.table_size))
    return f"arena match {detail.game} --seed {detail.seed}{flags} {bots}"


def match_page(v: View, ladder: str, index: int) -> Page:
    """A match's page, through the view's disclosure. In a static report, a match not finished
    when the report was written is said to be a snapshot."""
    view = (v.disclosure or Disclosure()).match(v.q.match(ladder, index), frames=True, live=v.live)
    detail = view.detail
    snapshot = None
    written = v.written
    if written is not None and not detail.set_finished:
        its_set = " and its set was still being played" if len(detail.set_matches) > 1 else ""
        snapshot = (
            f"A snapshot: this report was written {_when(written)}, when this match "
            f"was {detail.match.status}{its_set}; write the report again to see how "
            "it went on."
        )
    shown = view.full and detail.replay is not None and view.replay_error is None
    return "match.html", {
        "title": f"{ladder} match {index}",
        "replay_download": v.urls.match_replay(ladder, index) if shown else None,
        "replay_command": replay_command(detail) if view.full and detail.seed is not None else None,
        "d": detail,
        "m": detail.match,
        "viewer": viewer_data(view, v.urls),
        "replay_error": view.replay_error,
        "withheld": view.withheld,
        "snapshot": snapshot,
        "moves": view.moves,
    }


# ------------------------------------------------------------------------------ competitions


def competition_banners(q: BrowseQueries) -> list[dict[str, Any]]:
    """The home page's banner: each competition open or in its finals, with what comes next."""
    now = time.time()
    return [
        {"name": c.name, "phase": c.phase, "next": _next_step(c, now)}
        for c in q.store.list_competitions()
        if c.phase in (competition_phases.OPEN, competition_phases.FINALS)
    ]


def _next_step(c: Any, now: float) -> str:
    """What comes next in a competition, and when, in words."""
    if c.phase == competition_phases.OPEN:
        return f"uploads close {_until(c.freeze_at, now)}"
    if c.phase == competition_phases.FROZEN:
        return f"the finals begin {_until(c.finals_at, now)}"
    if c.phase == competition_phases.FINALS:
        return "the standings are published when the finals end"
    return f"published {_when(c.steps.get(competition_phases.PUBLISHED))}"


def _until(at: float, now: float) -> str:
    left = max(0, round(at - now))
    days, rest = divmod(left, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [f"{n} {u}" for n, u in ((days, "d"), (hours, "h"), (minutes, "min")) if n]
    return f"in {' '.join(parts[:2]) or f'{seconds} s'} ({_when(at)})"


def competition_page(v: View, competition: str) -> Page:
    """A competition: its phase and what comes next, its entrants, the open ladder while
    open, the finals' progress, and once published the standings (rating interval,
    P(better than the next)), the crosstable and the archive."""
    store = v.q.store
    c = store.get_competition(competition)
    config = c.config
    progress = None
    if c.phase == competition_phases.FINALS:
        ladder = store.get_ladder(c.finals_ladder)
        ranking = store.rankings(c.finals_ladder, config["confidence"])
        p_next = [s.p_better_than_next for s in ranking.standings[:-1]]
        progress = {
            "played": ladder.completed,
            "scheduled": ladder.num_matches,
            "settled": sum(p >= config["confidence"] for p in p_next if p is not None),
            "pairs": len(p_next),
            "budget_left": max(0, config["max_matches"] - ladder.num_matches),
        }
    table = None
    if c.phase == competition_phases.PUBLISHED:
        data = store.competition_archive(competition)
        table = competition_archive.read(data)[2] if data is not None else None
    return "competition.html", {
        "title": f"Competition {c.name}",
        "c": c,
        "config": config,
        "next": _next_step(c, time.time()),
        "progress": progress,
        "crosstable": table,
        "has_finals": c.phase in (competition_phases.FINALS, competition_phases.PUBLISHED),
    }


# -------------------------------------------------------------------------------- the pages


@dataclass(frozen=True, slots=True)
class PageKind:
    """One page of the site: its address (`place`, a key of paths.PLACES, whose path's
    parameters are `build`'s: ladder, bot, index), how it is built (`build(view, **params)`),
    and which of them the static report writes (`in_report(queries)`: each page's parameters;
    None: the report writes none this way)."""

    place: str
    build: Callable[..., Page]
    in_report: Callable[[BrowseQueries], Iterable[dict[str, Any]]] | None = None


# Served by routes/pages.py and written by report.py. The match list (/matches) is not here:
# its filters make it a route of its own (routes/matches.py), and the report writes a list per
# ladder. A match's page is in the report when another page links to it (report.py).
PAGES: tuple[PageKind, ...] = (
    PageKind("home", index_page, lambda q: [{}]),
    PageKind("bots", bots_page, lambda q: [{}]),
    PageKind("ladder", ladder_page, lambda q: [{"ladder": r.name} for r in q.ladders()]),
    PageKind("comparison", comparison_page),
    PageKind("bot", bot_page, lambda q: [{"bot": b.name} for b in q.bots()]),
    PageKind("match", match_page),
    PageKind(
        "competition",
        competition_page,
        lambda q: [{"competition": c.name} for c in q.store.list_competitions()],
    ),
)
