"""A comparison's verdict, pure: what a comparison is (`Comparison`, stored with its ladder), the
paired observations its stored results give, the sequential test over them (`outcome`), the
test's path for the chart, and the verdict as JSON. No store, no executor: the runner
(runner.py) plays the deals and asks here after each batch; the web's comparison page reads the
same stored results and shows the same verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from arena.results import COMPLETED, FINISHED

from . import plan, sprt


@dataclass(frozen=True)
class Comparison:
    """What makes a comparison: the two versions, the opponents, the game and the test's
    bounds. Stored with the comparison's ladder (`definition`, read back by `stored`)."""

    name: str
    new: str
    base: str
    opponents: tuple[str, ...]
    game: str
    table_size: int
    options: dict
    min_gain: float  # D: "NEW is better by at least D points per match"
    alpha: float = 0.05
    beta: float = 0.05
    max_matches: int = 2000
    seed: int = 0
    # A non-regression test: H0 "NEW loses min_gain points per match" against H1 "NEW loses
    # nothing" (fishtest's non-regression tests, docs/compare.md).
    non_regression: bool = False

    @property
    def hypotheses(self) -> sprt.Hypotheses:
        if self.non_regression:
            return sprt.Hypotheses(
                delta1=0.0,
                delta0=-self.min_gain,
                alpha=self.alpha,
                beta=self.beta,
                non_regression=True,
            )
        return sprt.Hypotheses(delta1=self.min_gain, alpha=self.alpha, beta=self.beta)

    @property
    def mode(self) -> str:
        return "non-regression" if self.non_regression else "gain"

    @property
    def matches_per_deal(self) -> int:
        return 2 * self.table_size

    @property
    def max_deals(self) -> int:
        return max(1, self.max_matches // self.matches_per_deal)

    def definition(self) -> dict[str, Any]:
        """What makes the comparison the same one when it is run again (stored with it)."""
        return {
            "new": self.new,
            "base": self.base,
            "opponents": list(self.opponents),
            "min_gain": self.min_gain,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_matches": self.max_matches,
            # Only when set: a stored gain test's definition stays as it was.
            **({"mode": self.mode} if self.non_regression else {}),
        }


def stored(ladder: Any) -> Comparison:
    """The comparison a stored ladder holds (its settings hold the definition); ValueError if
    the ladder is not a comparison."""
    d = ladder.settings.get("comparison")
    if not d:
        raise ValueError(f"{ladder.name!r} is a ladder, not a comparison")
    return Comparison(
        name=ladder.name,
        new=d["new"],
        base=d["base"],
        opponents=tuple(d["opponents"]),
        game=ladder.game,
        table_size=ladder.table_size,
        options=dict(ladder.options),
        min_gain=d["min_gain"],
        alpha=d["alpha"],
        beta=d["beta"],
        max_matches=d["max_matches"],
        seed=ladder.seed,
        non_regression=d.get("mode") == "non-regression",
    )


@dataclass
class Outcome:
    """Where a comparison stands: the test over its complete deals, in deal order."""

    status: sprt.Status
    gain: sprt.Running  # NEW's mean gain in points per match, per deal
    rank_gain: sprt.Running  # NEW's mean gain in places per match (positive: NEW placed better)
    deals: int  # deals the test used
    matches: int  # matches played (completed or given up) in all
    void_deals: int = 0  # deals with a match given up (no observation)
    interrupted: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str | None:
        return self.status.verdict


def observations(
    k: int, new: str, base: str, rows: Sequence[Any]
) -> tuple[list[tuple[float, float]], int, int]:
    """(gain, rank gain) per complete deal, in deal order up to the first deal not finished;
    with the number of deals with a match given up (skipped: no pair to compare), and the number
    of matches finished. `rows` are Store.match_scores rows."""
    by_deal: dict[int, list[Any]] = {}
    finished = 0
    for row in rows:
        by_deal.setdefault(row.set_index, []).append(row)
        finished += row.status in FINISHED
    out: list[tuple[float, float]] = []
    void = 0
    for deal in sorted(by_deal):
        matches = by_deal[deal]
        if len(matches) < 2 * k or any(m.status not in FINISHED for m in matches):
            break
        if any(m.status != COMPLETED for m in matches):
            void += 1
            continue
        scores: dict[str, list[float]] = {new: [], base: []}
        ranks: dict[str, list[float]] = {new: [], base: []}
        for m in matches:
            for side in (new, base):
                if side in m.bots:
                    seat = m.bots.index(side)
                    scores[side].append(m.scores[seat])
                    ranks[side].append(m.ranks[seat])
        out.append(
            (
                plan.observation(k, scores[new], scores[base]),
                plan.observation(k, ranks[base], ranks[new]),
            )
        )
    return out, void, finished


def outcome(comparison: Comparison, rows: Sequence[Any]) -> Outcome:
    """The test over the stored results (pure: the same results give the same outcome)."""
    pairs, void, finished = observations(
        comparison.table_size, comparison.new, comparison.base, rows
    )
    spec = comparison.hypotheses
    gain, rank_gain = sprt.Running(), sprt.Running()
    status = sprt.status(spec, gain, comparison.max_deals)
    used = 0
    for x, r in pairs:
        gain, rank_gain = gain.add(x), rank_gain.add(r)
        used += 1
        status = sprt.status(spec, gain, comparison.max_deals)
        if status.verdict is not None:
            break
    return Outcome(
        status=status, gain=gain, rank_gain=rank_gain, deals=used, matches=finished, void_deals=void
    )


def llr_path(comparison: Comparison, rows: Sequence[Any]) -> list[float]:
    """The test's LLR after each deal it used (for the comparison's chart)."""
    pairs, _, _ = observations(comparison.table_size, comparison.new, comparison.base, rows)
    spec, running, out = comparison.hypotheses, sprt.Running(), []
    for x, _ in pairs[: outcome(comparison, rows).deals]:
        running = running.add(x)
        out.append(sprt.llr(spec, running))
    return out


def _finite(x: float) -> float | None:
    """JSON has no infinity and no NaN."""
    return None if x != x or x in (math.inf, -math.inf) else round(x, 6)


def _effect(gain: sprt.Running) -> dict[str, Any] | None:
    effect = gain.effect_size()
    if effect is None:
        return None
    d, low, high = effect
    return {"d": _finite(d), "interval": [_finite(low), _finite(high)]}


def outcome_json(comparison: Comparison, o: Outcome) -> dict[str, Any]:
    s = o.status
    return {
        "comparison": comparison.name,
        "new": comparison.new,
        "base": comparison.base,
        "opponents": list(comparison.opponents),
        "game": comparison.game,
        "table_size": comparison.table_size,
        "options": comparison.options,
        "mode": comparison.mode,
        "min_gain": comparison.min_gain,
        "hypotheses": [comparison.hypotheses.delta0, comparison.hypotheses.delta1],
        "alpha": comparison.alpha,
        "beta": comparison.beta,
        "max_matches": comparison.max_matches,
        "seed": comparison.seed,
        "verdict": o.verdict,
        "interrupted": o.interrupted,
        "deals": s.n,
        "matches": o.matches,
        "void_deals": o.void_deals,
        "mean_gain": _finite(s.mean),
        "interval": [_finite(s.low), _finite(s.high)],
        "mean_rank_gain": _finite(o.rank_gain.mean) if o.rank_gain.n else None,
        "los": _finite(los) if (los := o.gain.los()) is not None else None,
        "effect_size": _effect(o.gain),
        "llr": _finite(s.llr),
        "bounds": [_finite(s.lower), _finite(s.upper)],
    }
