"""TrueSkill ratings of a ladder: one explicit environment, a match rated as a free-for-all.

The environment is built from `RatingParams` (stored with each ladder, so a ladder's ratings can
always be recomputed with the parameters it was rated with); `trueskill.setup()` and the global
environment are never used.

- mu 25, sigma 25/3: TrueSkill's standard scale; the conservative rating mu - 3 sigma starts at 0.
- beta 25/6: the skill difference that gives the better bot about a 76% chance to beat the other
  in one match; TrueSkill's default, and card games with one deal per match are luck-heavy enough
  that a smaller beta would overreact.
- tau 25/300: the default dynamics factor, which keeps sigma from collapsing over long ladders so
  that a bot that is replaced by a better version can still climb.
- draw_probability 0.05: a "draw" here is two seats with equal final scores. Both games score
  tens of points per match (Balloon: five rounds of hand sums and bonus chips; Boom: rescued cards
  plus face values), so two equally strong seats end on the same total rarely; ties concentrate
  among weak bots that bust to zero. 5% is an estimate of that rate (TrueSkill's default of 10%
  models games like chess where draws are a real outcome); the value is a ladder setting.

"Settled": the leaderboard's P(better than the next) and the settle rule (`every_pair_settled`,
used by `arena ladder run --until-settled` and meant for a competition's finals) are TrueSkill's
posterior probability with the spread widened per rating mode (`CALIBRATED_WIDEN`), calibrated by
`scripts/bench.py rating` so that pairs called settled at 0.95 are right at least 95% of the
time on every measured pool. For a field whose skills do not change (finals among frozen
entrants) a rater with tau 0 settles sooner and was as well calibrated (docs/benchmarks.md).

A match is rated from its ranks (0 best, equal ranks tie; the referee has already put faulted
seats last), each seat a team of one keyed by the bot's id, so a fault is a rated loss.

Extreme upsets can make the factor graph's truncated-Gaussian update underflow, which trueskill
reports as FloatingPointError. Then the match is rated again with the higher-precision backends
that are installed (mpmath, then scipy); if every backend fails, the ratings are left unchanged
for that match and the update says why (the store records that note with the match). With the
parameters above this needs a mu gap of hundreds of points, far outside what ladders produce.

Rating modes: "margins" (the default for a new ladder, in `arena ladder run`, `arena serve` and a
competition's finals) rates each duplicate set by its bots' score margins with a Gaussian model
kept whole (arena.margins: not TrueSkill; its figures are there). "set" rates each duplicate set
once with TrueSkill, as one free-for-all ranked by the bots' summed scores over the set (a bot
that faulted in any match of the set ranks below those that did not); "match" updates after every
match. An existing ladder keeps the mode it was created with. What follows is about the TrueSkill
modes.

Why set (over match): measured by `scripts/bench.py rating` (docs/benchmarks.md#rating), the number
of matches a ladder needs before its leaderboard reaches and keeps the right order (Kendall tau >=
0.9), on pools of 7 bots of known order. Per-match rating of duplicate sets does NOT converge
faster, as this docstring used to say: each match of a set rates the same deal again, so TrueSkill,
which takes every match as independent evidence, is told the deal's luck k times and chases it;
rated once by summed scores, the deal's luck cancels before TrueSkill sees the result. Medians of 5
trials, cap 2,000 matches:

    pool (7 bots)        plain TrueSkill   duplicate, per match   duplicate, set
    Balloon 3p, close    971               401                    321
    Balloon 4p, close    > 2,000           > 2,000                420
    Boom 4p, close       > 2,000           > 2,000                472
    Boom 4p adv., close  > 2,000           > 2,000                580
    Boom 4p, wide        > 2,000           > 2,000                156

A run of 8 trials gave 226, 214, 738, 846 and 154 for set mode on the same rows, with per-match
and plain still above it on every row. On pools whose order is obvious (Balloon's wide pool:
plain finds it in 36 to 103 matches) every way finds it within about one round, per-match a
little sooner than set.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Iterator, Mapping, Sequence, TypeVar

from arena.results import demote_faulted

if TYPE_CHECKING:
    import trueskill  # imported where used: reading rankings needs no TrueSkill maths

MATCH_MODE = "match"
SET_MODE = "set"
# Each set rated by its score margins (arena.margins), not TrueSkill: the default since issue 31.
MARGINS_MODE = "margins"
RATING_MODES = (MATCH_MODE, SET_MODE, MARGINS_MODE)
# The mode of a new ladder (`arena ladder run`, `arena serve`); see the module docstring.
DEFAULT_RATING_MODE = MARGINS_MODE
# The confidence at which the leaderboard calls a rank settled (see p_better_calibrated).
SETTLED_CONFIDENCE = 0.95
# How much wider than TrueSkill's posteriors say the leaderboard takes the gap between two bots'
# skills to be before it calls their order settled, per rating mode. Measured by `scripts/bench.py
# rating`'s calibration part (docs/benchmarks.md#rating): over pools of known order on both
# games, each time an adjacent pair of the board became settled at 0.95, how often it was in the
# right order, for widenings 1 to 3; each mode's figure is the smallest that was right at least
# 95% of the time on every pool. Set mode needs none: rated once per set by summed scores, and
# with TrueSkill's dynamics factor keeping sigma from collapsing, its calls were right 98.3% to
# 100% of the time unwidened. Per-match rating of duplicate sets tells TrueSkill each deal's luck
# k times as if it were k independent results, and its posteriors are narrower than the evidence.
# The margin model's calls (P(better) of the two bots' difference under its full covariance) were
# right 99.3% to 100% of the time unwidened.
CALIBRATED_WIDEN = {SET_MODE: 1.0, MATCH_MODE: 1.5, MARGINS_MODE: 1.0}

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class RatingParams:
    """The parameters of a ladder's TrueSkill environment (see the module docstring)."""

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0
    draw_probability: float = 0.05

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RatingParams":
        return cls(**{k: float(v) for k, v in d.items() if k in cls.__dataclass_fields__})


