"""A competition's config file (TOML), read and validated: pure, no store, no clock of its own.

    name = "autumn-cup"            # letters, digits, '_', '-', '.'
    game = "balloon"
    table_size = 3
    bots = ["alice", "bob"]        # optional: the bots that may enter (default: every bot)

    [options]                      # optional: the game's variant options (arena match's flags)
    [phases]
    freeze = "14d"                 # a date-time (2026-12-20T18:00:00Z) or a time after creation
    finals = "1h"                  # a date-time, or a time after the freeze
    [finals]
    confidence = 0.95              # every adjacent pair settled at this, or ...
    max_matches = 2000             # ... this many matches played (at least one round is)
    qualify = 16                   # optional: only the open ladder's top 16 enter the finals
    [uploads]
    per_day = 5                    # uploads per bot per 24 hours while open

Every mistake is a CompetitionConfigError naming the key, what was wrong and what to write.
docs/competitions.md shows a whole event.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

DEFAULT_CONFIDENCE = 0.95
DEFAULT_FINALS_MATCHES = 2000
DEFAULT_UPLOADS_PER_DAY = 5
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h|d)")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,47}")
_SECTIONS = {
    "options": None,
    "phases": ("freeze", "finals"),
    "finals": ("confidence", "max_matches", "qualify"),
    "uploads": ("per_day",),
}
_TOP = ("name", "game", "table_size", "bots")


class CompetitionConfigError(ValueError):
    """A competition's config that cannot be used; the message says which key and what to do."""


@dataclass(frozen=True)
class When:
    """A phase's start: an absolute time (epoch seconds) or a time after the previous one."""

    at: float | None = None
    after_s: float | None = None

    def resolve(self, previous: float) -> float:
        return self.at if self.at is not None else previous + (self.after_s or 0.0)


@dataclass(frozen=True)
class CompetitionConfig:
    name: str
    game: str
    table_size: int
    options: dict[str, Any]
    bots: tuple[str, ...] | None  # the bots (families) that may enter; None: every bot
    freeze: When
    finals: When
    confidence: float = DEFAULT_CONFIDENCE
    max_matches: int = DEFAULT_FINALS_MATCHES
    uploads_per_day: int = DEFAULT_UPLOADS_PER_DAY
    qualify: int | None = None  # the open ladder's top N enter the finals; None: every entrant

    def times(self, created: float) -> tuple[float, float]:
        """(freeze_at, finals_at) for a competition created at `created`."""
        freeze_at = self.freeze.resolve(created)
        finals_at = self.finals.resolve(freeze_at)
        if freeze_at <= created:
            raise CompetitionConfigError(
                "[phases] freeze is in the past: give a later date-time, or a time after "
                'creation such as "7d"'
            )
        if finals_at < freeze_at:
            raise CompetitionConfigError(
                "[phases] finals comes before the freeze: give a later date-time, or a time "
                'after the freeze such as "1h"'
            )
        return freeze_at, finals_at

    def stored(self) -> dict[str, Any]:
        """What the store keeps of it (JSON)."""
        doc = asdict(self)
        doc["bots"] = list(self.bots) if self.bots is not None else None
        return doc


