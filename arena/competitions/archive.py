"""A published competition's results archive: written from the store, checked again by anyone.

The archive is a zip of JSON files:

    competition.json      what was played: game, table size, options, the entrants, the finals'
                          seed, rounds, whether they opened with an opening round (absent:
                          no), rating mode and parameters, confidence and budget, and why the
                          finals stopped (settled or budget)
    standings.json        the final standings: rank, bot, mu, sigma, the rating interval,
                          P(better than the next), matches
    crosstable.json       for each pair of bots, how often each finished above the other
    matches/NNNNNN.json   every final match: index, set, round, rotation, seed, seats, status
                          and its replay (arena.replay's format)

`verify` re-derives it all: the schedule from the finals' seed (every match is the one the seed
made: no deal was chosen), each replay re-run through the engine (arena.replay.verify: its result
follows from its moves), the ratings recomputed from the results in schedule order (each duplicate
set rated once, as the store rates the finals: by their score margins, or in an archive from before
margins were the finals' mode, by TrueSkill's set mode), and the standings, the crosstable and the
stopping reason compared with what the archive says. Any difference is a problem named by what
differs; an archive with none is accepted.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from arena import replay
from arena.margins import MarginModel, fault_adjusted
from arena.ratings import (
    CALIBRATED_WIDEN,
    MARGINS_MODE,
    SET_MODE,
    Rater,
    RatingParams,
    SkillRating,
    p_better_calibrated,
    rating_interval,
    set_ranks,
)
from arena.results import COMPLETED
from arena.schedule import make_schedule, tables_per_round

from .phases import finals_verdict

FORMAT = "arena-competition-archive"
VERSION = 1
_TOLERANCE = 1e-9  # ratings recomputed here and by the store agree to rounding


class ArchiveError(ValueError):
    """A file that is not a competition archive, or a damaged one (the message says which)."""


@dataclass
class Verification:
    matches: int = 0  # re-run through the engine
    problems: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return not self.problems


def write(
    competition: Mapping[str, Any],
    standings: Sequence[Mapping[str, Any]],
    matches: Sequence[Mapping[str, Any]],
) -> bytes:
    """The archive's bytes (a zip with fixed dates: the same results give the same bytes)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:

        def put(name: str, doc: Any) -> None:
            info = zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, json.dumps(doc, indent=1, sort_keys=True))

        put("competition.json", {"format": FORMAT, "version": VERSION, **competition})
        put("standings.json", list(standings))
        put("crosstable.json", crosstable(competition["entrants"], matches))
        for m in matches:
            put(f"matches/{m['index']:06d}.json", m)
    return out.getvalue()


def read(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], list[dict]]:
    """(competition, standings, crosstable, matches in index order) of an archive."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            docs = {name: json.loads(zf.read(name)) for name in zf.namelist()}
    except (zipfile.BadZipFile, ValueError, KeyError) as err:
        raise ArchiveError(f"not a competition archive (a zip of JSON files): {err}") from None
    competition = docs.get("competition.json")
    if not isinstance(competition, dict) or competition.get("format") != FORMAT:
        raise ArchiveError(f"not a competition archive: no competition.json of format {FORMAT!r}")
    if competition.get("version") != VERSION:
        raise ArchiveError(
            f"a version {competition.get('version')!r} archive; this Arena reads version {VERSION}"
        )
    for name in ("standings.json", "crosstable.json"):
        if name not in docs:
            raise ArchiveError(f"the archive has no {name}: it is incomplete")
    matches = [docs[n] for n in sorted(docs) if n.startswith("matches/")]
    return competition, docs["standings.json"], docs["crosstable.json"], matches


def crosstable(entrants: Sequence[str], matches: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`above[i][j]`: the completed matches in which entrant i finished above entrant j."""
    at = {bot: i for i, bot in enumerate(entrants)}
    above = [[0] * len(entrants) for _ in entrants]
    for m in matches:
        if m["status"] != COMPLETED:
            continue
        ranks = m["replay"]["ranks"]
        for s, a in enumerate(m["seats"]):
            for t, b in enumerate(m["seats"]):
                if ranks[s] < ranks[t]:
                    above[at[a]][at[b]] += 1
    return {"bots": list(entrants), "above": above}