STANDARD = RatingParams()
# For a field whose skills do not change while it is rated (a competition's finals among frozen
# entrants): no dynamics factor, so sigma keeps shrinking with the evidence instead of holding a
# floor that close neighbours never get out of. Measured by `scripts/bench.py rating` (way
# "duplicate, set, tau 0"): as well calibrated as the default at CALIBRATED_WIDEN[SET_MODE], and
# it settles every adjacent pair where the default does not within the cap (docs/benchmarks.md).
FROZEN_FIELD = RatingParams(tau=0.0)


def rating_interval(
    mu: float, sigma: float, params: RatingParams = STANDARD
) -> tuple[float, float]:
    """Where a bot's skill almost surely lies: mu ± 3 sigma with the standard parameters
    (mu ± (mu0 / sigma0) sigma). Its low end is the conservative rating."""
    k = params.mu / params.sigma
    return mu - k * sigma, mu + k * sigma


def conservative(mu: float, sigma: float, params: RatingParams = STANDARD) -> float:
    """The conservative rating, the leaderboard's value: mu - 3 sigma with the standard
    parameters (TrueSkill's env.expose, mu - (mu0 / sigma0) sigma), the skill a bot has almost
    surely earned. Defined here only: the store ranks by it (Rater.conservative), the web draws
    and shows it."""
    return rating_interval(mu, sigma, params)[0]


@dataclass(frozen=True, slots=True)
class SkillRating:
    """One bot's rating: the mean and uncertainty of its skill."""

    mu: float
    sigma: float


@dataclass(frozen=True, slots=True)
class RatingUpdate:
    """The ratings after one match (or set), for every bot that took part. `note` is empty when
    the primary backend rated it, else it says which fallback was used or why it was skipped."""

    ratings: dict[Any, SkillRating]
    note: str = ""
    skipped: bool = False


def _backends_after_default() -> list[str]:
    # find_spec, not import: importing scipy costs half a second and is needed only on a failure.
    return [b for b in ("mpmath", "scipy") if importlib.util.find_spec(b) is not None]


@dataclass(slots=True)
class Rater:
    """Rates matches with one TrueSkill environment built from `params`."""

    params: RatingParams = field(default_factory=RatingParams)
    env: trueskill.TrueSkill = field(init=False)
    _fallbacks: list[trueskill.TrueSkill] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.env = self._make_env(None)

    def _fallback_envs(self) -> list[trueskill.TrueSkill]:
        if self._fallbacks is None:
            self._fallbacks = [self._make_env(b) for b in _backends_after_default()]
        return self._fallbacks

    def _make_env(self, backend: str | None) -> trueskill.TrueSkill:
        import trueskill  # here, not at the top: reading rankings needs no TrueSkill maths

        p = self.params
        return trueskill.TrueSkill(
            mu=p.mu,
            sigma=p.sigma,
            beta=p.beta,
            tau=p.tau,
            draw_probability=p.draw_probability,
            backend=backend,
        )

    def _envs(self) -> Iterator[trueskill.TrueSkill]:
        yield self.env
        yield from self._fallback_envs()  # built only when the default backend failed

    def initial(self) -> SkillRating:
        return SkillRating(self.params.mu, self.params.sigma)

    def conservative(self, rating: SkillRating) -> float:
        """The leaderboard value (`conservative`, with this ladder's parameters)."""
        return conservative(rating.mu, rating.sigma, self.params)

    def rate(self, before: Mapping[K, SkillRating], ranks: Mapping[K, int]) -> RatingUpdate:
        """Rate one free-for-all: `ranks` maps each bot (in seat order) to its rank, 0 best,
        equal ranks tie; `before` holds each bot's rating before the match."""
        bots = list(ranks)
        if len(bots) < 2:
            raise ValueError("a rated match needs at least two bots")
        notes = []
        for env in self._envs():
            groups = [{bot: env.create_rating(before[bot].mu, before[bot].sigma)} for bot in bots]
            try:
                rated = env.rate(groups, ranks=[ranks[bot] for bot in bots])
            except FloatingPointError as exc:
                notes.append(f"{env.backend or 'default'} backend: {exc}")
                continue
            after = {
                bot: SkillRating(float(r.mu), float(r.sigma))
                for group in rated
                for bot, r in group.items()
            }
            if all(math.isfinite(r.mu) and math.isfinite(r.sigma) for r in after.values()):
                note = (
                    ""
                    if env is self.env
                    else (f"rated with the {env.backend} backend after FloatingPointError")
                )
                return RatingUpdate(after, note)
            notes.append(f"{env.backend or 'default'} backend: non-finite rating")
        return RatingUpdate(
            {bot: before[bot] for bot in bots},
            "not rated (ratings unchanged): " + "; ".join(notes),
            skipped=True,
        )