def load(path: Path) -> CompetitionConfig:
    """Read and validate a config file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CompetitionConfigError(f"cannot read {path}: {err}") from None
    return parse(text, str(path))


def parse(text: str, where: str = "the config") -> CompetitionConfig:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CompetitionConfigError(f"{where} is not valid TOML: {err}") from None
    return from_dict(doc, where)


def from_dict(doc: Mapping[str, Any], where: str = "the config") -> CompetitionConfig:
    def fail(key: str, problem: str) -> CompetitionConfigError:
        return CompetitionConfigError(f"{where}: {key} {problem}")

    unknown = [k for k in doc if k not in _TOP and k not in _SECTIONS]
    if unknown:
        known = ", ".join([*_TOP, *(f"[{s}]" for s in _SECTIONS)])
        raise fail(unknown[0], f"is not a competition setting; the settings are {known}")
    for section, keys in _SECTIONS.items():
        value = doc.get(section, {})
        if not isinstance(value, dict):
            raise fail(section, f"must be a table ([{section}]), not {value!r}")
        extra = [k for k in value if keys is not None and k not in keys]
        if extra:
            raise fail(
                f"[{section}] {extra[0]}",
                f"is not a setting of [{section}]; its settings are {', '.join(keys or ())}",
            )
    name = _required(doc, "name", str, fail)
    if not _NAME.fullmatch(name):
        raise fail(
            "name",
            f"{name!r} is not allowed; use 1 to 48 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit",
        )
    game = _required(doc, "game", str, fail)
    table_size = _required(doc, "table_size", int, fail)
    options = dict(doc.get("options", {}))
    _check_game(game, table_size, options, fail)
    bots = doc.get("bots")
    if bots is not None:
        if not (isinstance(bots, list) and bots and all(isinstance(b, str) and b for b in bots)):
            raise fail("bots", 'must be a list of bot names, e.g. bots = ["alice", "bob"]')
        if len(set(bots)) != len(bots):
            raise fail("bots", "names a bot twice; name each once")
        if any("@" in b for b in bots):
            raise fail("bots", "names a version (NAME@N); name the bot: its newest version enters")
        bots = tuple(bots)
    phases = doc.get("phases", {})
    for key in ("freeze", "finals"):
        if key not in phases:
            raise fail(
                f"[phases] {key}",
                'is missing; give a date-time (2026-12-20T18:00:00Z) or a time such as "7d"',
            )
    finals = doc.get("finals", {})
    confidence = finals.get("confidence", DEFAULT_CONFIDENCE)
    if not isinstance(confidence, (int, float)) or not 0.5 < confidence < 1:
        raise fail(
            "[finals] confidence", f"must be a number above 0.5 and below 1, not {confidence!r}"
        )
    max_matches = finals.get("max_matches", DEFAULT_FINALS_MATCHES)
    if isinstance(max_matches, bool) or not isinstance(max_matches, int) or max_matches < 1:
        raise fail(
            "[finals] max_matches", f"must be a whole number of at least 1, not {max_matches!r}"
        )
    qualify = finals.get("qualify")
    if qualify is not None and (
        isinstance(qualify, bool) or not isinstance(qualify, int) or qualify < max(2, table_size)
    ):
        raise fail(
            "[finals] qualify",
            f"must be a whole number of at least {max(2, table_size)} (a table's bots), "
            f"not {qualify!r}",
        )
    per_day = doc.get("uploads", {}).get("per_day", DEFAULT_UPLOADS_PER_DAY)
    if isinstance(per_day, bool) or not isinstance(per_day, int) or per_day < 1:
        raise fail("[uploads] per_day", f"must be a whole number of at least 1, not {per_day!r}")
    return CompetitionConfig(
        name=name,
        game=game,
        table_size=table_size,
        options=options,
        bots=bots,
        freeze=_when(phases["freeze"], "[phases] freeze", fail),
        finals=_when(phases["finals"], "[phases] finals", fail),
        confidence=float(confidence),
        max_matches=max_matches,
        uploads_per_day=per_day,
        qualify=qualify,
    )


def from_stored(doc: Mapping[str, Any]) -> CompetitionConfig:
    """The config as the store keeps it (CompetitionConfig.stored)."""
    fields = dict(doc)
    fields["bots"] = tuple(doc["bots"]) if doc.get("bots") is not None else None
    fields["freeze"] = When(**doc["freeze"])
    fields["finals"] = When(**doc["finals"])
    return CompetitionConfig(**fields)


def _required(doc: Mapping[str, Any], key: str, kind: type, fail) -> Any:
    if key not in doc:
        raise fail(key, "is missing; every competition names its name, game and table_size")
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise fail(key, f"must be a {'whole number' if kind is int else 'string'}, not {value!r}")
    return value


def _check_game(game: str, table_size: int, options: dict[str, Any], fail) -> None:
    from arena.games import ConfigError, game_names, make_game

    if game not in game_names():
        raise fail("game", f"{game!r} is not a game here; choose one of {', '.join(game_names())}")
    try:
        make_game(game, table_size, **options)
    except ConfigError as err:
        raise fail("table_size or [options]", f"do not make a {game} game: {err}") from None
    except TypeError as err:
        raise fail("[options]", f"are not {game}'s options: {err}") from None


def _when(value: Any, key: str, fail) -> When:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise fail(key, "is a date-time without a time zone; add one, e.g. Z for UTC")
        return When(at=value.timestamp())
    if isinstance(value, str):
        seconds = duration_s(value)
        if seconds is not None:
            return When(after_s=seconds)
    raise fail(
        key,
        f"is {value!r}; give a date-time with its zone (2026-12-20T18:00:00Z) or a time "
        'such as "90s", "30m", "12h" or "7d"',
    )


def duration_s(text: str) -> float | None:
    """Seconds of "90s", "30m", "12h", "7d" (None if it is not one)."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        return None
    return float(match.group(1)) * _UNITS[match.group(2)]
