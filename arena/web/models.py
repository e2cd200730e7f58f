"""The JSON API's response models (pydantic): what /openapi.json describes and the API returns."""

from __future__ import annotations

import typing
from enum import Enum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, create_model

from arena.store import MATCH_STATUSES, Standing

MatchStatus = Enum("MatchStatus", {s.upper(): s for s in MATCH_STATUSES}, type=str)  # type: ignore[misc]
MatchStatus.__doc__ = "A stored match's status."


def record_model(
    name: str, record: type, **fields: str | tuple[Any, str] | None
) -> type[BaseModel]:
    """The API model of a store record: the named fields of it, in that order, each required,
    typed as the record types it (or as given: (type, description)) and with its description."""
    hints = typing.get_type_hints(record)
    spec: dict[str, Any] = {}
    for field, about in fields.items():
        kind, description = about if isinstance(about, tuple) else (hints[field], about)
        spec[field] = (kind, Field(description=description) if description else ...)
    return create_model(name, **spec)


class ErrorDetail(BaseModel):
    status: int = Field(description="the HTTP status code")
    message: str = Field(description="what was wrong and what to do")


class ErrorOut(BaseModel):
    error: ErrorDetail


class LadderOut(BaseModel):
    name: str
    game: str
    options: dict[str, Any]
    table_size: int
    rating_mode: str
    bots: int = Field(description="bots in the ladder")
    scheduled: int = Field(description="matches in its schedule")
    completed: int
    rated: int = Field(description="matches rated so far (schedule order)")
    created: float = Field(description="Unix time")
    leader: str | None = Field(description="the bot ranked first, once a match is rated")
    remote_bots: int = Field(
        description="its remote bots (run on their owners' machines): a remote bot can see "
        "every hand of a set over its rotations, so results are fair only among trusted "
        "remote bots"
    )
    opening: int = Field(
        description="matches of its opening round (single matches, each rated on its own, "
        "before the duplicate sets: the schedule's first); 0 if it has none"
    )
    opening_completed: int = Field(description="of its opening round's matches, completed")


# A bot's standing in a ladder: the store's record (arena.store.Standing), in two views.
if TYPE_CHECKING:  # built at run time from the record's fields: a model to the checker
    StandingOut = BaseModel
    BotLadderOut = BaseModel
else:
    StandingOut = record_model(
        "StandingOut",
        Standing,
        rank="1 = best, by the conservative rating",
        bot=None,
        conservative="mu - 3 sigma",
        mu=None,
        sigma=None,
        matches=None,
        mean_score=None,
        wins="first places, shared ones included",
        faults=None,
        p_better_than_next=(
            float | None,
            "probability that this bot's skill is above the next "
            "one's (in the ladder's rating mode: margins, its model with the two bots' "
            "covariance; set or match, TrueSkill posteriors); null for the last",
        ),
        settled=(
            bool,
            "better than the next and worse than the previous, each with probability at least 0.95",
        ),
        suspended=None,
    )
    BotLadderOut = record_model(
        "BotLadderOut",
        Standing,
        ladder=None,
        game=None,
        rank=None,
        of="bots in the ladder",
        conservative=None,
        mu=None,
        sigma=None,
        matches=None,
        mean_score=None,
        wins=None,
        faults=None,
    )


class RankingsOut(BaseModel):
    ladder: LadderOut
    standings: list[StandingOut]


class BotOut(BaseModel):
    name: str
    remote: bool = Field(description="run by its owner, connecting with a token")
    created: float
    suspended: bool
    suspended_reason: str | None
    removed: bool
    family: str = Field(
        description="the bot's name: this is its version `version` (version 1 "
        "is named as the bot, version N >= 2 NAME@N)"
    )
    version: int
    note: str | None = Field(description="what its owner said changed in this version")
    status: str = Field(
        "active",
        description="verifying, failed (a submitted version: docs/submit.md), active, retired",
    )


class SeatOut(BaseModel):
    seat: int
    bot: str
    score: int | None = Field(description="None until the match is completed")
    rank: int | None = Field(description="0 = first; None until the match is completed")
    faults: int
    fault_kinds: list[str]


SET_FINISHED = Field(
    description="every match of its duplicate set is completed or abandoned: "
    "only then are its seed, hands and fault details shown"
)


class MatchSummaryOut(BaseModel):
    ladder: str
    index: int = Field(description="the match's index in its ladder's schedule")
    status: MatchStatus
    set_index: int = Field(
        description="its duplicate set: the matches that play one deal with "
        "the seats rotated share it"
    )
    rotation: int = Field(description="how far the set's seating is rotated (0..k-1)")
    set_finished: bool = SET_FINISHED
    seats: list[SeatOut]
    started: float | None
    finished: float | None
    duration_ms: float | None
    rated: bool
    reason: str | None


class MatchListOut(BaseModel):
    matches: list[MatchSummaryOut]
    next: int | None = Field(
        description="pass as `before` to get the next, older page; null on the last page"
    )


class FaultOut(BaseModel):
    ladder: str
    index: int
    seat: int
    bot: str
    kind: str
    move: int = Field(description="index into the match's moves; -1 between moves")
    elapsed_ms: float
    detail: str = Field(description="what happened; withheld until the set is finished")
    set_finished: bool = SET_FINISHED


class FaultLogOut(FaultOut):
    excerpt: str | None = Field(
        description="the end of the bot's log as the match ended (at most 4096 bytes, control "
        "characters removed); null when none was kept (a remote bot's log is on its owner's "
        "machine)"
    )