def p_better(a: SkillRating, b: SkillRating, widen: float = 1.0) -> float:
    """The probability that a's skill is above b's under their TrueSkill posteriors (independent
    Gaussians): P(skill_a > skill_b) = Phi((mu_a - mu_b) / sqrt(sigma_a^2 + sigma_b^2)), with
    that spread multiplied by `widen` (1: the posteriors as they are; see p_better_calibrated).

    Skill, not performance: P(perf_a > perf_b) would add each bot's performance variance beta^2
    and answer "does a beat b in one match", which stays near 76% per 25/6 of skill however many
    matches were played. Whether a is really the better bot is a question about skills, and its
    answer goes to 0 or 1 as the evidence grows, which is what makes a rank settle."""
    if widen <= 0.0:
        raise ValueError(f"widen must be positive, not {widen}")
    spread = math.hypot(a.sigma, b.sigma) * widen
    if spread == 0.0:
        return 1.0 if a.mu > b.mu else 0.0 if a.mu < b.mu else 0.5
    return 0.5 * math.erfc((b.mu - a.mu) / (spread * math.sqrt(2.0)))


def p_better_calibrated(a: SkillRating, b: SkillRating, mode: str = DEFAULT_RATING_MODE) -> float:
    """P(a is better than b) as the leaderboard shows it and the settle rule uses it, for a
    ladder rated in `mode`: `p_better` with the gap's spread widened by CALIBRATED_WIDEN[mode],
    so that a pair called settled at confidence c is in the right order at least c of the time
    (measured at 0.95)."""
    return p_better(a, b, CALIBRATED_WIDEN[mode])


def p_next(board: Sequence[SkillRating], mode: str = DEFAULT_RATING_MODE) -> list[float]:
    """For a leaderboard (ratings best first) rated in `mode`, the calibrated probability that
    each bot is better than the one just below it: one item fewer than the board."""
    return [p_better_calibrated(a, b, mode) for a, b in zip(board, board[1:])]


def every_pair_settled(
    board: Sequence[SkillRating],
    confidence: float = SETTLED_CONFIDENCE,
    mode: str = DEFAULT_RATING_MODE,
) -> bool:
    """The settle rule (the leaderboard's "every rank settled", `arena ladder run
    --until-settled`, a competition's finals): every bot of the board (ratings best first,
    rated in `mode`) is better than the one just below it with calibrated probability at least
    `confidence`."""
    return all(p >= confidence for p in p_next(board, mode))


def adjacent_settled(p_next: Sequence[float], confidence: float) -> list[bool]:
    """Whether each rank of a leaderboard is settled at `confidence`: `p_next[i]` is the
    probability that the bot at rank i is better than the one just below it (one item fewer
    than the ranks); a rank is settled when it is, at that confidence, better than the one below
    and worse than the one above."""
    n = len(p_next) + 1
    return [
        (i == 0 or p_next[i - 1] >= confidence) and (i == n - 1 or p_next[i] >= confidence)
        for i in range(n)
    ]


def set_ranks(matches: Iterable[tuple[Sequence[K], Sequence[int], Iterable[int]]]) -> dict[K, int]:
    """The ranks of one duplicate set rated as a whole: each item is one match of the set as
    (bot per seat, score per seat, faulted seats). Bots are ranked by their summed scores; a bot
    that faulted in any match ranks below every bot that did not (as within a match)."""
    totals: dict[K, int] = {}
    faulted: set[K] = set()
    for seats, scores, faulted_seats in matches:
        for seat, bot in enumerate(seats):
            totals[bot] = totals.get(bot, 0) + scores[seat]
        faulted.update(seats[s] for s in faulted_seats)
    bots = list(totals)
    ranks = demote_faulted(
        tuple(totals[b] for b in bots), {i for i, b in enumerate(bots) if b in faulted}
    )
    return dict(zip(bots, ranks))
