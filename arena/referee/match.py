"""The match loop: asks seats for actions under their clocks, applies them, records faults.

Protocol-free: a seat is anything with the `Seat` interface (a remote bot behind a connection,
or the default policy). A bot's fault (timeout, illegal action, disconnect, ...) becomes a
`Fault` in the result and the referee plays the game's default action for that seat; after
`max_strikes` faults, or at once on a disconnect or crash, the seat is played by the default
policy to the end, and it ranks below every seat that did not fault.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Protocol, Sequence

from arena.games.base import Action, Game, IllegalActionError, State
from arena.results import (
    COMPLETED,
    CRASH,
    DISCONNECT,
    ILLEGAL_ACTION,
    Fault,
    MatchResult,
    MoveRecord,
    demote_faulted,
)

# Faults after which a seat is retired at once, whatever the strike count.
RETIRING_FAULTS = frozenset({DISCONNECT, CRASH})


@dataclass(frozen=True, slots=True)
class Limits:
    """Time and fault limits of a match, the same for every seat.

    move_ms: the deadline of one move, measured by the referee from the moment the request is
    sent to the moment the reply arrives. time_bank_ms: extra time per seat for the whole match;
    a move that overruns move_ms draws the excess from the bank, and only a move that overruns
    both is a timeout. max_strikes: faults (timeouts, illegal actions, bad replies) after which
    the seat is played by the default policy to the end. connect_ms: how long a seat's bot has to
    be connected when the match starts.
    """

    move_ms: int = 1000
    time_bank_ms: int = 10_000
    max_strikes: int = 3
    connect_ms: int = 20_000

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(slots=True)
class Decision:
    """What a seat answered: an action (None when it faulted), the time it took, and the fault."""

    action: Action | None
    elapsed_ms: float
    fault: str | None = None
    detail: str = ""
    default: bool = False  # the referee chose the action (the seat is retired)
    retire: bool = False  # the fault ends the seat's play whatever its kind (its stream is gone)
    # Faults that cost no move (a stray reply to a request never sent): (kind, detail).
    extra_faults: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class SeatClock:
    bank_ms: float
    strikes: int = 0
    retired: bool = False


@dataclass(frozen=True, slots=True)
class MatchContext:
    match_id: str
    game: Game
    seed: int
    seat_names: tuple[str, ...]
    limits: Limits
    # Each seat's bot seed (arena.seeds: opaque, fixed by a secret key, the match seed and the
    # seat), by seat.
    bot_seeds: tuple[int, ...]


class Seat(Protocol):
    """One seat's player in one match."""

    async def start(self, ctx: MatchContext, seat: int) -> str | None:
        """Prepare (wait for the bot, send it the match start). Returns a fault kind if the seat
        cannot play at all (the bot never connected), else None."""

    async def decide(self, state: State, seat: int, clock: SeatClock) -> Decision:
        """Ask for an action under the seat's clock. Never raises for a bot's misbehaviour."""

    async def notify_fault(self, fault: Fault, played_instead: Action | None) -> None:
        """Tell the bot why its reply was rejected (best effort)."""

    async def end(
        self, state: State, scores: Sequence[int], ranks: Sequence[int], reason: str
    ) -> None:
        """Tell the bot the match is over (best effort, and without waiting on the bot: the
        match's other seats are told after it)."""


class MatchObserver:
    """Watches a match as it is played (live spectators, tests). Override what you need; the
    defaults do nothing, so an observer need not know every hook. The state passed is the
    match's own: read it (its events, its public view) then or later, never change it. The
    referee hands over no event list: building one per move cost every match time whether
    anyone watched or not, so an observer takes `state.events` when it wants them."""

    def on_start(self, state: State) -> None:
        """The match has begun; its first events (the deal) are in `state`."""

    def on_move(self, move: MoveRecord, state: State) -> None:
        """A move was applied; `state` is the state after it (in a simultaneous step, the
        step's events arrive with its last move)."""

    def on_end(self, result: MatchResult) -> None:
        """The match is over."""


@dataclass
class _Recorder:
    moves: list[MoveRecord] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)


def _not_connected(kind: str, limits: Limits) -> str:
    if kind == CRASH:
        return "the bot's process exited before it connected"
    return (
        f"the bot was not connected when the match started, nor within "
        f"{limits.connect_ms / 1000:g} s"
    )


