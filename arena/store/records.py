"""The store's records: plain frozen dataclasses of what it keeps (bots, ladders, matches) and
of what its queries return (standings, rankings). No SQL here."""

from __future__ import annotations

import functools
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, TypeVar

from arena.ratings import Rater, RatingParams
from arena.seeds import new_match_id

R = TypeVar("R")


def from_row(
    record: Callable[..., R],
    columns: str,
    row: Sequence[Any],
    convert: Mapping[str, Callable[[Any], Any]] | None = None,
    **fields: Any,
) -> R:
    """A record built from a stored row: `columns` names the row's values in order as the
    record's fields (separated by commas or spaces: a SELECT's column list whose columns are
    named as the fields serves), `convert` turns a stored value into its field's (bool,
    json.loads), and `fields` gives the fields the row does not hold (or replaces a value)."""
    values = dict(zip(_names(columns), row))
    for name, to_field in (convert or {}).items():
        values[name] = to_field(values[name])
    values.update(fields)
    return record(**values)


@functools.cache
def _names(columns: str) -> tuple[str, ...]:
    """A column list's names, worked out once per list (every row of a query has the same)."""
    return tuple(columns.replace(",", " ").split())


def _fields(record: Any, names: str) -> dict[str, Any]:
    """The record's attributes `names` (space-separated), in that order: a record's to_dict."""
    return {name: getattr(record, name) for name in names.split()}


@dataclass(frozen=True, slots=True)
class Bot:
    id: int
    name: str
    command: str | None
    directory: str | None  # the working directory its command runs in
    remote: bool
    created: float
    suspended: bool
    suspended_reason: str | None
    removed: float | None
    # The bot's versions are rows of their own (docs/bots.md#versions): `family` is the bot's
    # name ('' in a record built by hand: taken as `name`), `version` counts from 1; version 1
    # is named as the bot, version N >= 2 NAME@N.
    family: str = ""
    version: int = 1
    note: str | None = None
    # A submitted version's state (docs/submit.md): "verifying" and "failed" versions play in no
    # ladder; of the "active" ones a ladder naming the bot plays the newest; "retired" ones
    # passed, and were replaced (or rolled back from). Versions made otherwise are "active".
    status: str = "active"

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.name)

    @property
    def argv(self) -> list[str]:
        """The command split into arguments (empty for a remote bot)."""
        return shlex.split(self.command) if self.command else []


@dataclass(frozen=True, slots=True)
class Submission:
    """A version uploaded by its owner (the bot row `bot`): its content digest, and its
    verification once run (verdict None: not yet). The log excerpt is for the owner only."""

    bot: str
    family: str
    version: int
    digest: str
    submitted: float
    passed: bool | None
    verdict: str | None
    log_excerpt: str | None
    opponents: tuple[str, ...]
    finished: float | None
    replayed: bool  # its verification match's replay is kept (Store.verification_replay)


@dataclass(frozen=True, slots=True)
class BotAccess:
    """A registered bot's current token (as its hash) and suspension: what a stream that
    authenticated earlier is checked against (Store.bot_access)."""

    token_hash: str | None
    suspended: bool
    suspended_reason: str | None


@dataclass(frozen=True, slots=True)
class Ladder:
    id: int
    name: str
    game: str
    options: dict[str, Any]
    table_size: int
    seed: int
    rounds: int
    rating_mode: str
    settings: dict[str, Any]  # the runner's settings, and rating_params as a dict
    created: float
    bots: tuple[str, ...]  # in ladder order (the order the schedule was drawn with)
    num_matches: int
    completed: int
    rated_through: int  # matches with index below this have been rated (or skipped)

    @property
    def config(self) -> dict[str, Any]:
        """The Game.config() of the ladder's matches."""
        return {"game": self.game, "num_players": self.table_size, "options": dict(self.options)}

    @property
    def rating_params(self) -> RatingParams:
        """The parameters the ladder is rated with (stored in its settings)."""
        return RatingParams.from_dict(self.settings.get("rating_params", {}))


@dataclass(slots=True)
class LadderInfo:
    """What recording and rating need of a ladder and never changes once it exists: kept by the
    store per ladder, for its rating application (rating.py)."""

    id: int
    name: str
    table_size: int
    rating_mode: str
    rater: Rater  # for this ladder's rating parameters
    bot_names: dict[int, str]


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A scheduled match as stored; `seats` are bot names."""

    ladder: str
    index: int
    set_index: int
    round: int
    rotation: int
    seed: int
    seats: tuple[str, ...]
    status: str
    attempts: int
    node: str | None
    started: float | None
    finished: float | None
    rated: bool
    rating_note: str | None
    # The opaque id its bots are told for its latest attempt (arena.seeds.new_match_id): made by
    # Store.start_match, which also gives the seeds its seats' bots get (from the store's
    # private key). Never shown publicly: a running match's id beside its ladder and index
    # would let a bot group the matches of a set.
    match_key: str | None = None
    bot_seeds: tuple[int, ...] = ()

    @classmethod
    def outside_ladder(
        cls, ladder: str, seats: Sequence[str], seed: int, rotation: int = 0
    ) -> "StoredMatch":
        """A match played with `ladder`'s game and limits but none of its matches (a
        version's verification, a scrimmage): no index, never rated; an opaque id as a
        ladder's (arena.seeds)."""
        return cls(
            ladder=ladder,
            index=-1,
            set_index=-1,
            round=0,
            rotation=rotation,
            seed=seed,
            seats=tuple(seats),
            status="running",
            attempts=1,
            node=None,
            started=None,
            finished=None,
            rated=False,
            rating_note=None,
            match_key=new_match_id(),
        )