# P(the first bot is better than the second), as the finals' rating mode computes it.
Better = Callable[[str, str], float]


def standings_from(
    ratings: Mapping[str, SkillRating],
    played: Mapping[str, int],
    params: RatingParams,
    better: Better,
) -> list[dict[str, Any]]:
    """The standings of these ratings: best first by the conservative rating (then mu, then
    name, as the store's rankings), each with its interval and P(better than the next)."""
    rater = Rater(params)
    order = sorted(ratings, key=lambda b: (-rater.conservative(ratings[b]), -ratings[b].mu, b))
    out = []
    for rank, bot in enumerate(order):
        r = ratings[bot]
        low, high = rating_interval(r.mu, r.sigma, params)
        nxt = order[rank + 1] if rank + 1 < len(order) else None
        out.append(
            {
                "rank": rank + 1,
                "bot": bot,
                "mu": r.mu,
                "sigma": r.sigma,
                "low": low,
                "high": high,
                "p_better_than_next": better(bot, nxt) if nxt is not None else None,
                "matches": played.get(bot, 0),
            }
        )
    return out


def rate(
    entrants: Sequence[str], params: RatingParams, matches: Sequence[Mapping], mode: str
) -> tuple[dict[str, SkillRating], dict[str, int], Better]:
    """The finals' ratings from their results, and how P(better) follows from them: each
    duplicate set (the consecutive matches sharing a set index: a table's worth, or one in an
    opening round) rated once as the store rates a ladder in `mode`, margins (arena.margins:
    faulted seats' scores at most their table's lowest) or set (a set with one completed match
    by its ranks, with more by their summed scores: arena.ratings.set_ranks); a set with no
    completed match is skipped."""
    rater = Rater(params)
    model = MarginModel()  # margins: the bots join as they first play, as in the store
    ratings = {bot: rater.initial() for bot in entrants}
    played = {bot: 0 for bot in entrants}
    for _, in_set in itertools.groupby(matches, key=lambda m: m["set_index"]):
        done = [m for m in in_set if m["status"] == COMPLETED]
        if not done:
            continue
        faulted = [{f["seat"] for f in m["replay"]["faults"]} for m in done]
        if mode == MARGINS_MODE:
            model.observe(
                [
                    (m["seats"], fault_adjusted(m["replay"]["scores"], seats))
                    for m, seats in zip(done, faulted)
                ]
            )
        else:
            if len(done) == 1:
                ranks = dict(zip(done[0]["seats"], done[0]["replay"]["ranks"]))
            else:
                ranks = set_ranks(
                    (m["seats"], m["replay"]["scores"], seats) for m, seats in zip(done, faulted)
                )
            update = rater.rate({b: ratings[b] for b in ranks}, ranks)
            ratings.update(update.ratings)
        for m in done:
            for bot in m["seats"]:
                played[bot] += 1
    if mode == MARGINS_MODE:
        for bot in entrants:
            model.join(bot)
        ratings = {bot: model.rating(bot) for bot in entrants}
        widen = CALIBRATED_WIDEN[MARGINS_MODE]
        return ratings, played, lambda a, b: model.p_better(a, b, widen)
    return ratings, played, lambda a, b: p_better_calibrated(ratings[a], ratings[b], mode)


