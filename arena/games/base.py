"""The game interface every rules engine implements (OpenSpiel-shaped).

A `Game` is built from its configuration (player count and variant options) and is immutable.
`Game.new_match(seed)` gives the initial `State`. A state says which seats must decide now
(`seats_to_act`: one seat in a turn-based step, every seat at once in a simultaneous step), the
legal actions of a seat, applies actions, and once over gives scores and ranks. All chance is
drawn from the match seed inside `new_match` (and, for games that reshuffle, from a generator
owned by the state and seeded from the match seed), so (configuration, seed, actions) replays a
match exactly.

Engines are pure: no I/O, no clock, no global random, no protobuf. Actions are small immutable
values (ints or tuples of ints) so that they hash, compare and serialise cheaply; each game
documents its own action encoding and offers `action_to_string`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar, Hashable, Mapping, Sequence

Action = Hashable


class RulesError(ValueError):
    """Base class of errors raised by rules engines."""

    @classmethod
    def no_seat(cls, seat: object, num_players: int, to: str) -> RulesError:
        """The error for a seat asked about that is not one of the match's."""
        return cls(f"there is no seat {seat!r} to {to} (seats are 0..{num_players - 1})")


class ConfigError(RulesError):
    """A game was asked for with a configuration its rules do not allow."""


class EngineVersionError(ConfigError):
    """A match was recorded under an engine version this Arena cannot play (see
    Game.engine_versions)."""