class BotFaultLogsOut(BaseModel):
    bot: str
    remote: bool = Field(description="a remote bot: the server has no log of it")
    faults: list[FaultLogOut] = Field(description="its most recent faults, newest first")


class SeatLogOut(BaseModel):
    seat: int
    bot: str
    moves: list[tuple[int, str]] = Field(
        description="[move index, what the bot wrote while deciding that move], its moves "
        "with output only"
    )
    tail: str = Field(description="what it wrote after its last move (the end, a crash)")
    dropped: int = Field(description="bytes of its oldest lines not kept (the cap)")


class MatchLogsOut(BaseModel):
    ladder: str
    index: int
    seats: list[SeatLogOut] = Field(
        description="the seats of launched bots the key opens whose log is still kept"
    )
    closed: list[int] = Field(description="the seats whose bots the key does not open")


class BotVersionOut(BaseModel):
    bot: BotOut
    ladders: list[BotLadderOut] = Field(description="its standing in each ladder it plays in")


class BotDetailOut(BaseModel):
    bot: BotOut
    ladders: list[BotLadderOut]
    versions: list[BotVersionOut] = Field(
        description="every version of the bot, oldest first, each rated on its own"
    )
    recent_matches: list[MatchSummaryOut]
    recent_faults: list[FaultOut]


class HistoryPointOut(BaseModel):
    index: int = Field(description="the match index after which the rating was this")
    mu: float
    sigma: float
    conservative: float


class HistoryOut(BaseModel):
    ladder: str
    bot: str
    points: list[HistoryPointOut]


# A card in a frame: a card id (see `legend`), [card id, note], or [text, colour].
CardOut = int | list[int | str]


class TableRowOut(BaseModel):
    label: str
    cards: list[CardOut]
    kind: str | None = Field(
        default=None,
        description='a row drawn its own way: "guard" (Boom\'s '
        "guard card, `value` its number, `cards` its limits left to right) "
        'or "balloon" (Balloon\'s balloon, `value` its size)',
    )
    value: int | None = Field(default=None, description="the guard's number or the balloon's size")


class SeatViewOut(BaseModel):
    stats: list[list[str]] = Field(description="[label, value] pairs")
    cards: list[CardOut] = Field(description="the seat's public cards")


class MoveOut(BaseModel):
    seat: int
    default: bool = Field(description="played by the referee for a faulted seat")
    ms: float = Field(description="time the seat took")
    text: str | None = Field(default=None, description="the action; absent in live frames")


class FrameOut(BaseModel):
    n: int = Field(description="moves applied so far (0: the deal)")
    move: MoveOut | None
    events: list[str] = Field(description="what the move caused, in words")
    info: list[list[str]] = Field(description="[label, value] pairs")
    table: list[TableRowOut]
    seats: list[SeatViewOut]
    scores: list[int]
    to_act: list[int]
    hands: list[list[CardOut]] | None = Field(
        default=None, description="each seat's hand; absent in live frames"
    )


class SetMemberOut(BaseModel):
    index: int
    rotation: int
    status: MatchStatus


class MatchOut(BaseModel):
    match: MatchSummaryOut
    game: str
    table_size: int
    options: dict[str, Any]
    set_index: int
    round: int
    rotation: int
    seed: int | None = Field(description="the deal; null until the set is finished")
    set_matches: list[SetMemberOut] = Field(description="the matches of its duplicate set")
    set_finished: bool = SET_FINISHED
    withheld: str | None = Field(
        description="why the seed, hands and fault details are not shown yet; null once they are"
    )
    attempts: int
    node: str | None
    engine_version: str | None
    rating_note: str | None
    faults: list[FaultOut]
    infra_failures: list[dict[str, Any]]
    moves: int | None = Field(description="moves in the stored replay")
    legend: dict[str, list[str]] | None = Field(
        default=None, description="card id -> [text, colour], with frames"
    )
    frames: list[FrameOut] | None = Field(
        default=None,
        description="the replay's frames, with ?frames=true: with hands and "
        "actions once the set is finished, public ones before",
    )
    replay_error: str | None = Field(
        default=None, description="why the stored replay does not re-run"
    )


class LiveOut(BaseModel):
    ladder: str
    index: int
    status: MatchStatus
    since: int
    frames: list[FrameOut] = Field(description="public frames from `since` on")
    done: bool = Field(
        description="the match will not change any more: reload the match for its full replay"
    )
    source: str = Field(description="'live' (the referee's moves so far) or 'store'")


class HeadToHeadOut(BaseModel):
    ladder: str
    bot: str
    opponent: str
    matches: int = Field(description="completed matches of finished sets where both sat")
    ahead: int = Field(description="of those, where the bot placed ahead of the opponent")
    level: int = Field(description="where they placed level (tied)")
    behind: int = Field(description="where the bot placed behind the opponent")


class LastFaultOut(BaseModel):
    ladder: str
    index: int


class BotHealthOut(BaseModel):
    bot: str
    suspended: bool
    suspended_reason: str | None
    remote: bool
    matches: int = Field(description="its completed matches")
    faulted: int = Field(description="those it faulted in")
    fault_rate: float = Field(description="faulted / matches (0 with none)")
    faults: int = Field(description="its faults in all")
    fault_kinds: dict[str, int] = Field(description="matches it faulted in, by kind")
    last_fault: LastFaultOut | None = Field(description="the last match it faulted in")
