"""Ladders as stored: creating one (its whole schedule written as pending matches, in one
transaction), resuming or extending it, continuous ladders that bots join and sets are appended
to, and reading them back.

The schedule, the seat rotation and the rating system are pure maths the store calls
(arena/schedule.py, arena/ratings.py); the rating of finished matches in schedule order is the
store's own (rating.py), inside the transaction that recorded them.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Callable, Mapping, Sequence

from arena.ratings import DEFAULT_RATING_MODE, RATING_MODES, Rater, RatingParams
from arena.schedule import (
    DEFAULT_MAX_FULL_TABLES,
    ScheduledMatch,
    check_ladder_shape,
    make_schedule,
    random_seed,
    rotate,
)

from .errors import (
    InvalidLadderName,
    LadderError,
    LadderMismatch,
    UnknownBot,
    UnknownLadder,
    sqlite_errors,
)
from .rating import start_rating
from .records import Ladder, LadderInfo, StoredMatch, from_row
from .schema import StoreFile, check_name, now, one_row

_LADDER_COLUMNS = (
    "id, name, game, options, table_size, seed, rounds, rating_mode, settings, created, "
    "num_matches, completed, rated_through"
)


def no_ladder(name: str) -> UnknownLadder:
    """The error for a ladder name that names none."""
    return UnknownLadder(f"there is no ladder called {name!r}; see arena ladder list")


def check_ladder_name(name: str) -> None:
    check_name("ladder", name, InvalidLadderName)


def _definition(
    game: str, table_size: int, bots: tuple[str, ...], options: Mapping[str, Any]
) -> dict[str, Any]:
    """What a ladder is, by the names its mismatch messages use."""
    return {"game": game, "table size": table_size, "bots": bots, "options": options}


def _differences(wanted: Mapping[str, Any], have: Mapping[str, Any]) -> list[str]:
    """Where an existing ladder differs from the one asked for, one phrase each."""
    return [
        f"{key} is {have[key]!r}, not {wanted[key]!r}" for key in wanted if wanted[key] != have[key]
    ]


def _resolve_game(game: str, table_size: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """The game's full option set (defaults filled in), or LadderError saying what is wrong."""
    # Here: the engines are a few ms of `arena rankings`, which never writes a ladder.
    from arena.games import ConfigError, make_game

    try:
        return dict(make_game(game, table_size, **dict(options)).config()["options"])
    except ConfigError as exc:
        raise LadderError(str(exc)) from None