class IllegalActionError(RulesError):
    """An action that the rules do not allow now. The state is left unchanged."""

    def __init__(self, seat: int, action: Any, reason: str):
        self.seat = seat
        self.action = action
        self.reason = reason
        super().__init__(f"seat {seat} cannot play {action!r}: {reason}")


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of a match's public event log.

    `kind` names what happened (for example "play", "drop_out", "reveal", "round_end");
    `seat` is the seat it concerns, or -1 for the table; `data` holds the kind's fields as plain
    values (ints, strings, tuples), so a log can be stored, compared and shown without the engine.
    """

    kind: str
    seat: int = -1
    data: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class GameOption:
    """A variant option of a game, declared once (Game.declared_options): the engine's
    options_spec, the command line's flag (--NAME), the protocol's GameOptions field of the same
    name and the web's label all follow from it. `values`: the allowed values, the default
    first (a flag: (False, True))."""

    name: str
    help: str  # what it does, in a few words: the flag's help and the web's label
    values: tuple[Any, ...] = (False, True)

    def label(self, value: Any) -> str | None:
        """How a page names this option set to `value` ("ruse", "target 3"); None for its
        default, which a page leaves unsaid."""
        if value == self.values[0]:
            return None
        if value is True:
            return self.name
        return f"{self.name} {value}"


def ranks_from_scores(scores: Sequence[int]) -> tuple[int, ...]:
    """Competition ranks, 0 = best: equal scores share a rank ("1224" ranking, zero-based)."""
    return tuple(sum(1 for other in scores if other > mine) for mine in scores)


class Game(abc.ABC):
    """A game with fixed configuration. Subclasses declare their facts as class data."""

    name: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    # The variant options (GameOption: name, help, allowed values, the default first).
    declared_options: ClassVar[tuple[GameOption, ...]] = ()
    # Option name -> allowed values; the first value is the default (from declared_options).
    options_spec: ClassVar[Mapping[str, tuple[Any, ...]]] = {}
    # Changes whenever a rule change could make an old replay play out differently.
    engine_version: ClassVar[str] = "1"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "declared_options" in cls.__dict__:
            cls.options_spec = {o.name: o.values for o in cls.declared_options}

    @classmethod
    def engine_versions(cls) -> Mapping[str, type["Game"]]:
        """Every engine version this Arena plays the game by, to the class that plays by it: the
        current one, and any earlier one a game keeps so that its replays still re-run."""
        return {cls.engine_version: cls}

    @classmethod
    def version_advice(cls, version: str) -> str:
        """What to do with a match recorded under a version this Arena cannot play."""
        return (
            f"re-run it with the Arena release it was played with (whose {cls.name} engine "
            f"is version {version})"
        )

    @classmethod
    def at_engine_version(cls, version: str) -> type["Game"]:
        """The class that plays this game by the rules of engine `version` (a replay's or a
        stored match's); raises EngineVersionError, saying what to do, for a version this Arena
        cannot play. A finished match's result stands as recorded either way."""
        versions = cls.engine_versions()
        if version in versions:
            return versions[version]
        raise EngineVersionError(
            f"this {cls.name} match was played by {cls.name} engine version {version!r}; this "
            f"Arena plays {cls.name} by engine version(s) {', '.join(sorted(versions))}: "
            f"{cls.version_advice(version)}"
        )

    def __init__(self, num_players: int, **options: Any):
        if not self.min_players <= num_players <= self.max_players:
            raise ConfigError(
                f"{self.name} is played by {self.min_players} to {self.max_players} players, "
                f"not {num_players}"
            )
        unknown = set(options) - set(self.options_spec)
        if unknown:
            raise ConfigError(
                f"{self.name} has no option {', '.join(sorted(unknown))}; "
                f"its options are: {', '.join(self.options_spec) or 'none'}"
            )
        resolved = {}
        for key, allowed in self.options_spec.items():
            value = options.get(key, allowed[0])
            if value not in allowed:
                raise ConfigError(
                    f"{self.name} option {key} must be one of {list(allowed)}, not {value!r}"
                )
            resolved[key] = value
        self.num_players = num_players
        self.options: Mapping[str, Any] = resolved

    def config(self) -> dict[str, Any]:
        """Everything needed to build this game again: stored in replays and ladders."""
        return {"game": self.name, "num_players": self.num_players, "options": dict(self.options)}

    def __reduce__(self):
        # built again from its configuration when copied or unpickled (a game may hold tables
        # and precompiled helpers that do not pickle)
        return _game_from_config, (type(self), self.num_players, dict(self.options))

    @abc.abstractmethod
    def new_match(self, seed: int) -> "State":
        """The initial state of a match dealt from `seed`."""

    def action_to_string(self, action: Action) -> str:
        return repr(action)


def _game_from_config(cls: type, num_players: int, options: dict[str, Any]) -> Game:
    return cls(num_players, **options)


class State(abc.ABC):
    """The mutable state of one match. Only the rules engine changes it."""

    game: Game

    @abc.abstractmethod
    def seats_to_act(self) -> tuple[int, ...]:
        """Seats that must decide now; empty when the match is over. In a simultaneous step every
        listed seat acts once, in any order, and the step resolves when the last one has."""

    @abc.abstractmethod
    def legal_actions(self, seat: int) -> Sequence[Action]:
        """The legal actions of `seat` now (empty if it need not act)."""

    @abc.abstractmethod
    def apply_action(self, seat: int, action: Action) -> None:
        """Apply one seat's action, or raise IllegalActionError and change nothing."""

    @abc.abstractmethod
    def default_action(self, seat: int) -> Action:
        """The action the referee plays for a seat that timed out, played illegally or left.
        Deterministic and documented per game."""

    @abc.abstractmethod
    def is_over(self) -> bool: ...

    def feature_values(self, seat: int) -> tuple[list[int], Sequence[int], list[float]]:
        """`arena_sdk.features.encode(self.observation(seat))` as (ones, indices, values): the
        seat's observation array (docs/rl.md has each game's layout) is 1 at `ones`, `values` at
        `indices` and 0 elsewhere. Worked out straight from the state without building the
        observation: the training environments' fast path (arena.envs.arrays), for the games
        that have one. encode is the plain version; tests/envs/test_env_features.py holds them
        equal."""
        raise NotImplementedError(f"{type(self).__name__} has no feature_values")

    @abc.abstractmethod
    def scores(self) -> tuple[int, ...]:
        """Current total score per seat (final once the match is over)."""

    def ranks(self) -> tuple[int, ...]:
        """Rank per seat from the scores, 0 = best, equal scores share a rank."""
        return ranks_from_scores(self.scores())

    @abc.abstractmethod
    def observation(self, seat: int) -> Any:
        """What `seat` may see now: its own hand and the public information, nothing more.
        Seat -1 is a spectator: the public information only."""

    def public_observation(self) -> Any:
        """What a spectator may see now: the public information only."""
        return self.observation(-1)

    @property
    @abc.abstractmethod
    def events(self) -> Sequence[Event]:
        """The public event log so far."""

    @abc.abstractmethod
    def clone(self) -> "State":
        """An independent copy, for simulation."""
