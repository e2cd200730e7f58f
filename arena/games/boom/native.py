"""Boom: Runaway's engine with its hot path native: the state lives in a C extension type
(`_native.c`, built by scripts/build_engines.py into `_native_core`) that plays the rules' hot
path itself (the deal and the guard shuffles from the seed, seats to act, legal actions, every
rule of applying an action and resolving a round, scores, clones, observations, events), and
everything cold (feature values, refusals' reasons, snapshots, determinization) is done by the
fast Python engine
(arena.games.boom, the package's own module) on a twin state made from the core's fields, so
that only the hot path is stated twice. Handed out by arena.games.engines in the fast engine's
place (BoomGame, BoomState, sample_state) when the core is built from the current source.
tests/games/test_engine_builds.py holds it equal to the fast engine and to the plain one.

Importing this module raises ImportError when the core is not built (or not from the current
`_native.c`: NativeStale); arena.games.engines then falls back to the fast engine.
"""

from __future__ import annotations

import random
from collections.abc import Sequence as SequenceABC
from pathlib import Path
from typing import Any, Sequence

# the fast engine: this package's own module (which imports this one from its end, as it loads)
import arena.games.boom as fast

from ..base import Event, State
from ..engines import native_source_digest
from ._native_core import (  # type: ignore[import-not-found]
    SOURCE_DIGEST,
    Core,
    LegalPairs,
    configure,
    new_state,
)


class NativeStale(ImportError):
    """The native core was built from another version of _native.c (or the header it includes)."""


if SOURCE_DIGEST != native_source_digest(Path(__file__).parent / "_native.c"):
    raise NativeStale(
        "the native core was built from another version of _native.c or ../native_core.h"
    )

try:  # the rules' constants and classes, from the fast engine (and through it, plain.py)
    configure(fast)
except (TypeError, ValueError) as err:  # rules the core was not written for: fall back
    raise ImportError(f"the native core does not fit the engine's rules: {err}") from err

_ROUND, _WORDS, _RUSE = fast._ROUND, fast._WORDS, fast.RUSE
SequenceABC.register(LegalPairs)  # the fast engine's LegalPairs is one too


def _full(record: tuple) -> tuple:
    """A log record of the core as the fast engine keeps it: a round's record with its words
    (the core leaves None), a game end's with its rounds so."""
    kind = record[0]
    if kind == _ROUND and record[2] is None:
        first, second = record[9], record[10]
        words = [
            sum(_WORDS[seat][c] for c in (*(first[seat] if first[seat] else ()), *cards))
            for seat, cards in enumerate(second)
        ]
        return (*record[:2], words, record[3], [], *record[5:])
    if kind == fast._GAME_END:
        return (*record[:-1], tuple(map(_full, record[-1])))
    return record


class BoomGame(fast.FastBoomGame):
    """Boom: Runaway for 2-5 players, its states native (version 3; version 2's replays run on
    the fast engine's BoomGameV2)."""

    def new_match(self, seed: int) -> BoomState:
        if type(seed) is not int:
            super().new_match(seed)  # refused, with the fast engine's reason
            raise AssertionError(f"the fast engine took the seed {seed!r}")  # pragma: no cover
        return new_state(BoomState, self, seed)

    def start_state(self, seed, game_number, series_totals, hands, ruse, discards, guard_order):
        return BoomState.of(
            self,
            super().start_state(
                seed, game_number, series_totals, hands, ruse, discards, guard_order
            ),
        )

    def state_in_round(self, seed: int, position: fast.RoundPosition) -> BoomState:
        return BoomState.of(self, super().state_in_round(seed, position))