def verify(data: bytes) -> Verification:
    """Check an archive again (the module's docstring says how); raises ArchiveError for a file
    that is not one."""
    competition, standings, table, matches = read(data)
    result = Verification()
    problems = result.problems
    try:
        entrants = list(competition["entrants"])
        k = int(competition["table_size"])
        finals = competition["finals"]
        params = RatingParams.from_dict(finals["rating_params"])
        # An opening round of single matches (arena.schedule), if the finals had one (a
        # competition's finals have none; an archive from before this key had none either).
        opening = finals.get("opening_round", False)
        if not isinstance(opening, bool):
            raise ValueError(f"opening_round is {opening!r}, not true or false")
        schedule = make_schedule(
            entrants, k, int(finals["rounds"]), int(finals["seed"]),
            max_full_tables=int(finals["max_full_tables"]), opening_round=opening,
        )  # fmt: skip
    except (KeyError, TypeError, ValueError) as err:
        raise ArchiveError(f"competition.json is damaged: {err!r}") from None
    # The ratings are recomputed as the finals' mode rates (margins; set in archives from
    # before margins): another mode's standings would be checked against the wrong ratings.
    mode = finals.get("rating_mode", SET_MODE)
    if mode not in (MARGINS_MODE, SET_MODE):
        problems.append(
            f"the finals were rated in {mode!r} mode; verify recomputes the ratings of "
            f"{MARGINS_MODE!r} and {SET_MODE!r} mode only"
        )
        return result
    if len(matches) != len(schedule):
        problems.append(
            f"the archive holds {len(matches)} matches; the finals' seed and rounds make "
            f"{len(schedule)}"
        )
    for m, s in zip(matches, schedule):
        where = f"match {s.index}"
        planned = (s.index, s.set_index, s.round, s.rotation, s.seed, list(s.seats))
        found = (m["index"], m["set_index"], m["round"], m["rotation"], m["seed"], m["seats"])
        if found != planned:
            problems.append(f"{where} is not the one the finals' seed schedules ({found})")
            continue
        if m["status"] != COMPLETED:
            continue
        try:
            doc = replay.check(m["replay"], where)
            if doc["seed"] != s.seed or doc["seat_names"] != list(s.seats):
                raise replay.ReplayError("its replay is of another deal or seating")
            if doc["config"] != {
                "game": competition["game"],
                "num_players": k,
                "options": competition["options"],
            }:
                raise replay.ReplayError("its replay is of another game or variant")
            replay.verify(doc)
            result.matches += 1
        except replay.ReplayError as err:
            problems.append(f"{where}: {err}")
    if problems:
        return result
    ratings, played, better = rate(entrants, params, matches, mode)
    recomputed = standings_from(ratings, played, params, better)
    if [s.get("bot") for s in standings] != [s["bot"] for s in recomputed]:
        problems.append(
            "the standings do not follow from the results: they give the order "
            f"{[s.get('bot') for s in standings]}, the results {[s['bot'] for s in recomputed]}"
        )
    else:
        for given, mine in zip(standings, recomputed):
            for key in ("mu", "sigma", "matches"):
                if not _close(given.get(key), mine[key]):
                    problems.append(
                        f"the standings give {given['bot']} {key} {given.get(key)}; the results "
                        f"give {mine[key]}"
                    )
    if table != crosstable(entrants, matches):
        problems.append("the crosstable does not follow from the results")
    rounds = int(finals["rounds"])
    for r in range(rounds):
        upto = [m for m in matches if m["round"] <= r]
        ratings, played, better = rate(entrants, params, upto, mode)
        ranked = standings_from(ratings, played, params, better)
        p_next = [s["p_better_than_next"] for s in ranked[:-1]]
        verdict = finals_verdict(
            p_next,
            float(finals["confidence"]),
            len(upto),
            tables_per_round(len(entrants), k, int(finals["max_full_tables"])) * k,
            int(finals["max_matches"]),
        )
        if r < rounds - 1 and verdict is not None:
            problems.append(f"the finals should have ended ({verdict}) after round {r + 1}")
        elif r == rounds - 1 and verdict != finals.get("end"):
            problems.append(
                f"the archive says the finals ended as {finals.get('end')!r}; after these "
                f"{len(upto)} matches the rule gives {verdict!r}"
            )
    return result


def _close(a: Any, b: float) -> bool:
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=0, abs_tol=_TOLERANCE)