@dataclass(frozen=True, slots=True)
class RecordOutcome:
    """What a record call did: whether it stored anything (False when the match had already been
    recorded: a result is never counted twice) and which match indexes got rated by it."""

    recorded: bool
    rated: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Standing:
    """A bot's place in one ladder: its rank by the conservative rating, its rating and its
    record there. The rankings (Store.rankings) fill every field; a bot's list of its ladders
    (BrowseQueries.bot_ladders) leaves the comparison with the next bot, which it does not
    read, None.
    The web's API models of it are made from this record (arena/web/models.py)."""

    ladder: str
    game: str
    rank: int
    of: int  # bots in the ladder
    bot: str
    conservative: float
    mu: float
    sigma: float
    matches: int
    mean_score: float | None
    wins: int
    faults: int
    suspended: bool
    # P(this bot's skill > the next one's), from the posteriors (ratings.p_better); None last.
    p_better_than_next: float | None = None
    # Better than the next and worse than the previous at the confidence (None: not worked out).
    settled: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return _fields(
            self,
            "rank bot conservative mu sigma matches mean_score wins faults p_better_than_next "
            "settled",
        )


@dataclass(frozen=True, slots=True)
class OpeningRound:
    """A ladder's opening round (arena.schedule: single matches, each rated on its own, before
    the duplicate sets) and how far the ladder is through it and through the sets after it."""

    matches: int  # the opening round's
    completed: int  # of them
    done: bool  # every one finished and rated: the sets are being rated now
    set_matches: int  # the duplicate sets' matches scheduled after it
    set_completed: int
    table_size: int  # a set's matches

    @classmethod
    def of(cls, ladder: Any) -> OpeningRound | None:
        """The opening round of a ladder's head (Rankings, or the web's LadderRow: `opening`,
        `opening_completed`, `scheduled`, `completed`, `rated`, `table_size`); None if it has
        none."""
        if not ladder.opening:
            return None
        return cls(
            matches=ladder.opening,
            completed=ladder.opening_completed,
            done=ladder.rated >= ladder.opening,
            set_matches=ladder.scheduled - ladder.opening,
            set_completed=ladder.completed - ladder.opening_completed,
            table_size=ladder.table_size,
        )

    @property
    def sets(self) -> int:
        return self.set_matches // self.table_size

    def describe(self) -> str:
        """One line: "opening round: 12 of 21 single matches played; then 35 duplicate sets
        (105 matches): 0 played"."""
        state = " (done)" if self.done else ""
        return (
            f"opening round: {self.completed} of {self.matches} single matches played{state}; "
            f"then {self.sets} duplicate set{'s' if self.sets != 1 else ''} "
            f"({self.set_matches} matches): {self.set_completed} played"
        )

    def to_dict(self) -> dict[str, Any]:
        return _fields(self, "matches completed done set_matches set_completed")


@dataclass(frozen=True, slots=True)
class Rankings:
    ladder: str
    game: str
    options: dict[str, Any]
    table_size: int
    rating_mode: str
    scheduled: int
    completed: int
    rated: int
    confidence: float  # at which a standing is `settled`
    standings: tuple[Standing, ...] = field(default=())
    # Its opening round's matches (0: none; the schedule's first) and how many completed.
    opening: int = 0
    opening_completed: int = 0

    @property
    def all_settled(self) -> bool:
        """Every rank settled: each bot better than the next at the confidence."""
        return all(s.settled for s in self.standings)

    @property
    def opening_round(self) -> OpeningRound | None:
        return OpeningRound.of(self)

    def to_dict(self) -> dict[str, Any]:
        opening = self.opening_round
        return {
            **_fields(
                self,
                "ladder game options table_size rating_mode scheduled completed rated "
                "confidence all_settled",
            ),
            "opening_round": opening.to_dict() if opening is not None else None,
            "standings": [s.to_dict() for s in self.standings],
        }


@dataclass(slots=True)
class MatchScores:
    """A match's status and, once completed, each seat's bot, score and rank (seat order)."""

    index: int
    set_index: int
    status: str
    bots: list[str]
    scores: list[int]
    ranks: list[int]
