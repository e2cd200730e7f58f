"""Balloon Challenge's engine with its hot path native: the state lives in a C extension type
(`_native.c`, built by scripts/build_engines.py into `_native_core`) that plays the rules'
hot path itself (seats to act, legal actions, every rule of applying an action, scores, clones,
observations), and everything cold (events, feature values, refusals' reasons, snapshots,
determinization) is done by the plain engine (engine.py) on a plain state made from the core's
fields, so that only the hot path is stated twice. The same names as engine.py (those it does
not define are engine.py's: __getattr__), handed out by arena.games.engines in its place when
the core is built from the current source.
tests/games/test_engine_builds.py holds the two equal.

Importing this module raises ImportError when the core is not built (or not from the current
`_native.c`: NativeStale); arena.games.engines then falls back.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..base import State
from ..engines import native_source_digest
from . import engine as plain
from ._native_core import (  # type: ignore[import-not-found]
    SOURCE_DIGEST,
    Core,
    configure,
    match_decks,
    new_state,
    seeded_decks,
)


class NativeStale(ImportError):
    """The native core was built from another version of _native.c (or the header it includes)."""


if SOURCE_DIGEST != native_source_digest(Path(__file__).parent / "_native.c"):
    raise NativeStale(
        "the native core was built from another version of _native.c or ../native_core.h"
    )

try:  # the rules' constants and classes, from engine.py
    configure(plain)
except (TypeError, ValueError) as err:  # rules the core was not written for: fall back
    raise ImportError(f"the native core does not fit engine.py's rules: {err}") from err


class BalloonGame(plain.BalloonGame):
    def match_decks(
        self, seed: int, decks: Mapping[int, Sequence[int]] | None = None
    ) -> tuple[tuple[int, ...], ...]:
        if decks or type(seed) is not int:  # engine.py's checks and overrides
            return super().match_decks(seed, decks)
        # the draws of random.Random(seed) in C, the same (None: |seed| >= 2**63)
        dealt = seeded_decks(seed, self.num_players)
        if dealt is None:
            dealt = match_decks(random.Random(seed).random, self.num_players)
        return dealt

    def new_match(
        self, seed: int, *, decks: Mapping[int, Sequence[int]] | None = None
    ) -> BalloonState:
        if not decks and type(seed) is int:  # dealt and started in one call
            state = new_state(BalloonState, self, seed)
            if state is not None:
                return state
        state = BalloonState(self, self.match_decks(seed, decks))
        state._start()
        return state

    def state_in_round(self, decks: tuple[tuple[int, ...], ...], **parts: Any) -> Any:
        return BalloonState.of(self, super().state_in_round(decks, **parts))


class BalloonState(Core, State):
    """One match of Balloon Challenge, its state in the native core."""

    game: BalloonGame  # (the core's read-only member)

    @classmethod
    def of(cls, game: BalloonGame, state: plain.BalloonState) -> BalloonState:
        """The native twin of a plain state."""
        native = cls(game, state._decks)
        native._load(state)
        return native

    def _plain(self) -> plain.BalloonState:
        """The plain twin of this state (for what the core leaves to the plain engine)."""
        fields = self._export()
        state = plain.BalloonState(self.game, fields["_decks"], deal=False)
        for name, value in fields.items():
            setattr(state, name, value)
        return state

    def _refuse(self, seat: Any, action: Any) -> None:
        raise self._plain()._illegal(seat, action)

    def _refuse_observer(self, seat: Any) -> None:
        self._plain().observation(seat)
        raise AssertionError(f"the plain engine took observer {seat!r}")  # pragma: no cover

    def default_action(self, seat: Any) -> int:
        return plain.DROP_OUT

    def hand(self, seat: int) -> tuple[int, ...]:
        """The true hand of a seat (hidden information: not for bots)."""
        if type(seat) is int and 0 <= seat < self.num_players:
            return self._hand(seat)
        return self._plain().hand(seat)

    def feature_values(self, seat: Any) -> tuple[list[int], Sequence[int], list[float]]:
        return self._plain().feature_values(seat)

    def feature_tail(self, seat: Any) -> list[float]:
        if type(seat) is int and 0 <= seat < self.num_players:
            return self._feature_tail(seat)
        return self._plain().feature_tail(seat)  # refused, with the plain engine's reason

    def volume(self, seat: int) -> int:
        return self._plain().volume(seat)

    def undealt(self) -> tuple[int, ...]:
        return self._plain().undealt()

    def table_cards(self) -> tuple[int, ...]:
        return self._plain().table_cards()

    def snapshot(self) -> tuple:
        return self._plain().snapshot()


def sample_state(observation: plain.BalloonObservation, rng: random.Random) -> BalloonState:
    """engine.py's sample_state, the state native."""
    state = plain.sample_state(observation, rng)
    return BalloonState.of(BalloonGame(observation.num_players), state)


def __getattr__(name: str) -> Any:
    """engine.py's other names (its constants, values and functions), as they are there."""
    return getattr(plain, name)