async def play_match(
    ctx: MatchContext,
    seats: Sequence[Seat],
    observer: MatchObserver | None = None,
    clock: Callable[[], float] = time.time,
) -> MatchResult:
    """Play one match to the end and return its result. Bot faults are recorded, never raised;
    an exception from here is an infrastructure fault."""
    game = ctx.game
    if len(seats) != game.num_players:
        raise ValueError(
            f"{game.name} for {game.num_players} players needs that many seats, got {len(seats)}"
        )
    started_at = clock()
    state = game.new_match(ctx.seed)
    rec = _Recorder()
    clocks = [SeatClock(bank_ms=ctx.limits.time_bank_ms) for _ in seats]

    start_faults = await asyncio.gather(*(s.start(ctx, i) for i, s in enumerate(seats)))
    for i, kind in enumerate(start_faults):
        if kind is not None:
            await _fault(
                seats[i],
                clocks[i],
                rec,
                ctx.limits,
                Fault(i, kind, -1, 0.0, _not_connected(kind, ctx.limits)),
                None,
            )

    async def play_default(
        seat: int, kind: str, elapsed_ms: float, detail: str, retire: bool = False
    ) -> Action:
        """A faulted move: the fault recorded and the game's default action played instead."""
        action = state.default_action(seat)
        fault = Fault(seat, kind, len(rec.moves), elapsed_ms, detail)
        await _fault(seats[seat], clocks[seat], rec, ctx.limits, fault, action, retire)
        return action

    if observer is not None:
        observer.on_start(state)

    while not state.is_over():
        to_act = state.seats_to_act()
        if len(to_act) == 1:  # a turn: no need for gather's tasks
            decisions = [await _decide(seats[to_act[0]], state, to_act[0], clocks[to_act[0]])]
        else:
            decisions = await asyncio.gather(
                *(_decide(seats[s], state, s, clocks[s]) for s in to_act)
            )
        # Apply in seat order: for a simultaneous step the engine hides each choice until the
        # last one is in, so the order cannot leak anything.
        for seat, decision in zip(to_act, decisions):
            for kind, detail in decision.extra_faults:
                await _fault(
                    seats[seat],
                    clocks[seat],
                    rec,
                    ctx.limits,
                    Fault(seat, kind, len(rec.moves), 0.0, detail),
                    None,
                )
            action = decision.action
            default = decision.default
            if decision.fault is not None:
                action = await play_default(
                    seat, decision.fault, decision.elapsed_ms, decision.detail, decision.retire
                )
                default = True
            try:
                state.apply_action(seat, action)
            except IllegalActionError as err:
                if default:
                    raise  # the engine's own default was refused: a bug, not a bot's fault
                action = await play_default(seat, ILLEGAL_ACTION, decision.elapsed_ms, err.reason)
                default = True
                state.apply_action(seat, action)
            move = MoveRecord(seat, _jsonable(action), decision.elapsed_ms, default)
            rec.moves.append(move)
            if observer is not None:
                observer.on_move(move, state)

    scores = state.scores()
    faulted = {f.seat for f in rec.faults}
    ranks = demote_faulted(scores, faulted)
    result = MatchResult(
        match_id=ctx.match_id,
        config=game.config(),
        seed=ctx.seed,
        seat_names=ctx.seat_names,
        scores=tuple(scores),
        ranks=ranks,
        faults=tuple(rec.faults),
        moves=tuple(rec.moves),
        status=COMPLETED,
        reason="completed",
        engine_version=game.engine_version,
        started_at=started_at,
        finished_at=clock(),
        limits=ctx.limits.to_dict(),
        bot_seeds=ctx.bot_seeds,
    )
    for s in seats:  # each returns at once (see Seat.end): no tasks needed to run them
        await s.end(state, scores, ranks, "completed")
    if observer is not None:
        observer.on_end(result)
    return result


async def _decide(seat: Seat, state: State, index: int, clock: SeatClock) -> Decision:
    if clock.retired:
        return Decision(state.default_action(index), 0.0, default=True)
    return await seat.decide(state, index, clock)


async def _fault(
    seat: Seat,
    clock: SeatClock,
    rec: _Recorder,
    limits: Limits,
    fault: Fault,
    played_instead: Action | None,
    retire: bool = False,
) -> None:
    rec.faults.append(fault)
    clock.strikes += 1
    if retire or fault.kind in RETIRING_FAULTS or clock.strikes >= limits.max_strikes:
        clock.retired = True
    await seat.notify_fault(fault, played_instead)


def _jsonable(action: Any) -> Any:
    """Engine actions are ints or tuples of ints; replays keep them as JSON values."""
    return list(action) if isinstance(action, tuple) else action


def action_from_json(value: Any) -> Action:
    """Inverse of _jsonable."""
    return tuple(value) if isinstance(value, list) else value


class DefaultSeat:
    """A seat played by the game's default policy from the start (no bot behind it)."""

    async def start(self, ctx: MatchContext, seat: int) -> str | None:
        return None

    async def decide(self, state: State, seat: int, clock: SeatClock) -> Decision:
        return Decision(state.default_action(seat), 0.0, default=True)

    async def notify_fault(self, fault: Fault, played_instead: Action | None) -> None:
        return None

    async def end(self, state, scores, ranks, reason) -> None:
        return None