class Ladders(StoreFile):
    """The ladders' part of the Store."""

    # Matches (matches.py), the class built on this one, reads a ladder's matches back.
    get_match: Callable[[str, int], StoredMatch]

    def __init__(self) -> None:
        self._ladders: dict[str, LadderInfo] = {}

    @staticmethod
    def _check_rating_mode(rating_mode: str | None) -> str:
        if rating_mode is None:
            return DEFAULT_RATING_MODE
        if rating_mode not in RATING_MODES:
            raise LadderError(f"rating mode {rating_mode!r} is not one of {list(RATING_MODES)}")
        return rating_mode

    @sqlite_errors
    def create_ladder(
        self,
        name: str,
        game: str,
        table_size: int,
        bots: Sequence[str],
        *,
        options: Mapping[str, Any] | None = None,
        rounds: int = 1,
        seed: int | None = None,
        rating_mode: str | None = None,
        rating_params: RatingParams | None = None,
        max_full_tables: int | None = None,
        opening_round: bool | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Ladder:
        """Create a ladder and write its whole schedule as pending matches, in one transaction.

        Validates the game and its options for `table_size` players (arena.games), the bots
        (registered, not removed, distinct), the shape (2 <= k <= 5, k <= number of bots) and
        the rating mode (None: arena.ratings' default); any error leaves the database unchanged.
        `rating_params` None: the defaults; `max_full_tables` None: arena.schedule's default.
        `seed` None draws one. `opening_round` True: the schedule begins with an opening round of
        single matches (arena.schedule; None or False: none), kept in the settings so that an
        extension draws the same schedule.
        `settings` holds the runner's own settings (limits, concurrency...), stored as JSON."""
        check_ladder_name(name)
        resolved_options = _resolve_game(game, table_size, options or {})
        rating_mode = self._check_rating_mode(rating_mode)
        if len(set(bots)) != len(bots):
            raise LadderError("a ladder's bots must be distinct; a bot is listed twice")
        try:
            check_ladder_shape(len(bots), table_size, rounds)
        except ValueError as exc:  # ScheduleError
            raise LadderError(str(exc)) from None
        if seed is None:
            seed = random_seed()
        if max_full_tables is None:
            max_full_tables = DEFAULT_MAX_FULL_TABLES
        all_settings = dict(settings or {})
        all_settings["rating_params"] = (rating_params or RatingParams()).to_dict()
        all_settings["max_full_tables"] = max_full_tables
        all_settings["opening_round"] = bool(opening_round)
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM ladders WHERE name = ?", (name,)).fetchone():
                raise LadderError(f"a ladder called {name!r} already exists; choose another name")
            ladder_id, bot_ids = self._insert_ladder(
                conn,
                (name, game, resolved_options, table_size, seed, rounds, rating_mode),
                all_settings,
                bots,
            )
            self._add_matches(conn, ladder_id, bot_ids, table_size, 0, rounds, seed, all_settings)
        return self.get_ladder(name)

    def _insert_ladder(
        self,
        conn: sqlite3.Connection,
        row: tuple[str, str, Mapping[str, Any], int, int, int, str],
        settings: Mapping[str, Any],
        bots: Sequence[str],
    ) -> tuple[int, list[int]]:
        """Write a new ladder's row, (name, game, options, table size, seed, rounds, rating
        mode) and its settings, with its bots and their initial ratings, inside the caller's
        transaction. Returns the ladder's id and its bots' ids, in `bots`' order."""
        name, game, options, table_size, seed, rounds, rating_mode = row
        bot_ids = [self._bot_id(conn, b) for b in bots]
        cur = conn.execute(
            "INSERT INTO ladders (name, game, options, table_size, seed, rounds, rating_mode,"
            " settings, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                game,
                json.dumps(options),
                table_size,
                seed,
                rounds,
                rating_mode,
                json.dumps(settings),
                now(),
            ),
        )
        ladder_id = int(cur.lastrowid)  # type: ignore[arg-type]
        rater = Rater(RatingParams.from_dict(settings.get("rating_params", {})))
        start, low = start_rating(rating_mode, rater)
        conn.executemany(
            "INSERT INTO ladder_bots (ladder_id, position, bot_id) VALUES (?, ?, ?)",
            [(ladder_id, i, b) for i, b in enumerate(bot_ids)],
        )
        conn.executemany(
            "INSERT INTO ratings (ladder_id, bot_id, mu, sigma, conservative) "
            "VALUES (?, ?, ?, ?, ?)",
            [(ladder_id, b, start.mu, start.sigma, low) for b in bot_ids],
        )
        return ladder_id, bot_ids

    def _add_matches(
        self,
        conn: sqlite3.Connection,
        ladder_id: int,
        bot_ids: list[int],
        k: int,
        from_round: int,
        rounds: int,
        seed: int,
        settings: Mapping[str, Any],
    ) -> None:
        """Write the matches of rounds `from_round`..`rounds`-1 of the schedule the ladder's
        `settings` draw (max_full_tables; opening_round, absent in ladders made before it: no)."""
        schedule = make_schedule(
            bot_ids,
            k,
            rounds,
            seed,
            max_full_tables=settings["max_full_tables"],
            opening_round=bool(settings.get("opening_round", False)),
        )
        conn.executemany(
            "INSERT INTO matches (ladder_id, idx, set_index, round, rotation, seed, seats) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                (ladder_id, m.index, m.set_index, m.round, m.rotation, m.seed, json.dumps(m.seats))
                for m in schedule
                if m.round >= from_round
            ),
        )
        conn.execute(
            "UPDATE ladders SET num_matches = ?, rounds = ? WHERE id = ?",
            (len(schedule), rounds, ladder_id),
        )

    # ------------------------------------------------------------ continuous (open) ladders

    @sqlite_errors
    def ensure_open_ladder(
        self,
        name: str,
        game: str,
        table_size: int,
        *,
        options: Mapping[str, Any] | None = None,
        rating_params: RatingParams | None = None,
        rating_mode: str | None = None,
    ) -> Ladder:
        """A continuous ladder for `arena serve`: no schedule drawn in advance; bots join it
        (join_ladder) and the service appends each table it chooses as a duplicate set
        (add_set). Rated in the order matches were added, per match or per set (`rating_mode`,
        for a new ladder; an existing one keeps its own). Returns the existing one if the
        definition matches (LadderMismatch otherwise)."""
        rating_mode = self._check_rating_mode(rating_mode)
        check_ladder_name(name)
        resolved = _resolve_game(game, table_size, options or {})
        try:
            ladder = self.get_ladder(name)
        except UnknownLadder:
            ladder = None
        if ladder is not None:
            if (ladder.game, ladder.table_size, ladder.options) != (
                game,
                table_size,
                resolved,
            ) or not ladder.settings.get("open"):
                raise LadderMismatch(
                    f"ladder {name!r} exists with another definition ({ladder.game}, tables of "
                    f"{ladder.table_size}, options {ladder.options}); choose another name"
                )
            return ladder
        settings = {
            "open": True,
            "rating_params": (rating_params or RatingParams()).to_dict(),
            "max_full_tables": DEFAULT_MAX_FULL_TABLES,
        }
        with self._write() as conn:
            row = (name, game, resolved, table_size, random_seed(), 0, rating_mode)
            self._insert_ladder(conn, row, settings, ())
        return self.get_ladder(name)

    @sqlite_errors
    def join_ladder(self, ladder: str, bot: str) -> bool:
        """Add a bot to a ladder with a fresh rating; False if it was already in it."""
        info = self._info(ladder)
        rater = info.rater
        with self._write() as conn:
            bot_id = self._bot_id(conn, bot)
            if bot_id in info.bot_names:
                return False
            position = conn.execute(
                "SELECT coalesce(max(position) + 1, 0) FROM ladder_bots WHERE ladder_id = ?",
                (info.id,),
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO ladder_bots (ladder_id, position, bot_id) VALUES (?, ?, ?)",
                (info.id, position, bot_id),
            )
            start, low = start_rating(info.rating_mode, rater)
            conn.execute(
                "INSERT INTO ratings (ladder_id, bot_id, mu, sigma, conservative) "
                "VALUES (?, ?, ?, ?, ?)",
                (info.id, bot_id, start.mu, start.sigma, low),
            )
        info.bot_names[bot_id] = bot
        return True

    @sqlite_errors
    def add_set(self, ladder: str, table: Sequence[str], seed: int) -> list[StoredMatch]:
        """Append a duplicate set to an open ladder: `table`'s bots (they must have joined) play
        one deal (`seed`) k times, the seats rotated as in a scheduled ladder (by
        arena.schedule.rotate), as consecutive matches sharing a new set index, rotations
        0..k-1."""
        info = self._info(ladder)
        ids = {name: i for i, name in info.bot_names.items()}
        missing = [s for s in table if s not in ids]
        if missing:
            raise LadderError(f"{', '.join(missing)} did not join ladder {ladder!r}")
        k = info.table_size
        if len(table) != k or len(set(table)) != len(table):
            raise LadderError(f"a match of ladder {ladder!r} needs {k} distinct bots")
        with self._write() as conn:
            # Sets are appended, so the last match holds the highest set index so far.
            first, set_index = conn.execute(
                "SELECT l.num_matches, coalesce((SELECT set_index + 1 FROM matches WHERE "
                "ladder_id = l.id ORDER BY idx DESC LIMIT 1), 0) FROM ladders l WHERE l.id = ?",
                (info.id,),
            ).fetchone()
            conn.executemany(
                "INSERT INTO matches (ladder_id, idx, set_index, round, rotation, seed, seats) "
                "VALUES (?, ?, ?, 0, ?, ?, ?)",
                [
                    (
                        info.id,
                        first + r,
                        set_index,
                        r,
                        seed,
                        json.dumps([ids[s] for s in rotate(table, r)]),
                    )
                    for r in range(k)
                ],
            )
            conn.execute(
                "UPDATE ladders SET num_matches = num_matches + ? WHERE id = ?", (k, info.id)
            )
        return [self.get_match(ladder, first + r) for r in range(k)]

    # ------------------------------------------------------------ comparisons (arena compare)

    @sqlite_errors
    def ensure_comparison(
        self,
        name: str,
        game: str,
        table_size: int,
        bots: Sequence[str],
        *,
        options: Mapping[str, Any] | None = None,
        seed: int,
        comparison: Mapping[str, Any],
    ) -> Ladder:
        """The ladder that holds comparison `name` (arena.compare): `bots` are NEW, BASE and the
        opponents; its matches are appended deal by deal (append_matches), each deal a set of
        `2 * table_size` matches sharing one seed (settings' `set_size`: what the web waits
        for before it shows the deal). Rated per match, like any ladder, though the comparison's
        verdict is its own. Created if absent; if it exists, it must be the same comparison
        (LadderMismatch says what differs), so the same command again resumes it."""
        check_ladder_name(name)
        resolved = _resolve_game(game, table_size, options or {})
        wanted = _definition(game, table_size, tuple(bots), resolved)
        wanted.update(seed=seed, comparison=dict(comparison))
        try:
            ladder = self.get_ladder(name)
        except UnknownLadder:
            ladder = None
        if ladder is not None:
            have = _definition(ladder.game, ladder.table_size, ladder.bots, ladder.options)
            have.update(seed=ladder.seed, comparison=ladder.settings.get("comparison"))
            diff = _differences(wanted, have)
            if diff:
                raise LadderMismatch(
                    f"{name!r} exists with another definition: {'; '.join(diff)}. Run it with "
                    "its own definition to resume it, or choose another name (--name)"
                )
            return ladder
        if len(set(bots)) != len(bots):
            raise LadderError(
                "a comparison's bots must be distinct: NEW, BASE and the "
                "opponents are all different bots"
            )
        settings = {
            "comparison": dict(comparison),
            "set_size": 2 * table_size,
            "rating_params": RatingParams().to_dict(),
            "max_full_tables": DEFAULT_MAX_FULL_TABLES,
        }
        with self._write() as conn:
            row = (name, game, resolved, table_size, seed, 0, "match")
            self._insert_ladder(conn, row, settings, bots)
        return self.get_ladder(name)

    @sqlite_errors
    def append_matches(
        self, ladder: str, matches: Sequence[ScheduledMatch[Any]], seats: Sequence[Sequence[str]]
    ) -> int:
        """Append scheduled matches (their index must continue the ladder's: the next is
        `num_matches`) with these bots' seats; returns the new number of matches."""
        info = self._info(ladder)
        ids = {name: i for i, name in info.bot_names.items()}
        with self._write() as conn:
            first = conn.execute(
                "SELECT num_matches FROM ladders WHERE id = ?", (info.id,)
            ).fetchone()[0]
            if matches and matches[0].index != first:
                raise LadderError(
                    f"ladder {ladder!r} has {first} matches; the next appended "
                    f"must have index {first}, not {matches[0].index}"
                )
            conn.executemany(
                "INSERT INTO matches (ladder_id, idx, set_index, round, rotation, seed, seats) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        info.id,
                        m.index,
                        m.set_index,
                        m.round,
                        m.rotation,
                        m.seed,
                        json.dumps([ids[s] for s in bots]),
                    )
                    for m, bots in zip(matches, seats)
                ],
            )
            conn.execute(
                "UPDATE ladders SET num_matches = num_matches + ? WHERE id = ?",
                (len(matches), info.id),
            )
            return int(first + len(matches))

    @sqlite_errors
    def ensure_ladder(
        self, name: str, game: str, table_size: int, bots: Sequence[str], **kwargs: Any
    ) -> Ladder:
        """The ladder `name`: created as create_ladder does if absent; if it exists, checked
        against the request (LadderMismatch says what differs) so that running the same command
        again resumes it. Asking for more rounds than it has extends its schedule (the
        schedule with more rounds begins with the one with fewer)."""
        try:
            ladder = self.get_ladder(name)
        except UnknownLadder:
            return self.create_ladder(name, game, table_size, bots, **kwargs)
        options = _resolve_game(game, table_size, kwargs.get("options") or {})
        wanted = _definition(game, table_size, tuple(bots), options)
        have = _definition(ladder.game, ladder.table_size, ladder.bots, ladder.options)
        # A ladder keeps the mode it was created with: asked for none, it resumes in its own.
        if kwargs.get("rating_mode") is not None:
            wanted["rating mode"], have["rating mode"] = kwargs["rating_mode"], ladder.rating_mode
        if kwargs.get("seed") is not None:
            wanted["seed"], have["seed"] = kwargs["seed"], ladder.seed
        if kwargs.get("rating_params") is not None:
            wanted["rating parameters"] = kwargs["rating_params"]
            have["rating parameters"] = ladder.rating_params
        # Likewise its opening round (or none): asked nothing, it keeps what it was made with.
        if kwargs.get("opening_round") is not None:
            wanted["opening round"] = kwargs["opening_round"]
            have["opening round"] = bool(ladder.settings.get("opening_round", False))
        diff = _differences(wanted, have)
        rounds = kwargs.get("rounds", ladder.rounds)
        if rounds < ladder.rounds:
            diff.append(f"rounds is {ladder.rounds}, not {rounds}")
        if diff:
            raise LadderMismatch(
                f"ladder {name!r} exists with another definition: {'; '.join(diff)}. Run it "
                "with its own definition to resume it, or choose another ladder name"
            )
        if rounds > ladder.rounds:
            with self._write() as conn:
                ids = [
                    r[0]
                    for r in conn.execute(
                        "SELECT bot_id FROM ladder_bots WHERE ladder_id = ? ORDER BY position",
                        (ladder.id,),
                    )
                ]
                self._add_matches(
                    conn,
                    ladder.id,
                    ids,
                    ladder.table_size,
                    ladder.rounds,
                    rounds,
                    ladder.seed,
                    ladder.settings,
                )
            ladder = self.get_ladder(name)
        return ladder

    @sqlite_errors
    def get_ladder(self, name: str) -> Ladder:
        row = one_row(
            self.db,
            f"SELECT {_LADDER_COLUMNS} FROM ladders WHERE name = ?",
            (name,),
            no_ladder(name),
        )
        bots = tuple(
            r[0]
            for r in self.db.execute(
                "SELECT b.name FROM ladder_bots lb JOIN bots b ON b.id = lb.bot_id "
                "WHERE lb.ladder_id = ? ORDER BY lb.position",
                (row[0],),
            )
        )
        return from_row(
            Ladder,
            _LADDER_COLUMNS,
            row,
            {"options": json.loads, "settings": json.loads},
            bots=bots,
        )

    @sqlite_errors
    def list_ladders(self) -> list[Ladder]:
        names = [r[0] for r in self.db.execute("SELECT name FROM ladders ORDER BY created, id")]
        return [self.get_ladder(n) for n in names]

    def _bot_id(self, conn: sqlite3.Connection, name: str) -> int:
        row = one_row(
            conn,
            "SELECT id FROM bots WHERE name = ? AND removed IS NULL",
            (name,),
            UnknownBot(f"there is no bot called {name!r}; add it first with arena bot add"),
        )
        return int(row[0])

    def _info(self, ladder: str) -> LadderInfo:
        info = self._ladders.get(ladder)
        if info is None:
            full = self.get_ladder(ladder)
            ids = self.db.execute(
                "SELECT lb.bot_id, b.name FROM ladder_bots lb JOIN bots b ON b.id = lb.bot_id "
                "WHERE lb.ladder_id = ?",
                (full.id,),
            )
            info = LadderInfo(
                full.id,
                full.name,
                full.table_size,
                full.rating_mode,
                Rater(full.rating_params),
                {i: n for i, n in ids},
            )
            self._ladders[ladder] = info
        return info
