"""The records a finished match leaves: its faults and its result.

Plain frozen dataclasses shared by the referee (which makes them), the store (which keeps them),
the ladder (which rates them) and the replay files. No protobuf, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Kinds of bot fault (an outcome of a match, never an error of the platform).
TIMEOUT = "timeout"
ILLEGAL_ACTION = "illegal_action"
UNKNOWN_REQUEST = "unknown_request"
DISCONNECT = "disconnect"
CRASH = "crash"
MALFORMED = "malformed"
FAULT_KINDS = (TIMEOUT, ILLEGAL_ACTION, UNKNOWN_REQUEST, DISCONNECT, CRASH, MALFORMED)

# Match statuses, all of them here: a MatchResult is completed or abandoned; a stored match
# (arena.store) goes from pending through running to completed, infra_failed or abandoned.
PENDING = "pending"
RUNNING = "running"
COMPLETED = "completed"  # played to the end (possibly with faulted seats played by default)
INFRA_FAILED = "infra_failed"  # an attempt failed for a reason that is not the bots'; retried
# Stopped by the platform (shutdown, infrastructure fault) or, in the store, given up for good:
# never rated, the rating order skips it.
ABANDONED = "abandoned"
MATCH_STATUSES = (PENDING, RUNNING, COMPLETED, INFRA_FAILED, ABANDONED)
RUNNABLE = (PENDING, INFRA_FAILED)  # what a ladder runner still has to play
# A match that will not be played again: its duplicate set is finished when all of its are.
FINISHED = (COMPLETED, ABANDONED)


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault of one seat: what, at which move (index into the match's action list, or -1
    when it happened outside a move, such as a disconnect between moves), and how long it took."""

    seat: int
    kind: str
    move: int
    elapsed_ms: float
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "kind": self.kind,
            "move": self.move,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Fault":
        return cls(d["seat"], d["kind"], d["move"], d["elapsed_ms"], d.get("detail", ""))


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """One applied action: the seat, the action as the engine encodes it (JSON-able: ints and
    lists), the time the seat took, and whether the referee played it by default."""

    seat: int
    action: Any
    elapsed_ms: float
    default: bool = False

    def to_list(self) -> list[Any]:
        return [self.seat, self.action, round(self.elapsed_ms, 3), self.default]

    @classmethod
    def from_list(cls, row: list[Any]) -> "MoveRecord":
        return cls(row[0], row[1], row[2], bool(row[3]))


@dataclass(frozen=True, slots=True)
class BotLog:
    """What a launched bot wrote to its log (stdout and stderr) during one match, split by its
    moves: `moves` holds (move index, what it wrote while deciding that move: since its
    previous reply, or since the end of its previous match's log for its first), `tail` what
    it wrote after its last reply (the match's end, a crash's last words). As read, raw: the
    store cleans and caps it (arena.store.match_log). A lane playing several matches at once
    writes one log: lines written while two matches run may show in both."""

    moves: tuple[tuple[int, str], ...] = ()
    tail: str = ""

    @property
    def empty(self) -> bool:
        return not self.tail and not any(text for _, text in self.moves)


def demote_faulted(scores: tuple[int, ...], faulted: set[int]) -> tuple[int, ...]:
    """Ranks (0 = best, equal scores tie) where every seat that faulted ranks below every seat
    that did not; within each group, by score."""

    def key(seat: int) -> tuple[int, int]:
        return (1 if seat in faulted else 0, -scores[seat])

    keys = [key(s) for s in range(len(scores))]
    return tuple(sum(1 for other in keys if other < mine) for mine in keys)


@dataclass(frozen=True)
class MatchResult:
    """What a finished match leaves. `ranks` already puts faulted seats last."""

    match_id: str
    config: dict[str, Any]  # Game.config()
    seed: int
    seat_names: tuple[str, ...]
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    faults: tuple[Fault, ...]
    moves: tuple[MoveRecord, ...]
    status: str = COMPLETED
    reason: str = "completed"
    engine_version: str = "1"
    started_at: float = 0.0
    finished_at: float = 0.0
    limits: dict[str, Any] = field(default_factory=dict)
    # The end of the log of each faulted seat whose bot the platform launched, by seat: for its
    # owner only (the store keeps it in a private table; never in a replay or a public view).
    # Added by the executor that ran the match, which holds the bots' logs.
    log_excerpts: dict[int, str] = field(default_factory=dict)
    # What each launched bot wrote during this match, by seat, split by its moves (BotLog):
    # private as log_excerpts. Added by the referee host that launched it.
    bot_logs: dict[int, BotLog] = field(default_factory=dict)
    # The seed each seat's bot was given (arena.seeds), by seat: a replay keeps them so that
    # seeded bots replay exactly; () where unknown (a result built by hand).
    bot_seeds: tuple[int, ...] = ()

    @property
    def faulted_seats(self) -> set[int]:
        return {f.seat for f in self.faults}
