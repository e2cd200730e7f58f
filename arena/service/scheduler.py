"""What `arena serve` decides, apart from running it: which bots may play a ladder now, when a
ladder's loop chooses a table, waits, or stops the service, which table comes next (with
`tables.choose_table`) and with what seed, and which bot the fault policy suspends.

Pure: no I/O, no clock of its own (the caller passes `now`), one seeded rng; the service
(service.py) does what it says and tells it what happened. Tests drive it without processes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Iterable, Protocol, Sequence

from arena.ratings import Rater
from arena.schedule import SEED_BOUND
from arena.store import Bot, playing_versions

from .tables import Candidate, FaultPolicy, choose_table


class Step(Enum):
    """What a ladder's loop does next."""

    CHOOSE = "choose"  # there is room for another set: choose a table
    WAIT = "wait"  # for a set to end, or for bots to connect
    STOP = "stop"  # the service's match quota is met and this ladder's sets are done


class Rated(Protocol):
    """A bot's standing in a ladder, as the store's rankings give it (read only)."""

    @property
    def bot(self) -> str: ...
    @property
    def mu(self) -> float: ...
    @property
    def sigma(self) -> float: ...
    @property
    def matches(self) -> int: ...


@dataclass(frozen=True)
class SchedulerSettings:
    concurrency: int = 4  # sets in flight per ladder
    share_cap: float = 1.5
    fault_policy: FaultPolicy = FaultPolicy()
    max_matches: int | None = None  # matches started before the service stops; None: never
    seed: int | None = None
    allow_remote: bool = False  # whether remote bots are seated (arena/ladder/remote.py)


class Scheduler:
    """The decisions of a continuous ladder service, for any number of ladders."""

    def __init__(self, settings: SchedulerSettings = SchedulerSettings()):
        self.settings = settings
        self.rng = random.Random(settings.seed)
        self.started_matches = 0
        self._raters: dict[str, Rater] = {}
        self._members: dict[str, frozenset[str] | None] = {}
        self._busy: dict[str, set[str]] = {}  # ladder -> bots at a table now
        self._played: dict[tuple[str, str], int] = {}  # (ladder, bot) -> matches in progress
        self._last: dict[tuple[str, str], float] = {}  # (ladder, bot) -> last seat (or joined)
        self._joined: set[tuple[str, str]] = set()  # (ladder, bot) known to be in the ladder
        self._recent_faults: dict[str, list[bool]] = {}  # bot -> faulted?, newest last

    def open_ladder(self, name: str, rater: Rater, members: frozenset[str] | None = None) -> None:
        """Schedule the ladder `name`, rated by `rater`, among `members` (None: every bot)."""
        self._raters[name] = rater
        self._members[name] = members
        self._busy[name] = set()

    # ------------------------------------------------------------ the loop

    def next_step(self, in_flight: int) -> Step:
        """What a ladder's loop does with `in_flight` of its sets playing."""
        s = self.settings
        if s.max_matches is not None and self.started_matches >= s.max_matches:
            return Step.WAIT if in_flight else Step.STOP
        return Step.CHOOSE if in_flight < s.concurrency else Step.WAIT

    def available(
        self, ladder: str, bots: Iterable[Bot], connected: Callable[[str], bool] | None
    ) -> list[Bot]:
        """The bots that may take a seat in `ladder` now: the versions its members name (NAME:
        the latest, NAME@N: that one; no members: every bot's latest version) that are not
        suspended, and remote ones only if the service seats them (`allow_remote`) and while
        `connected` says so (None: no referee here to connect to, as on Ray, so no remote bot
        plays)."""
        remote_ok = self.settings.allow_remote and connected is not None
        return [
            b
            for b in playing_versions(bots, self._members[ladder])
            if not b.suspended
            and (not b.remote or (remote_ok and connected is not None and connected(b.name)))
        ]

    def newcomers(self, ladder: str, names: Iterable[str]) -> list[str]:
        """Of these bots, the ones not yet known to be in `ladder` (to join it)."""
        return [n for n in names if (ladder, n) not in self._joined]

    def joined(self, ladder: str, name: str, now: float) -> None:
        """`name` is in `ladder` from `now` (it waits for a seat from then)."""
        self._joined.add((ladder, name))
        self._last.setdefault((ladder, name), now)

    def choose_table(
        self, ladder: str, table_size: int, names: Sequence[str], standings: Iterable[Rated]
    ) -> tuple[str, ...] | None:
        """The next table of `ladder` among the bots `names` (in a random seat order), or
        None if fewer than `table_size` of them are idle."""
        rater = self._raters[ladder]
        by_bot = {s.bot: s for s in standings}
        candidates = []
        for name in names:
            st = by_bot.get(name)
            key = (ladder, name)
            candidates.append(
                Candidate(
                    name=name,
                    mu=st.mu if st else rater.params.mu,
                    sigma=st.sigma if st else rater.params.sigma,
                    matches=(st.matches if st else 0) + self._played.get(key, 0),
                    busy=name in self._busy[ladder],
                    last_played=self._last.get(key, 0.0),
                )
            )
        return choose_table(
            candidates, table_size, rater.env, self.rng, share_cap=self.settings.share_cap
        )

    def new_seed(self) -> int:
        """A duplicate set's seed: below 2**53, so it survives JSON in any language."""
        return self.rng.randrange(SEED_BOUND)

    # ------------------------------------------------------------ what happened

    def set_started(self, ladder: str, table: Sequence[str], matches: int, now: float) -> None:
        """A set of `matches` matches at `table` began at `now`: its bots are busy until
        `set_ended`, and their matches count as played for the table choice meanwhile."""
        self.started_matches += matches
        for bot in table:
            self._busy[ladder].add(bot)
            self._played[(ladder, bot)] = self._played.get((ladder, bot), 0) + matches
            self._last[(ladder, bot)] = now

    def set_ended(self, ladder: str, table: Sequence[str], matches: int) -> None:
        """The set is over (played, abandoned or stopped): its bots are idle again, and its
        matches are counted by the store's standings from now on, not here."""
        for bot in table:
            self._busy[ladder].discard(bot)
            played = self._played.get((ladder, bot), 0)
            self._played[(ladder, bot)] = max(0, played - matches)

    def match_played(
        self, seat_names: Sequence[str], faulted_seats: Iterable[int]
    ) -> list[tuple[str, str]]:
        """A match was played; returns (bot, reason) for each bot the fault policy suspends
        now (its count starts afresh, for when it is reinstated)."""
        policy = self.settings.fault_policy
        faulted = set(faulted_seats)
        suspended = []
        for seat, bot in enumerate(seat_names):
            history = self._recent_faults.setdefault(bot, [])
            history.append(seat in faulted)
            del history[: -policy.window]
            reason = policy.verdict(history)
            if reason is not None:
                self._recent_faults[bot] = []
                suspended.append((bot, reason))
        return suspended
