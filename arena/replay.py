"""Replay files: writing a finished match, reading one back, and re-running it through the engine.

Format (JSON, documented in docs/replay.md): {"format": "arena-replay", "version": 1, match_id,
config (Game.config()), engine_version, seed, seat_names, limits, status, reason, scores, ranks,
faults [{seat, kind, move, elapsed_ms, detail}], moves [[seat, action, elapsed_ms, default]],
bot_seeds (each seat's bot seed, by seat; absent from replays of older Arenas),
views {seat: [observation before each of that seat's moves]}}. An action is the engine's encoding
as JSON (an int, or a list of ints). A replay re-runs under the engine version it was played
with, if this Arena still plays it (Game.at_engine_version), or is refused saying what to do.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from arena.games import game_from_config
from arena.games.base import EngineVersionError, Event, Game, IllegalActionError, RulesError, State
from arena.results import Fault, MatchResult, MoveRecord, demote_faulted

FORMAT = "arena-replay"
VERSION = 1


class ReplayError(ValueError):
    """A replay file that cannot be used: unreadable, of another format or version, or one
    that does not reproduce its recorded result."""


def _action(value: Any):
    return tuple(value) if isinstance(value, list) else value


def to_dict(result: MatchResult, with_views: bool = True) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "match_id": result.match_id,
        "config": result.config,
        "engine_version": result.engine_version,
        "seed": result.seed,
        "seat_names": list(result.seat_names),
        "limits": result.limits,
        "status": result.status,
        "reason": result.reason,
        "scores": list(result.scores),
        "ranks": list(result.ranks),
        "faults": [f.to_dict() for f in result.faults],
        "moves": [m.to_list() for m in result.moves],
        "started_at": result.started_at,
        "finished_at": result.finished_at,
    }
    if result.bot_seeds:
        # The seeds the bots were given (HMAC outputs: they do not give away the store's key,
        # nor any other match's seeds), so that seeded bots can be replayed exactly.
        doc["bot_seeds"] = list(result.bot_seeds)
    if with_views:
        doc["views"] = seat_views(result.config, result.seed, result.moves, result.engine_version)
    return doc


def seat_views(
    config: dict, seed: int, moves, engine_version: str | None = None
) -> dict[str, list[dict]]:
    """What each seat saw before each of its moves, recomputed from (config, seed, moves) under
    `engine_version` (default: the current one)."""
    game = game_from_config(config, engine_version)
    state = game.new_match(seed)
    views: dict[str, list[dict]] = {str(s): [] for s in range(game.num_players)}
    for move in moves:
        views[str(move.seat)].append(dataclasses.asdict(state.observation(move.seat)))
        state.apply_action(move.seat, _action(move.action))
    return views


def write(result: MatchResult, path: Path) -> None:
    try:
        path.write_text(json.dumps(to_dict(result), separators=(",", ":")))
    except OSError as err:
        raise ReplayError(f"cannot write the replay to {path}: {err.strerror}") from None


def read(path: Path) -> dict[str, Any]:
    """Load and check a replay file's shape (not yet its result)."""
    try:
        text = path.read_text()
    except OSError as err:
        raise ReplayError(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ReplayError(
            f"{path} is not a replay: it is not text (not valid JSON); it may be corrupted"
        ) from None
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ReplayError(
            f"{path} is not a replay: it is not valid JSON ({err}); it may be "
            "truncated or corrupted"
        ) from None
    return check(doc, str(path))


def check(doc: Any, where: str = "the replay") -> dict[str, Any]:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ReplayError(f'{where} is not an Arena replay (no "format": "{FORMAT}")')
    if doc.get("version") != VERSION:
        raise ReplayError(
            f"{where} is a version {doc.get('version')!r} replay; this Arena "
            f"reads version {VERSION}"
        )
    required = {
        "config": dict,
        "seed": int,
        "seat_names": list,
        "moves": list,
        "scores": list,
        "ranks": list,
        "faults": list,
    }
    for key, kind in required.items():
        if not isinstance(doc.get(key), kind):
            raise ReplayError(f"{where} is damaged: {key!r} is missing or not a {kind.__name__}")
    bot_seeds = doc.get("bot_seeds")
    if bot_seeds is not None and not (
        isinstance(bot_seeds, list)
        and len(bot_seeds) == len(doc["seat_names"])
        and all(isinstance(s, int) for s in bot_seeds)
    ):
        raise ReplayError(f"{where} is damaged: 'bot_seeds' is not one integer a seat")
    for i, move in enumerate(doc["moves"]):
        if not (isinstance(move, list) and len(move) == 4 and isinstance(move[0], int)):
            raise ReplayError(f"{where} is damaged: move {i} is not [seat, action, ms, default]")
    return doc


@dataclass
class Step:
    """One move of a re-run: who played what, and the public events it caused."""

    index: int
    seat: int
    action: Any
    default: bool
    elapsed_ms: float
    events: list[Event]
    state: State  # after the move (the same object each step: read it, do not keep it)
    view_before: Any  # the acting seat's observation before the move


def replay_game(doc: dict[str, Any]) -> Game:
    """The game of a checked replay, playing by the rules of the engine version it was played
    with (the current ones if the replay does not say). Raises ReplayError if this Arena cannot
    build it."""
    try:
        return game_from_config(doc["config"], doc.get("engine_version"))
    except EngineVersionError as err:
        raise ReplayError(f"the replay cannot be re-run here: {err}") from None
    except (RulesError, KeyError, TypeError) as err:
        raise ReplayError(f"the replay's configuration is not playable: {err}") from None


def rerun(doc: dict[str, Any]) -> Iterator[Step]:
    """Re-run a checked replay through the engine, move by move. Raises ReplayError if a move
    is illegal or the engine refuses the configuration or the engine version."""
    state = replay_game(doc).new_match(doc["seed"])
    seen = len(state.events)
    for i, row in enumerate(doc["moves"]):
        move = MoveRecord.from_list(row)
        before = state.observation(move.seat)
        try:
            state.apply_action(move.seat, _action(move.action))
        except IllegalActionError as err:
            raise ReplayError(f"move {i} does not replay: {err}") from None
        events = list(state.events[seen:])
        seen = len(state.events)
        yield Step(i, move.seat, move.action, move.default, move.elapsed_ms, events, state, before)


def verify(doc: dict[str, Any]) -> State:
    """Re-run the whole replay and check it reproduces the recorded scores and ranks."""
    state = None
    for step in rerun(doc):
        state = step.state
    if state is None:
        state = replay_game(doc).new_match(doc["seed"])
    if not state.is_over():
        raise ReplayError("the replay ends before the match is over: it is truncated")
    scores = list(state.scores())
    faulted = {Fault.from_dict(f).seat for f in doc["faults"]}
    ranks = list(demote_faulted(tuple(scores), faulted))
    if scores != doc["scores"] or ranks != doc["ranks"]:
        raise ReplayError(
            f"the replay does not reproduce its result: recorded scores "
            f"{doc['scores']} ranks {doc['ranks']}, re-run gives scores {scores} "
            f"ranks {ranks}"
        )
    return state
