"""Competitions as stored: the competition (its definition and phase), each phase step with its
time, the entrants fixed at the freeze, the finals' ladder, and once published the standings and
the results archive, which nothing may change afterwards (a trigger refuses it).

Every step is one transaction that takes the write lock first and does nothing if the step was
taken already (by this process before a kill -9, by the service, or by `arena competition
advance` in another process), so steps are idempotent. What a step decides (when, and whether
the finals go on) is arena.competitions' (phases.py); the rows are the store's.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from arena.ratings import MARGINS_MODE

from .errors import StoreError, sqlite_errors
from .ladders import Ladders
from .records import Bot, from_row
from .registry import playing_versions
from .schema import check_name, now, one_row

OPEN = "open"
FROZEN = "frozen"
FINALS = "finals"
PUBLISHED = "published"
PHASES = (OPEN, FROZEN, FINALS, PUBLISHED)
# The finals are rated by their sets' score margins (arena.margins): of the suite's ways, the one
# that settles every adjacent pair soonest, its calls calibrated (docs/benchmarks.md#rating).
FINALS_RATING_MODE = MARGINS_MODE


class CompetitionError(StoreError):
    """A competition that cannot be made or moved on; the message says what to do."""


class UnknownCompetition(CompetitionError):
    pass


class UploadsClosed(CompetitionError):
    """An upload for a bot of a competition that no longer takes uploads."""


@dataclass(frozen=True)
class Competition:
    id: int
    name: str
    game: str
    table_size: int
    options: dict[str, Any]
    config: dict[str, Any]  # arena.competitions.config.CompetitionConfig.stored()
    created: float
    freeze_at: float
    finals_at: float
    phase: str
    finals_end: str | None  # why the finals stopped: settled or budget
    standings: list[dict[str, Any]] | None  # once published
    entrants: tuple[str, ...]  # bot versions, from the freeze on
    steps: dict[str, float]  # phase -> when it began

    def summary(self) -> dict[str, Any]:
        """What the API and `arena competition show --json` say of it (JSON-ready)."""
        return {
            "name": self.name,
            "game": self.game,
            "table_size": self.table_size,
            "phase": self.phase,
            "freeze_at": self.freeze_at,
            "finals_at": self.finals_at,
            "steps": self.steps,
            "entrants": list(self.entrants),
            "finals_end": self.finals_end,
            "standings": self.standings,
        }

    @property
    def open_ladder(self) -> str:
        return open_ladder_name(self.name)

    @property
    def finals_ladder(self) -> str:
        return finals_ladder_name(self.name)

    @property
    def bots(self) -> tuple[str, ...] | None:
        bots = self.config.get("bots")
        return tuple(bots) if bots is not None else None


def open_ladder_name(competition: str) -> str:
    return f"{competition}.open"


def finals_ladder_name(competition: str) -> str:
    return f"{competition}.finals"


def no_competition(name: str) -> UnknownCompetition:
    return UnknownCompetition(
        f"there is no competition called {name!r}; see arena competition list"
    )


_COLUMNS = (
    "id, name, game, table_size, options, config, created, freeze_at, finals_at, phase, "
    "finals_end, standings"
)


def _json_or_none(text: str | None) -> Any:
    return json.loads(text) if text is not None else None


class Competitions(Ladders):
    """The competitions' part of the Store."""

    # The registry (registry.py), another base of the Store, lists the bots.
    list_bots: Callable[..., list[Bot]]

    @sqlite_errors
    def create_competition(
        self,
        name: str,
        game: str,
        table_size: int,
        options: Mapping[str, Any],
        config: Mapping[str, Any],
        freeze_at: float,
        finals_at: float,
        created: float | None = None,
    ) -> Competition:
        """A new competition, open from now (its definition checked by arena.competitions)."""
        check_name("competition", name, CompetitionError)
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM competitions WHERE name = ?", (name,)).fetchone():
                raise CompetitionError(
                    f"a competition called {name!r} already exists; choose another name"
                )
            for ladder in (open_ladder_name(name), finals_ladder_name(name)):
                if conn.execute("SELECT 1 FROM ladders WHERE name = ?", (ladder,)).fetchone():
                    raise CompetitionError(
                        f"a ladder called {ladder!r} exists, and competition {name!r} needs "
                        "that name; choose another competition name"
                    )
            at = now() if created is None else created
            cur = conn.execute(
                "INSERT INTO competitions (name, game, table_size, options, config, created, "
                "freeze_at, finals_at, phase) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    name,
                    game,
                    table_size,
                    json.dumps(dict(options)),
                    json.dumps(dict(config)),
                    at,
                    freeze_at,
                    finals_at,
                    OPEN,
                ),
            )
            self._step(conn, int(cur.lastrowid or 0), OPEN, at)
        return self.get_competition(name)

    @sqlite_errors
    def get_competition(self, name: str) -> Competition:
        if not self.has_table("competitions"):  # a read-only open of an older schema
            raise no_competition(name)
        row = one_row(
            self.db,
            f"SELECT {_COLUMNS} FROM competitions WHERE name = ?",
            (name,),
            no_competition(name),
        )
        entrants = tuple(
            r[0]
            for r in self.db.execute(
                "SELECT b.name FROM competition_entrants e JOIN bots b ON b.id = e.bot_id "
                "WHERE e.competition_id = ? ORDER BY e.position",
                (row[0],),
            )
        )
        steps = dict(
            self.db.execute(
                "SELECT phase, at FROM competition_steps WHERE competition_id = ?", (row[0],)
            ).fetchall()
        )
        return from_row(
            Competition,
            _COLUMNS,
            row,
            {"options": json.loads, "config": json.loads, "standings": _json_or_none},
            entrants=entrants,
            steps=steps,
        )

    @sqlite_errors
    def list_competitions(self) -> list[Competition]:
        if not self.has_table("competitions"):  # a read-only open of an older schema
            return []
        names = [r[0] for r in self.db.execute("SELECT name FROM competitions ORDER BY id")]
        return [self.get_competition(n) for n in names]

    @sqlite_errors
    def freeze_competition(
        self, name: str, finals_after_s: float | None = None, qualify: int | None = None
    ) -> Competition:
        """open -> frozen: the entrants are fixed, each bot's newest version that passed (of the
        bots the competition names, or else of those that joined its open ladder), neither
        suspended nor removed; with `qualify`, only the `qualify` of them best placed in the
        open ladder (by that version's conservative rating there; a version it has not rated
        comes last). With `finals_after_s`, the finals begin that long after now (a freeze
        earlier than planned brings them forward). Nothing happens if it is frozen already."""
        with self._write() as conn:
            comp_id, phase = self._phase(conn, name)
            if phase != OPEN:
                return self.get_competition(name)
            comp = self.get_competition(name)
            families = comp.bots
            if families is None:
                families = tuple(
                    r[0]
                    for r in conn.execute(
                        "SELECT DISTINCT b.family FROM ladder_bots lb "
                        "JOIN ladders l ON l.id = lb.ladder_id JOIN bots b ON b.id = lb.bot_id "
                        "WHERE l.name = ? ORDER BY b.family",
                        (comp.open_ladder,),
                    )
                )
            chosen = [
                b
                for b in playing_versions(self.list_bots(), families)
                if not b.suspended and not b.remote
            ]
            if qualify is not None and len(chosen) > qualify:
                rated = dict(
                    conn.execute(
                        "SELECT b.name, r.conservative FROM ratings r JOIN bots b ON "
                        "b.id = r.bot_id JOIN ladders l ON l.id = r.ladder_id WHERE l.name = ? "
                        "AND r.matches > 0",
                        (comp.open_ladder,),
                    ).fetchall()
                )
                chosen.sort(key=lambda b: (-rated.get(b.name, float("-inf")), b.family))
                del chosen[qualify:]
            chosen.sort(key=lambda b: b.family)
            conn.executemany(
                "INSERT INTO competition_entrants (competition_id, position, family, bot_id) "
                "VALUES (?, ?, ?, (SELECT id FROM bots WHERE name = ?))",
                [(comp_id, i, b.family, b.name) for i, b in enumerate(chosen)],
            )
            at = self._move(conn, comp_id, FROZEN)
            if finals_after_s is not None:
                conn.execute(
                    "UPDATE competitions SET finals_at = ? WHERE id = ?",
                    (at + finals_after_s, comp_id),
                )
        return self.get_competition(name)

    @sqlite_errors
    def start_finals(self, name: str, seed: int | None = None) -> Competition:
        """frozen -> finals: the finals' ladder, one round-robin of duplicate sets among the
        entrants with a seed drawn now (None: a fresh one; nobody saw its deals), rated in set
        mode from scratch. Nothing happens if the finals have started already."""
        with self._write() as conn:
            comp_id, phase = self._phase(conn, name)
            if phase != FROZEN:
                return self.get_competition(name)
            comp = self.get_competition(name)
            if len(comp.entrants) < max(2, comp.table_size):
                raise CompetitionError(
                    f"competition {name!r} has {len(comp.entrants)} entrants "
                    f"({', '.join(comp.entrants) or 'none'}); its finals at tables of "
                    f"{comp.table_size} need at least {max(2, comp.table_size)}. Nothing can "
                    "enter once frozen: create a new competition"
                )
            self.create_ladder(
                comp.finals_ladder,
                comp.game,
                comp.table_size,
                comp.entrants,
                options=comp.options,
                rounds=1,
                seed=seed,
                rating_mode=FINALS_RATING_MODE,
                settings={"competition": name},
            )
            self._move(conn, comp_id, FINALS)
        return self.get_competition(name)

    @sqlite_errors
    def extend_finals(self, name: str, rounds: int) -> None:
        """The finals' schedule grown to `rounds` round-robins (the longer schedule begins with
        the shorter: arena.schedule), while the competition is in its finals."""
        with self._write() as conn:
            _, phase = self._phase(conn, name)
            if phase != FINALS:
                raise CompetitionError(f"competition {name!r} is {phase}, not in its finals")
            ladder = self.get_ladder(finals_ladder_name(name))
            if rounds > ladder.rounds:
                self.ensure_ladder(
                    ladder.name, ladder.game, ladder.table_size, ladder.bots, rounds=rounds
                )

    @sqlite_errors
    def publish_competition(
        self,
        name: str,
        finals_end: str,
        standings: Sequence[Mapping[str, Any]],
        archive: bytes,
    ) -> Competition:
        """finals -> published: the standings and the archive, kept as they are from then on.
        Nothing happens if it is published already."""
        with self._write() as conn:
            comp_id, phase = self._phase(conn, name)
            if phase != FINALS:
                return self.get_competition(name)
            conn.execute(
                "UPDATE competitions SET finals_end = ?, standings = ?, archive = ? WHERE id = ?",
                (finals_end, json.dumps(list(standings)), archive, comp_id),
            )
            self._move(conn, comp_id, PUBLISHED)
        return self.get_competition(name)

    @sqlite_errors
    def competition_archive(self, name: str) -> bytes | None:
        """The results archive of a published competition (None before)."""
        if not self.has_table("competitions"):
            raise no_competition(name)
        phase, archive = one_row(
            self.db,
            "SELECT phase, archive FROM competitions WHERE name = ?",
            (name,),
            no_competition(name),
        )
        return bytes(archive) if phase == PUBLISHED and archive is not None else None

    def _phase(self, conn: sqlite3.Connection, name: str) -> tuple[int, str]:
        row = one_row(
            conn, "SELECT id, phase FROM competitions WHERE name = ?", (name,), no_competition(name)
        )
        return int(row[0]), str(row[1])

    def _move(self, conn: sqlite3.Connection, comp_id: int, phase: str) -> float:
        at = now()
        conn.execute("UPDATE competitions SET phase = ? WHERE id = ?", (phase, comp_id))
        self._step(conn, comp_id, phase, at)
        return at

    @staticmethod
    def _step(conn: sqlite3.Connection, comp_id: int, phase: str, at: float) -> None:
        conn.execute(
            "INSERT INTO competition_steps (competition_id, phase, at) VALUES (?, ?, ?)",
            (comp_id, phase, at),
        )