class BoomState(Core, State):
    """One Boom match, its state in the native core."""

    game: BoomGame  # (the core's read-only member)

    @classmethod
    def of(cls, game: BoomGame, state: Any) -> BoomState:
        """The native twin of a fast engine's state."""
        native = cls(game, state._seed)
        state._fold()
        choice = state._choice
        first = state._revealed
        native._load({
            "hands": state._hands, "has_ruse": state._has_ruse, "paradise": state._paradise,
            "played": [[c for c in range(_RUSE) if w >> c & 1] for w in state._rw],
            "ruse_played": [
                _RUSE in (first[s] or ()) or _RUSE in (choice[s] or ())
                for s in range(game.num_players)
            ],
            "choice": choice, "scores": state._scores, "score_base": state._score_base,
            "totals": state._totals, "to_play": state._to_play, "order": state._order,
            "game_no": state._game_no, "round": state._round, "step": state._step,
            "gpos": state._gpos, "guard": state._guard, "reshuffled": state._reshuffled,
            "shuffles": state._shuffles, "over": state._over, "seed": state._seed,
            "revealed": state._revealed, "disc_up": state._disc_up,
            "disc_down": state._disc_down, "log": state._log, "game_rounds": state._game_rounds,
        })  # fmt: skip
        return native

    def _twin(self) -> Any:
        """The fast engine's state equal to this one (for what the core leaves to it)."""
        f = self._export()
        game = self.game
        twin = fast.FastBoomState._blank(game, f["_seed"])
        for name in (
            "_shuffles", "_hands", "_has_ruse", "_paradise", "_scores", "_score_base",
            "_totals", "_game_no", "_round", "_step", "_order", "_gpos", "_guard",
            "_reshuffled", "_disc_up", "_disc_down", "_choice", "_revealed", "_over",
            "_to_play",
        ):  # fmt: skip
            setattr(twin, name, f[name])
        twin._log = list(map(_full, f["_log"]))
        twin._game_rounds = list(map(_full, f["_game_rounds"]))
        twin._scored = twin._folded = len(twin._game_rounds)
        twin._rw = [sum(_WORDS[seat][c] for c in cards) for seat, cards in enumerate(f["_played"])]
        twin._pending = {s: fast._LATER for s, c in enumerate(f["_choice"]) if c is None}
        twin._path = fast._GENERAL
        twin._ruse_ok = game._steps[twin._step][1]
        return twin

    def _refuse(self, seat: Any, action: Any) -> None:
        raise self._twin()._refusal(seat, action)

    def _refuse_observer(self, seat: Any) -> None:
        self._twin().observation(seat)
        raise AssertionError(f"the fast engine took observer {seat!r}")  # pragma: no cover

    def __reduce__(self) -> tuple:
        """Pickled (and deep-copied) as its fast twin, made native again when loaded."""
        return _restore, (self.game, self._twin())

    def default_action(self, seat: Any) -> tuple[int, ...]:
        return self._twin().default_action(seat)

    def hand(self, seat: int) -> tuple[int, ...]:
        """The seat's bomb cards (hidden information: not for bots)."""
        if type(seat) is int and 0 <= seat < self.num_players:
            return self._hand(seat)
        return self._twin().hand(seat)

    def pending_choice(self, seat: int) -> tuple[int, ...] | None:
        return self._twin().pending_choice(seat)

    def hidden_discards(self) -> tuple[int, ...]:
        return self._twin().hidden_discards()

    def paradise(self, seat: int) -> tuple[fast.ParadiseCard, ...]:
        return self._twin().paradise(seat)

    def game_scores(self) -> tuple[int, ...]:
        return self._twin().game_scores()

    def guard_order(self) -> tuple[int, ...]:
        return self._twin().guard_order()

    def snapshot(self) -> tuple:
        return self._twin().snapshot()

    def feature_values(self, seat: int) -> tuple[list[int], list[int], list[float]]:
        return self._twin().feature_values(seat)

    def write_feature_values(
        self, values: Any, own_at: Sequence[int], head: int, block_at: Sequence[int]
    ) -> None:
        # written by the core into a float32 buffer (the environments'), else by the twin
        if not self._write_values(values, own_at, head, block_at, True):
            self._twin().write_feature_values(values, own_at, head, block_at)

    def write_step_values(
        self, values: Any, own_at: Sequence[int], head: int, block_at: Sequence[int]
    ) -> None:
        if not self._write_values(values, own_at, head, block_at, False):
            self._twin().write_step_values(values, own_at, head, block_at)


def _restore(game: BoomGame, twin: Any) -> BoomState:
    return BoomState.of(game, twin)


def sample_state(
    observation: fast.BoomObservation,
    rng: random.Random,
    game: fast.BoomGameBase | None = None,
    events: Sequence[Event] | None = None,
) -> State:
    """The fast engine's sample_state, the state native (for a version 3 game)."""
    if game is None:
        inferred = fast._infer_game(observation)
        game = BoomGame(inferred.num_players, **inferred.options)
    return fast.fast_sample_state(observation, rng, game, events)
