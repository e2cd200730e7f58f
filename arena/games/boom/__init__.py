"""Boom: Runaway: the fast rules engine, the one matches and bots run (docs/rules/boom.md).

This module owns the fast engine (BoomGame, BoomState; BoomGameV2 for engine version 2's
replays), its legal-action sequences (LegalPairs), its event log, determinizations
(sample_state) and observations' numbers for the training environments (feature_values), and
is the public module: it re-exports the rules data and the plain rules of `boom.plain`, the
specification, which holds the same rules written to be read (PlainBoomGame).
The two play alike in every variant: tests/games/test_boom_plain.py checks them equal after every
action of many random matches, so a change to the rules is made there first and then here.

Encoding. Bomb cards are ints 0..49: colour COLOURS[id // 10], value VALUES[id % 10]. RUSE (50)
stands for a seat's own ruse card. An action is a sorted tuple of the card ids a seat plays in
the current step, for example (3,) or (12, 47) or (7, RUSE).

Speed. Random playouts are the benchmark and bots simulate with this engine, so the hot path
(`seats_to_act`, `legal_actions`, `apply_action`) uses ints, lists and precomputed tables, and
the event log is recorded as compact tuples; `Event` objects and observations are built only
when asked for. A round's resolution does only what later play depends on (cards taken back,
the end of the game); who escaped, the paradise cards and the scores are worked out from the
round's record when first read (`_round_outcome`, `_fold`). Chance is drawn by event from the
seed (`_draw_digits`), so a state carries no random generator.
"""

from __future__ import annotations

import random
from bisect import insort
from collections.abc import Sequence as SequenceABC
from enum import Enum
from functools import partial
from itertools import combinations, islice
from operator import add, attrgetter, itemgetter, lt, mod
from struct import Struct
from typing import Any, Final, Iterable, Iterator, Mapping, Sequence, cast

from ..base import (
    ConfigError,  # noqa: F401 (re-exported: boom.ConfigError)
    Event,
    Game,
    IllegalActionError,
    RulesError,
    State,
)
from ..copying import clone_function
from ..engines import load_engine
from ..kit import GameKit

try:  # hashlib.blake2b is this; importing it from here skips loading OpenSSL (~15 ms)
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - Pythons without the builtin module
    from hashlib import blake2b as _blake2b

# The rules data, the values seats see and the rules told plainly are the specification's
# (boom.plain); this engine builds its tables from them and is checked against it.
from .plain import (  # noqa: F401 - re-exported: arena.games.boom is the public module
    ADVANCED_DEAL,
    ADVANCED_REMOVED_VALUES,
    BASIC_DEAL,
    COLOURS,
    FEWEST_CARDS_BONUS,
    FEWEST_CARDS_BONUS_EVERY_ROUND,
    GAME_END_HAND_SIZE,
    GUARDS,
    HAND_SIZE_END,
    MAX_GAME_ROUNDS,
    MAX_PLAYERS,
    NUM_CARDS,
    NUM_COLOURS,
    NUM_GUARDS,
    ROUND_LIMIT_END,
    RUSE,
    RUSE_STEPS,
    SERIES_TARGET,
    SHORT_HAND_PLAYS_ALL,
    STEP_CARDS,
    STUCK_END,
    VALUES,
    BoomGameBase,
    BoomObservation,
    ParadiseCard,
    RoundPosition,
    action_to_string,
    any_escape,
    card_colour,
    card_to_string,
    card_value,
    escape_points,
    illegal_reason,
    plays_whole_hand,
    provably_stuck,
    recount_scores,
    removed_cards,
)  # fmt: skip

# Precomputed tables for the round resolution. A seat's cards of one round are summed into one
# int "word" (_WORDS[seat][card]): bit `card` marks the card, and above bit _SUM_BASE are bytes
# of sums: byte `colour` holds the table's sum of that colour (shared by every seat: a colour's
# cards sum to 35 at most), and from byte 5 each seat has 6 bytes, byte 5 + 6 * seat + colour
# for its sum of that colour and byte 5 + 6 * seat + 5 for its count of bomb cards. No byte can
# carry into the next, so summing the seats' words and reading the bytes gives each colour's
# total and its row of per-seat sums as a bytes slice, and the 10-bit slice of a colour in a
# seat's word is a "pattern" that indexes the card tuples below, so resolving a colour is a few
# slices and lookups.
_SUM_BASE = 56  # first byte boundary above the 50 card bits
assert sum(VALUES) < 256 and _SUM_BASE >= NUM_CARDS
_SEAT_BYTES = NUM_COLOURS + 1
_WORDS: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        1 << c
        | VALUES[c % 10] << _SUM_BASE + 8 * (c // 10)
        | VALUES[c % 10] << _SUM_BASE + 8 * (NUM_COLOURS + _SEAT_BYTES * seat + c // 10)
        | 1 << _SUM_BASE + 8 * (NUM_COLOURS + _SEAT_BYTES * seat + NUM_COLOURS)
        for c in range(NUM_CARDS)
    )
    + (0,)  # RUSE (50) counts for nothing
    for seat in range(MAX_PLAYERS)
)
_COUNT_AT = NUM_COLOURS + NUM_COLOURS  # the count byte of seat 0
_PATTERNS = range(1 << len(VALUES))
_PCARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(col * 10 + i for i in range(len(VALUES)) if p >> i & 1) for p in _PATTERNS)
    for col in range(NUM_COLOURS)
)
# Paradise cards are stored as codes card * 2 + face_up.
_PUP = tuple(tuple(tuple(c * 2 + 1 for c in cards) for cards in col) for col in _PCARDS)
_PDOWN = tuple(tuple(tuple(c * 2 for c in cards) for cards in col) for col in _PCARDS)
# Per guard card: (colour, shift of its pattern in a word, the guard's limit, index of its row
# in the sum bytes) for every colour, in resolution order.
_GUARD_PLAN: tuple[tuple[tuple[int, int, int, int], ...], ...] = tuple(
    tuple((col, col * len(VALUES), g[col], NUM_COLOURS + col) for col in range(NUM_COLOURS))
    for g in GUARDS
)
# Which colours go over the guard's limit, for the whole round at once. Bytes 0..4 of a round's
# summed words are the colours' totals (each at most sum(VALUES)). Adding 127 - limit to each
# sets bit 7 of a colour's byte exactly when its total is over the limit, with no carry into the
# next byte; the over bits then index the colours to resolve, in resolution order.
assert sum(VALUES) + 127 < 256 and all(0 <= limit <= 127 for g in GUARDS for limit in g)
_OVER_ADD: tuple[int, ...] = tuple(
    sum((127 - g[col]) << 8 * col for col in range(NUM_COLOURS)) for g in GUARDS
)
_OVER_BITS = sum(0x80 << 8 * col for col in range(NUM_COLOURS))
# over bits -> ((colour, shift of its pattern in a word, index of its row in the sum bytes), ...)
_OVER_COLOURS: dict[int, tuple[tuple[int, int, int], ...]] = {}
# over bits -> the bytes of the colours within their limit (their cards escape)
_UNDER_BYTES: dict[int, int] = {}
for _mask in range(1 << NUM_COLOURS):
    _bits = sum(0x80 << 8 * col for col in range(NUM_COLOURS) if _mask >> col & 1)
    _OVER_COLOURS[_bits] = tuple(
        (col, col * len(VALUES), NUM_COLOURS + col)
        for col in range(NUM_COLOURS) if _mask >> col & 1
    )  # fmt: skip
    _UNDER_BYTES[_bits] = sum(0xFF << 8 * col for col in range(NUM_COLOURS) if not _mask >> col & 1)
# What a draw of chance is for (see _draw_digits).
_DEAL_DRAW = 0
_GUARD_DRAW = 1


def _digit_plan(radices: tuple[int, ...]) -> tuple:
    """What _draw_digits needs to draw a digit for each of these radices: the radices, an
    unpacker of their 16-bit values, the largest multiple of each radix up to 2**16, the bytes
    the values take and the digests those need."""
    assert all(1 <= r <= 256 for r in radices), "a value's high byte decides (see _draw_digits)"
    size = 2 * len(radices)
    return (
        radices, Struct(f"<{len(radices)}H").unpack_from,
        tuple(r * (65536 // r) for r in radices), size, max(1, -(-size // 64)),
    )  # fmt: skip


def _draw_digits(
    plan: tuple, seed: int, purpose: int, game_no: int, number: int = 0
) -> Iterator[int]:
    """An iterator of a digit uniform in [0, r) for each radix r of the plan (_digit_plan), in
    turn, all independent, for one event of chance in a match: determined by the match seed
    and the event alone (`purpose`, _DEAL_DRAW or _GUARD_DRAW; the game's number in the match,
    1 unless a series; and, for guard shuffles, which shuffle of that game). Popping cards from
    a pool at these digits deals them in a uniformly random order.

    Each digit is a 16-bit value from BLAKE2b over these numbers and a counter, modulo its radix.
    A value at or above the largest multiple of the radix below 2**16 would make small digits
    likelier, so if any value is, all are drawn again from the next digests (under 1% of deals):
    the digits of an accepted draw are exactly uniform. Such a value has a high byte of 0xff
    (radices are at most 256), so most draws are cleared by looking for that byte. No generator
    is seeded or carried: a state is its seed plus the count of its shuffles, which keeps clones
    and replays cheap and exact, and the draws do not depend on the Python version."""
    radices, unpack, limits, size, digests = plan
    prefix = b"%d %d %d %d " % (seed, purpose, game_no, number)
    counter = 0
    while True:
        block = _blake2b(prefix + b"%d" % counter).digest()
        for i in range(1, digests):
            block += _blake2b(prefix + b"%d" % (counter + i)).digest()
        counter += digests
        if b"\xff" not in block[1:size:2] or all(map(lt, unpack(block), limits)):
            return map(mod, unpack(block), radices)


# Legal actions. One-card actions are shared 1-tuples; two-card actions are served by
# LegalPairs, which maps an index to a pair by table instead of building every pair: the second
# escape offers 55 pairs at 4 players and 120 at 2, and most callers look at one or a few.
_SINGLES: tuple[tuple[int], ...] = tuple((c,) for c in range(NUM_CARDS + 1))
_itemgetter = itemgetter
_add = add


class _PairIndex(dict):
    """n -> (getters, length): for the index pairs (i, j), i < j < n, in lexicographic order,
    itemgetter(i, j), which applied to a pool gives the pair of cards in one C call; and the
    count of pairs as a bound C method (see LegalPairs.__len__). Built once per n."""

    def __missing__(self, n: int) -> tuple[tuple[Any, ...], Any]:
        getters = tuple(itemgetter(i, j) for i, j in combinations(range(n), 2))
        entry = self[n] = (getters, len(getters).__index__)
        return entry


_PAIR_INDEX = _PairIndex()


class _Later(Enum):
    """The placeholder for a seat's legal actions before they are first asked for (then built,
    and kept). One member, _LATER, which copies and pickles as itself (an enum member, so that
    `legal is _LATER` tells the type checker which of the two a seat's entry is)."""

    LATER = "later"

    def __repr__(self) -> str:
        return "<not built yet>"


_LATER: Final = _Later.LATER


class LegalPairs(SequenceABC):
    """The legal two-card actions of a seat: every sorted pair of distinct cards from a sorted
    pool (the seat's hand, and its ruse card when it may play it), in lexicographic order, the
    same sequence as tuple(itertools.combinations(pool, 2)). Immutable; indexing, iterating and
    membership work without building all the pairs. Equal to a tuple or list of the same
    actions."""

    __slots__ = ("_pool", "_index", "_len")

    def __init__(self, pool: tuple[int, ...]):
        self._pool = pool
        self._index, self._len = _PAIR_INDEX[len(pool)]

    # len() runs no Python code: it calls the bound C method in _len, which returns the count.
    # random.choice calls len() twice per choice, and a Python __len__ made choosing a pair
    # cost a tenth more than choosing a single card.
    __len__ = property(attrgetter("_len"))

    def __getitem__(self, i):
        try:
            # an int (or any index a tuple takes); raises as a tuple would
            return self._index[i](self._pool)
        except TypeError:
            if type(i) is slice:  # _index[i] was a tuple of getters, not one to call
                return tuple(self)[i]
            raise

    @property
    def pool(self) -> tuple[int, ...]:
        """The sorted card ids the pairs are drawn from."""
        return self._pool

    def __iter__(self):
        return combinations(self._pool, 2)

    def __contains__(self, action: object) -> bool:
        if type(action) is tuple:
            if len(action) != 2:
                return False
            a, b = action
            if type(a) is int and type(b) is int:
                pool = self._pool
                return a < b and a in pool and b in pool
        return action in tuple(self)  # anything unusual: exactly what a tuple would answer

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LegalPairs):
            return self._pool == other._pool
        if isinstance(other, (tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"LegalPairs({tuple(self)!r})"

    def __reduce__(self):
        return LegalPairs, (self._pool,)


class _BuiltPairs(LegalPairs):
    """A LegalPairs as legal_actions makes it, its fields set there: calling a class with no
    Python __init__ is a single C call, where object.__new__(LegalPairs) parses its arguments
    as any callable does."""

    __slots__ = ()
    __init__ = object.__init__


# Every paradise card, by code card * 2 + face_up: immutable, so observations share them.
_PARADISE_CARDS: tuple[ParadiseCard, ...] = tuple(
    ParadiseCard(code >> 1, bool(code & 1)) for code in range(2 * NUM_CARDS)
)

# Compact event-log records (tuples whose first item is one of these tags). Event objects are
# built from them only when `State.events` is read.
_GAME_START = "game_start"
_GUARD = "guard"
_REVEAL = "reveal"
_TAKE_BACK = "take_back"
_ESCAPE = "escape"
_RUSE_RETURN = "ruse_return"
_BONUS = "fewest_cards_bonus"
_GAME_END = "game_end"
_SERIES_END = "series_end"
# Why a game ended (the `end` of its game_end event): a seat down to GAME_END_HAND_SIZE bomb
# cards, a provably stuck game, MAX_GAME_ROUNDS, or (engine version 2) its rounds without an escape.
_HAND_SIZE_END, _STUCK_END, _ROUND_LIMIT_END = HAND_SIZE_END, STUCK_END, ROUND_LIMIT_END
_DRY_ROUNDS_END = "dry_rounds"
# A resolved round: (_ROUND, guard index, each seat's word of played cards, seats given the
# fewest-cards bonus, its outcome cache, game number, round number, guards left, whether the
# guards were reshuffled for it, each seat's cards of the first escape, and of the second).
# It stands for all the round's records: the guard, the two reveals, the take-backs and the
# escapes (_round_outcome). The round in progress is told from the state (_round_so_far).
# The outcome cache (at _OUTCOME) is a list, empty until _round_outcome fills it with what it
# works out from the record; it is not part of what the record records, so a record compares by
# _recorded(record), which leaves it out.
_ROUND = "round"
_OUTCOME = 4

_GUARD_IDS = tuple(range(NUM_GUARDS))
_GUARD_RADICES = tuple(range(NUM_GUARDS, 1, -1))  # a guard shuffle: pop at these digits
_GUARD_SHUFFLE = _digit_plan(_GUARD_RADICES)


def _recorded(record: tuple) -> tuple:
    """What a log record records, as comparable values: a round record without its outcome
    cache, a game-end record with its rounds so."""
    kind = record[0]
    if kind == _ROUND:
        return record[:_OUTCOME] + record[_OUTCOME + 1 :]
    if kind == _GAME_END:
        return record[:-1] + (tuple(map(_recorded, record[-1])),)
    return record


def _taken_back(row: list[int], total: int, limit: int) -> tuple[list[int], int]:
    """The rule for a colour over its guard's limit: while its total is over, every seat with
    the highest sum (`row`: each seat's sum of the colour) takes its cards of the colour back.
    Returns those seats, in the order the rules take them, and the total left; their sums in
    `row` become 0. The fast form of plain.resolve_colour's take-backs, and the only one
    here: a round's resolution (_resolve_round), its outcome (_round_outcome) and the stuck
    test (_stuck) all take cards back by it; test_boom_plain holds it to the plain rules."""
    seats = []
    while total > limit:
        top = max(row)
        while top in row:
            seat = row.index(top)
            seats.append(seat)
            row[seat] = 0
            total -= top
    return seats, total


def _add_gains(scores: Sequence[int], rounds: Iterable[tuple]) -> list[int]:
    """`scores` plus each seat's points from these round records."""
    scores = list(scores)
    for record in rounds:
        scores = list(map(_add, scores, _round_outcome(record)[1]))
    return scores


def _round_outcome(
    record: tuple,
) -> tuple[list[tuple], tuple[int, ...], list[tuple[int, tuple[int, ...]]]]:
    """What a round record (_ROUND) stands for: its take-back and escape records, in the order
    the rules take them (colour by colour, left to right on the guard card), each seat's points
    from the round, and the paradise cards (codes) each escape adds. _resolve_round did, when
    the round ended, only what play goes on from (the cards taken back); this works out the
    rest, once per record (kept in its outcome cache), when it is first read."""
    cache = record[_OUTCOME]
    if cache:
        return cache[0]
    _, guard, words, bonus, _, game_no, round_no, left, reshuffled, first, second = record
    np = len(words)
    sums = (sum(words) >> _SUM_BASE).to_bytes(NUM_COLOURS + _SEAT_BYTES * np, "little")
    out: list[tuple] = [
        (_GUARD, game_no, round_no, guard, left, reshuffled),
        (_REVEAL, 1, first),
        (_REVEAL, 2, second),
    ]
    paradise: list[tuple[int, tuple[int, ...]]] = []
    # 1 per bomb card played (less those taken back), plus each face-up escape's sum
    gains = list(sums[_COUNT_AT::_SEAT_BYTES])
    for col, shift, limit, at in _GUARD_PLAN[guard]:
        total = sums[col]
        if not total:
            continue
        row = sums[at::_SEAT_BYTES]  # each seat's sum of this colour
        if total > limit:
            row = list(row)
            takers, total = _taken_back(row, total, limit)
            for seat in takers:
                cards = _PCARDS[col][words[seat] >> shift & 1023]
                out.append((_TAKE_BACK, seat, col, cards))
                gains[seat] -= len(cards)
            if not total:
                continue
        # the seats with the highest sum escape face up, the others face down
        top = max(row)
        for seat, s in enumerate(row):
            if s:
                pattern = words[seat] >> shift & 1023
                if s == top:
                    gains[seat] += top
                    paradise.append((seat, _PUP[col][pattern]))
                    out.append((_ESCAPE, seat, col, _PCARDS[col][pattern], True))
                else:
                    paradise.append((seat, _PDOWN[col][pattern]))
                    out.append((_ESCAPE, seat, col, _PCARDS[col][pattern], False))
    for seat in bonus:
        gains[seat] += FEWEST_CARDS_BONUS
    outcome = (out, tuple(gains), paradise)  # shared by clones: nothing in it may change
    cache.append(outcome)
    return outcome


# The paths of legal_actions and apply_action in an escape step (BoomState._path). The usual
# steps, where every seat holds enough bomb cards to play what is asked, each have a fast path:
# legal actions built by table (a 1-tuple per card; pairs as LegalPairs) and an action checked
# and applied by a few list operations instead of the general check (illegal_reason) and loop.
# Together they make up most of what random playouts spend in apply_action and legal_actions;
# the general path takes everything else (short hands, and any action they refuse, which it
# then explains). tests/games/test_boom.py holds each to the general path on the same states.
_GENERAL = 0
_ONE_CARD = 1  # one bomb card each, from hands of two or more
_TWO_CARDS = 2  # two bomb cards each, no ruse card allowed
_TWO_CARDS_OR_RUSE = 3  # two cards each, of which one may be the seat's ruse card


def _deal_cards(
    game: BoomGame, seed: int, game_no: int
) -> tuple[list[list[int]], tuple[int, ...], tuple[int, ...], list[int], tuple[Any, ...]]:
    """Game `game_no`'s deal from the match seed: each seat's hand (sorted), the cards
    discarded face up and face down, the guard order and the game_start record. (The native
    core, _native.c, draws the same deal in C: tests/games/test_engine_builds.py.)"""
    digits = _draw_digits(game._deal_plan, seed, _DEAL_DRAW, game_no)
    first = list(game.deck)  # sorted; what the pops leave is the first seat's hand
    drawn = list(map(first.pop, islice(digits, game._dealt_by_draw)))
    guards = list(_GUARD_IDS)
    order = list(map(guards.pop, digits))  # the digits after the deal's
    order += guards
    # Seat position i always gets the same cards of the draw: the same seed deals the same
    # cards to the same seat positions whoever sits there.
    hands = [first, *map(sorted, map(drawn.__getitem__, game._deal_slices))]
    rest = tuple(sorted(drawn[(game.num_players - 1) * game.deal_size :]))
    up, down = (rest, ()) if game.advanced else ((), rest)
    record = (_GAME_START, game_no, game._deal_sizes, up, len(down), game.removed, game._all_ruse)
    return hands, up, down, order, record


def _shuffled_guards(seed: int, game_no: int, number: int) -> list[int]:
    """The guard order of reshuffle `number` of game `game_no` (the native core's in C too)."""
    guards = list(_GUARD_IDS)
    order = list(map(guards.pop, _draw_digits(_GUARD_SHUFFLE, seed, _GUARD_DRAW, game_no, number)))
    return order + guards


class BoomGame(BoomGameBase):
    """Boom: Runaway for 2-5 players, the fast engine (its facts and options: BoomGameBase)."""

    # engine_version (BoomGameBase's, the plain engine's too): 2 drew chance from BLAKE2b by
    # event (_draw_digits) instead of random.Random(seed); 3 ends a game early only when
    # provably stuck, or after MAX_GAME_ROUNDS, instead of after 8 rounds in a row without an
    # escape (BoomGameV2 keeps that rule, for version 2's replays).
    # Engine version 2's end rule: a game also ends after this many rounds in a row in which no
    # card escaped (None: the current rule, provably_stuck and MAX_GAME_ROUNDS).
    stalemate_rounds: int | None = None

    @classmethod
    def engine_versions(cls) -> Mapping[str, type[Game]]:
        return {BoomGame.engine_version: BoomGame, BoomGameV2.engine_version: BoomGameV2}

    @classmethod
    def version_advice(cls, version: str) -> str:
        if version == "1":
            return (
                "version 1 dealt from random.Random(seed), which this Arena no longer does; "
                "re-run it with an Arena from before commit 028f709 (2026-11-30), whose Boom "
                "engine is version 1"
            )
        return super().version_advice(version)

    def __init__(self, num_players: int, **options: Any):
        super().__init__(num_players, **options)
        self.step_cards: tuple[int, int] = STEP_CARDS[num_players]
        # Per-game constants the states share (hot path): seats, empty reveals, cards asked per
        # step (index 0: none), every seat playing `asked` cards, a fresh legal-actions map.
        self._seats = tuple(range(num_players))
        self._no_cards: tuple[tuple[int, ...], ...] = ((),) * num_players
        self._zeros = (0,) * num_players
        self._asked = (0, *self.step_cards)
        self._all_play = tuple((n,) * num_players for n in self._asked)
        self._unasked: dict[int, Sequence[tuple[int, ...]] | _Later] = dict.fromkeys(
            self._seats, _LATER
        )
        # Per escape step (index 0: none): cards asked, whether a ruse card may be played, the
        # path of apply_action and legal_actions when every seat plays `asked` cards (_GENERAL,
        # _ONE_CARD, _TWO_CARDS or _TWO_CARDS_OR_RUSE), and every seat's count.
        paths = {(1, False): _ONE_CARD, (2, False): _TWO_CARDS, (2, True): _TWO_CARDS_OR_RUSE}
        self._steps = tuple(
            (n, ruse_ok, paths.get((n, ruse_ok), _GENERAL), (n,) * num_players)
            for step, n in enumerate(self._asked)
            for ruse_ok in [self.ruse and step in RUSE_STEPS]
        )  # fmt: skip
        # the other seats' hands in the cards a deal draws (see _deal_game)
        self._deal_slices = tuple(
            slice(i, i + self.deal_size)
            for i in range(0, (num_players - 1) * self.deal_size, self.deal_size)
        )
        self._deal_sizes = (self.deal_size,) * num_players
        self._all_ruse = (self.ruse,) * num_players
        # A deal pops every card but the first seat's hand from the sorted deck (what is left is
        # that hand), then pops the guards' order: the digits it draws.
        self._dealt_by_draw = len(self.deck) - self.deal_size
        self._deal_plan = _digit_plan(
            tuple(range(len(self.deck), self.deal_size, -1)) + _GUARD_RADICES
        )
        self._sum_bytes = NUM_COLOURS + _SEAT_BYTES * num_players  # see _WORDS
        # The most bomb cards a seat can hold and still have to play them all in a round: a game
        # can only be stuck (provably_stuck) when no hand is larger, so _resolve_round looks
        # further only then. Version 2 looks after every round (its rule counts them all).
        self._stuck_gate = (
            NUM_CARDS
            if self.stalemate_rounds
            else max(n for n in range(NUM_CARDS + 1) if plays_whole_hand(num_players, n, False))
        )

    def new_match(self, seed: int) -> "BoomState":
        if type(seed) is not int:
            raise RulesError(f"a match seed is an int, not {seed!r}")
        state = FastBoomState._bare(self, seed)
        state._deal_game()
        return state

    def start_state(self, seed, game_number, series_totals, hands, ruse, discards, guard_order):
        """BoomGameBase.start_state, for state_from_hands (which checks its arguments)."""
        state = FastBoomState._blank(self, seed)
        state._game_no = game_number
        state._totals = series_totals
        state._hands = hands
        state._has_ruse = ruse
        if self.advanced:
            state._disc_up = tuple(discards)
        else:
            state._disc_down = tuple(discards)
        state._log_game_start()
        state._order = guard_order
        state._shuffles = 1  # later reshuffles are new draws
        state._gpos = -1
        state._next_round()
        return state

    def state_in_round(self, seed: int, position: RoundPosition) -> BoomState:
        """BoomGameBase.state_in_round."""
        at = position
        state = FastBoomState._blank(self, seed)
        state._shuffles = 1  # later reshuffles are new draws, not the one behind guard_order
        state._game_no = at.game_number
        state._round = at.round_number
        state._totals = list(at.series_totals)
        state._new_game_scores(at.scores)
        state._paradise = tuple(
            tuple(p.card * 2 + p.face_up for p in cards) for cards in at.paradise
        )
        state._disc_up = tuple(at.discarded_face_up)
        state._disc_down = tuple(at.discarded_face_down)
        # only version 2 counts dry rounds
        state._dry_rounds = at.dry_rounds if self.stalemate_rounds else 0
        state._order = list(at.guard_order)
        state._gpos = at.guards_revealed - 1
        state._guard = state._order[state._gpos]
        if at.step == 2 and at.first_escape is not None:
            state._revealed = tuple(map(tuple, at.first_escape))
            state._rw = [
                sum(map(w.__getitem__, cards)) for w, cards in zip(_WORDS, state._revealed)
            ]
        state._hands = [sorted(h) for h in at.hands]
        state._has_ruse = list(at.ruse)
        state._begin_step(at.step)
        return state


class BoomGameV2(BoomGame):
    """Boom by the rules of engine version 2, to re-run the matches played under it: the same
    deals and rounds as version 3, but a game also ends after `stalemate_rounds` rounds in a row
    in which no card escaped (and neither the stuck rule nor MAX_GAME_ROUNDS applies)."""

    engine_version = "2"
    stalemate_rounds = 8


# The parts of an observation that change only when a round resolves or a game is dealt
# (BoomState._round_view): guards used, paradise, scores, series totals.
_RoundView = tuple[
    tuple[int, ...],
    tuple[tuple[ParadiseCard, ...], ...],
    tuple[int, ...],
    tuple[int, ...],
]


class BoomState(State):
    """One Boom match (one game, or one series in longer play). Mutated only by apply_action.

    Hot-path representation: hands are sorted lists of card ids; `_pending` maps each seat still
    to choose in this step to its legal actions (_LATER until asked for); `_choice[seat]` is the
    seat's face-down action in this step (None: still to choose, (): plays nothing this step);
    `_revealed` holds each seat's first-escape cards during the second escape; `_rw[seat]` sums
    the words (_WORDS) of the seat's cards this round; paradise cards are codes card * 2 +
    face_up, folded in from the rounds' records when read (`_fold`); the event log holds
    compact tuples (see _to_event). `_gate` is the game's _stuck_gate; `_dry_rounds` counts the
    rounds in a row without an escape for engine version 2's end rule (0 in version 3).
    """

    # The fields, by how a clone copies them (clone, copying.clone_function). The slots are
    # built from these groups, so a field is declared together with how a clone copies it.
    # Shared: ints, bools, strings, tuples and the game, and the tuples that are replaced,
    # never changed (_paradise, _scores, _to_play, _view).
    _SHARED_FIELDS = (
        "game", "_np", "_all", "_empty", "_adv", "_ruse_v", "_series", "_gate", "_seed",
        "_shuffles", "_paradise", "_scores", "_game_no", "_round", "_step", "_gpos", "_guard",
        "_reshuffled", "_disc_up", "_disc_down", "_to_play", "_path", "_ruse_ok", "_revealed",
        "_scored", "_folded", "_score_base", "_expanded", "_fewest", "_dry_rounds", "_over",
        "_view",
    )  # fmt: skip
    # Lists changed in place, of values that are not (ints, bools, tuples, records), and
    # _pending, a dict of immutable legal-action sequences: copied. And _hands, a list of
    # lists, each copied.
    _COPIED_FIELDS = (
        "_has_ruse", "_totals", "_order", "_choice", "_rw", "_game_rounds", "_log", "_events",
        "_pending",
    )  # fmt: skip
    __slots__ = (*_SHARED_FIELDS, *_COPIED_FIELDS, "_hands")

    # The fields' types (annotations only: the slots above hold the values).
    game: BoomGame
    _np: int
    _all: tuple[int, ...]  # every seat
    _empty: tuple[tuple[int, ...], ...]  # no cards for any seat
    _adv: bool
    _ruse_v: bool
    _series: bool
    _gate: int
    _seed: int
    _shuffles: int
    _paradise: tuple[tuple[int, ...], ...]
    _scores: Sequence[int]  # a tuple, or a list replaced (never changed) when scores are folded
    _game_no: int
    _round: int
    _step: int
    _gpos: int
    _guard: int
    _reshuffled: bool
    _disc_up: tuple[int, ...]
    _disc_down: tuple[int, ...]
    _to_play: tuple[int, ...]
    _path: int
    _ruse_ok: bool
    _revealed: tuple[tuple[int, ...], ...]
    _scored: int
    _folded: int
    _score_base: Sequence[int]
    _expanded: int
    _fewest: int
    _dry_rounds: int
    _over: bool
    _view: _RoundView | None
    _has_ruse: list[bool]
    _totals: list[int]
    _order: list[int]
    _choice: list[tuple[int, ...] | None]
    _rw: list[int]
    _game_rounds: list[tuple[Any, ...]]
    _log: list[tuple[Any, ...]]
    _events: list[Event]
    _pending: dict[int, Sequence[tuple[int, ...]] | _Later]
    _hands: list[list[int]]

    # ------------------------------------------------------------------ construction

    @classmethod
    def _bare(cls, game: BoomGame, seed: int) -> "BoomState":
        """A state with what every match starts from: its game's settings, its seed, zero
        totals, an empty log. The deal (or the hands given) is the caller's."""
        self = cls.__new__(cls)
        self.game = game
        self._np = np = game.num_players
        self._all = game._seats
        self._empty = game._no_cards
        self._adv = game.advanced
        self._ruse_v = game.ruse
        self._series = game.series
        self._gate = game._stuck_gate
        self._seed = seed
        self._shuffles = 0  # guard shuffles drawn in the current game
        self._totals = [0] * np
        self._game_no = 1
        self._over = False
        self._log = []
        self._events = []
        self._expanded = 0
        return self

    @classmethod
    def _blank(cls, game: BoomGame, seed: int) -> "BoomState":
        """No cards dealt yet: every field set, for a caller that fills in the hands."""
        self = cls._bare(game, seed)
        np = self._np
        self._hands = [[] for _ in range(np)]
        self._has_ruse = [game.ruse] * np
        self._new_game_scores()
        self._round = 0
        self._step = 0
        self._order = list(_GUARD_IDS)
        self._gpos = 0
        self._guard = 0
        self._reshuffled = False
        self._disc_up = ()
        self._disc_down = ()
        self._choice = [()] * np
        self._to_play = game._all_play[0]
        self._pending = {}
        self._path = _GENERAL
        self._ruse_ok = False
        self._revealed = self._empty
        self._dry_rounds = 0
        self._view = None
        self._rw = [0] * np
        self._fewest = -1
        return self

    def _deal_game(self) -> None:
        """Fresh deal and guard shuffle for the next game (the first, or the next of a series)."""
        game = self.game
        self._hands, self._disc_up, self._disc_down, order, record = _deal_cards(
            game, self._seed, self._game_no
        )
        n = game.deal_size
        np = self._np
        self._has_ruse = [self._ruse_v] * np
        self._new_game_scores()
        self._round = 0
        self._dry_rounds = 0
        self._log.append(record)
        self._order = order
        self._shuffles = 1
        self._gpos = -1
        self._next_round(n)  # every hand holds n cards

    def _new_game_scores(self, base: Sequence[int] | None = None) -> None:
        """A game begins: no round resolved yet, its scores at `base` (zero unless a state is
        built in mid-game) and no paradise cards."""
        game = self.game
        self._score_base = self._scores = tuple(base) if base is not None else game._zeros
        self._paradise = game._no_cards  # no codes for any seat (tuples, replaced when folded)
        self._game_rounds = []
        self._scored = self._folded = 0

    def _log_game_start(self) -> None:
        self._log.append((
            _GAME_START, self._game_no, tuple(map(len, self._hands)), self._disc_up,
            len(self._disc_down), self.game.removed, tuple(self._has_ruse),
        ))  # fmt: skip

    def _next_round(self, fewest: int = -1) -> None:
        self._round += 1
        gpos = self._gpos + 1
        reshuffled = False
        if gpos >= NUM_GUARDS:
            number = self._shuffles
            self._order = _shuffled_guards(self._seed, self._game_no, number)
            self._shuffles = number + 1
            gpos = 0
            reshuffled = True
        self._gpos = gpos
        self._view = None
        self._guard = self._order[gpos]
        self._reshuffled = reshuffled
        self._revealed = self._empty
        self._rw = [0] * self._np
        self._begin_step(1, fewest)

    def _begin_step(self, step: int, fewest: int = -1) -> None:
        """Begin escape step `step`; `fewest`, if not -1, is a lower bound on the hand sizes
        (the caller knows it, so they need not be counted again)."""
        game = self.game
        asked, ruse_ok, path, all_play = game._steps[step]
        self._step = step
        self._ruse_ok = ruse_ok
        if fewest < asked:
            fewest = min(map(len, self._hands))
        if fewest >= asked > 0:
            # the usual case: every seat holds enough bomb cards and plays `asked` of them
            self._to_play = all_play
            self._choice = [None] * self._np
            self._pending = game._unasked.copy()  # every seat, legal actions _LATER
            # _ONE_CARD's legal actions are built by itemgetter, which needs two cards or more
            self._path = path if fewest > 1 else _GENERAL
            self._fewest = fewest - asked  # no hand loses more than `asked` in this step
            return
        hands = self._hands
        self._fewest = -1
        self._path = _GENERAL
        np = self._np
        to_play = []
        for seat in range(np):
            have = len(hands[seat]) + (1 if ruse_ok and self._has_ruse[seat] else 0)
            to_play.append(asked if have >= asked else (have if SHORT_HAND_PLAYS_ALL else 0))
        self._to_play = tuple(to_play)
        self._choice = [None if n else () for n in to_play]
        self._pending = {seat: _LATER for seat in range(np) if to_play[seat]}
        if not self._pending:
            self._end_step()

    # ------------------------------------------------------------------ the interface

    def seats_to_act(self) -> tuple[int, ...]:
        pending = self._pending
        return self._all if len(pending) == self._np else tuple(pending)

    def legal_actions(self, seat: int) -> Sequence[tuple[int, ...]]:
        """Every sorted tuple of `to_play` distinct cards from the seat's hand (and its ruse
        card in a step that allows it), in lexicographic order; () if the seat need not act.
        One-card actions come as a tuple, two-card actions as a LegalPairs sequence."""
        try:
            legal = self._pending[seat]
            if type(seat) is not int:  # True would find seat 1
                return ()
        except (KeyError, TypeError):
            return ()
        if legal is _LATER:
            path = self._path
            if path == _ONE_CARD:
                # one C call: itemgetter of several indices gives the tuple of their 1-tuples
                legal = _itemgetter(*self._hands[seat])(_SINGLES)
            elif path == _TWO_CARDS:
                legal = _BuiltPairs()
                legal._pool = pool = tuple(self._hands[seat])
                legal._index, legal._len = _PAIR_INDEX[len(pool)]
            elif path == _TWO_CARDS_OR_RUSE and self._has_ruse[seat]:
                legal = _BuiltPairs()
                legal._pool = pool = (*self._hands[seat], RUSE)  # RUSE is the highest id
                legal._index, legal._len = _PAIR_INDEX[len(pool)]
            else:
                legal = self._build_legal(seat)
            self._pending[seat] = legal
        return legal

    def _build_legal(self, seat: int) -> Sequence[tuple[int, ...]]:
        hand = self._hands[seat]
        k = self._to_play[seat]
        if self._ruse_ok and self._has_ruse[seat]:
            pool = (*hand, RUSE)  # RUSE is the highest id, so the pool stays sorted
        else:
            pool = tuple(hand)
        if k == 2:
            return LegalPairs(pool)
        if k == 1:
            return tuple(map(_SINGLES.__getitem__, pool))
        return tuple(combinations(pool, k))

    def apply_action(self, seat: int, action: Any) -> None:
        # Fast paths for the usual one- and two-card steps; anything unusual or wrong goes
        # through _apply_checked / _refusal, which also say why an action is refused.
        pending = self._pending
        try:
            pending[seat]  # the seats still to choose in this step
            if type(seat) is not int:  # True would find seat 1
                raise TypeError
        except (KeyError, TypeError):
            raise self._refusal(seat, action) from None
        path = self._path
        if path == _ONE_CARD:
            try:
                (a,) = action  # ValueError or TypeError if not exactly one item
                if type(a) is not int or type(action) is not tuple:
                    raise TypeError
                self._hands[seat].remove(a)  # ValueError if not in the hand
            except (ValueError, TypeError):
                raise self._refusal(seat, action) from None
            self._rw[seat] += _WORDS[seat][a]
        elif path:  # _TWO_CARDS or _TWO_CARDS_OR_RUSE (_GENERAL is 0)
            try:
                a, b = action
                if type(a) is not int or type(b) is not int or a >= b or type(action) is not tuple:
                    raise TypeError
                hand = self._hands[seat]
                hand.remove(a)
                if b == RUSE and path == _TWO_CARDS_OR_RUSE and self._has_ruse[seat]:
                    self._has_ruse[seat] = False  # its word is 0: it counts for nothing
                else:
                    try:
                        hand.remove(b)
                    except ValueError:
                        insort(hand, a)
                        raise
            except (ValueError, TypeError):
                raise self._refusal(seat, action) from None
            words = _WORDS[seat]
            self._rw[seat] += words[a] + words[b]
        else:
            self._apply_checked(seat, action)
        self._choice[seat] = action
        del pending[seat]
        if not pending:
            self._end_step()

    def _illegal_reason(self, seat: Any, action: Any) -> str | None:
        """Why `seat` may not play `action` now, or None if it may (plain.illegal_reason)."""
        return illegal_reason(
            self.game, self._over, self._step, self._to_play, self._choice, self._hands,
            self._has_ruse, seat, action,
        )  # fmt: skip

    def _refusal(self, seat: Any, action: Any) -> IllegalActionError:
        reason = self._illegal_reason(seat, action)
        if reason is None:  # the fast path refused a legal action: a bug, say so plainly
            raise AssertionError(f"boom refused a legal action {action!r} of seat {seat}")
        return IllegalActionError(seat, action, reason)

    def _apply_checked(self, seat: int, action: tuple[int, ...]) -> None:
        reason = self._illegal_reason(seat, action)
        if reason is not None:
            raise IllegalActionError(seat, action, reason)
        hand = self._hands[seat]
        for c in action:
            if c == RUSE:
                self._has_ruse[seat] = False
            else:
                hand.remove(c)
        self._rw[seat] += sum(map(_WORDS[seat].__getitem__, action))

    def default_action(self, seat: int) -> tuple[int, ...]:
        """The lowest card ids the step asks for; the ruse card only when the seat holds too few
        bomb cards to fill the step without it."""
        if self._over or type(seat) is not int or not 0 <= seat < self._np:
            raise IllegalActionError(seat, None, "this seat does not act now")
        to_play = self._to_play[seat]
        if not to_play or self._choice[seat] is not None:
            raise IllegalActionError(seat, None, "this seat does not act now")
        hand = self._hands[seat]
        if len(hand) >= to_play:
            return tuple(hand[:to_play])
        return (*hand, RUSE)

    def is_over(self) -> bool:
        return self._over

    def scores(self) -> tuple[int, ...]:
        self._fold_scores()
        return tuple(map(_add, self._totals, self._scores))

    # ------------------------------------------------------------------ resolution

    def _end_step(self) -> None:
        # revealed (recorded with the round, _resolve_round); every seat has chosen by now
        played = cast("tuple[tuple[int, ...], ...]", tuple(self._choice))
        if self._step == 1:
            self._revealed = played
            self._begin_step(2, self._fewest)
        else:
            self._resolve_round(played)

    def _resolve_round(self, second: tuple[tuple[int, ...], ...]) -> None:
        """Resolve the round's colours. Only what later play depends on is done here: cards
        taken back go back to their hands, and the game-end checks. Who escapes, the paradise
        cards and the scores follow from the round record (_round_outcome), worked out when
        they are asked for (_fold, events): a playout that reads them once pays once."""
        words = self._rw  # the round's cards of each seat, summed as they were played
        guard = self._guard
        table = sum(words) >> _SUM_BASE
        over = (table + _OVER_ADD[guard]) & _OVER_BITS
        hands = self._hands
        if over:  # colours within their limits need nothing done: their cards escape
            sums = table.to_bytes(self.game._sum_bytes, "little")
            limits = GUARDS[guard]
            for col, shift, at in _OVER_COLOURS[over]:
                takers = _taken_back(list(sums[at::_SEAT_BYTES]), sums[col], limits[col])[0]
                for seat in takers:
                    hand = hands[seat]
                    for c in _PCARDS[col][words[seat] >> shift & 1023]:
                        insort(hand, c)
        # No hand is smaller than _fewest (-1: not known), since cards taken back only add to
        # hands; count them only when that bound does not rule out the end of the game.
        fewest = self._fewest
        if fewest <= GAME_END_HAND_SIZE:
            fewest = min(map(len, hands))
        if fewest <= GAME_END_HAND_SIZE:
            end = _HAND_SIZE_END
        elif len(hands[0]) <= self._gate or self._round >= MAX_GAME_ROUNDS:
            # a game can only be stuck when every hand is this small, seat 0's too
            end = self._early_end(second)
        else:
            end = ""
        bonus: tuple[int, ...] = ()
        if self._adv and (end or FEWEST_CARDS_BONUS_EVERY_ROUND):
            fewest = min(map(len, hands))
            bonus = tuple(seat for seat in self._all if len(hands[seat]) == fewest)
        # the record keeps `words`, the list in _rw: _next_round gives _rw a new one
        record: tuple[Any, ...] = (
            _ROUND, guard, words, bonus, [], self._game_no, self._round,
            NUM_GUARDS - 1 - self._gpos, self._reshuffled, self._revealed, second,
        )  # fmt: skip
        log = self._log
        log.append(record)
        self._game_rounds.append(record)
        if self._ruse_v:
            first = self._revealed
            has_ruse = self._has_ruse
            for seat in self._all:
                if RUSE in second[seat] or RUSE in first[seat]:
                    has_ruse[seat] = True
                    log.append((_RUSE_RETURN, seat))
        for seat in bonus:
            log.append((_BONUS, seat, FEWEST_CARDS_BONUS, fewest))
        if end:
            self._end_game(end)
        else:
            self._next_round(fewest)

    def _early_end(self, second: tuple[tuple[int, ...], ...]) -> str:
        """Why the game ends now although no seat is down to GAME_END_HAND_SIZE cards: _STUCK_END
        (provably_stuck), _ROUND_LIMIT_END (MAX_GAME_ROUNDS), or in engine version 2
        _DRY_ROUNDS_END; "" if it goes on. Called by _resolve_round, once the round's cards taken
        back are in hand, only when seat 0's hand is small enough for the game to be stuck or the
        round limit is reached (in version 2, after every round)."""
        hands = self._hands
        first = self._revealed
        if self.game.stalemate_rounds:  # engine version 2
            played = [(*a, *b) for a, b in zip(first, second)]
            self._dry_rounds = 0 if any_escape(self._guard, played) else self._dry_rounds + 1
            return _DRY_ROUNDS_END if self._dry_rounds >= self.game.stalemate_rounds else ""
        gate = self._gate
        if all(len(hand) <= gate for hand in hands):
            # the ruse cards played this round are about to go back to their owners
            ruse = [
                held or RUSE in a or RUSE in b for held, a, b in zip(self._has_ruse, first, second)
            ]
            if self._stuck(ruse):
                return _STUCK_END
        return _ROUND_LIMIT_END if self._round >= MAX_GAME_ROUNDS else ""

    def _fold_scores(self) -> None:
        """Bring the game's scores up to date with its resolved rounds."""
        rounds = self._game_rounds
        if self._scored < len(rounds):
            self._scores = _add_gains(self._scores, rounds[self._scored :])
            self._scored = len(rounds)

    def _fold(self) -> None:
        """Bring the game's scores and paradise cards up to date with its resolved rounds."""
        rounds = self._game_rounds
        if self._folded < len(rounds):
            paradise = list(self._paradise)
            for record in rounds[self._folded :]:
                for seat, codes in _round_outcome(record)[2]:
                    paradise[seat] += codes
            self._paradise = tuple(paradise)
            self._folded = len(rounds)
            self._fold_scores()  # from the outcomes just worked out

    def _stuck(self, ruse: list[bool]) -> bool:
        """provably_stuck(num_players, the hands, `ruse`), by the round's byte tables (see
        _WORDS): the plays of all eight guards are read from one sum of words. The tests hold it
        equal to provably_stuck after every round of many random games."""
        np = self._np
        hands = self._hands
        if not all(map(partial(plays_whole_hand, np), map(len, hands), ruse)):
            return False
        table = sum(sum(map(_WORDS[seat].__getitem__, hands[seat])) for seat in range(np))
        table >>= _SUM_BASE
        sums = table.to_bytes(self.game._sum_bytes, "little")
        for guard in _GUARD_IDS:
            over = (table + _OVER_ADD[guard]) & _OVER_BITS
            if table & _UNDER_BYTES[over]:
                return False  # a colour within the guard's limit escapes
            limits = GUARDS[guard]
            for col, _, at in _OVER_COLOURS[over]:
                if _taken_back(list(sums[at::_SEAT_BYTES]), sums[col], limits[col])[1]:
                    return False  # some of a colour over the limit is left to escape
        return True

    def _end_game(self, end: str) -> None:
        self._view = None
        self._log.append((
            _GAME_END, self._game_no, end, tuple(self._totals), self._score_base,
            tuple(self._game_rounds),
        ))  # fmt: skip
        if self._series:
            self._fold_scores()
            totals = list(map(_add, self._totals, self._scores))
            if max(totals) < SERIES_TARGET:
                self._totals = totals
                self._game_no += 1
                self._deal_game()
                return
            self._log.append((_SERIES_END, self._game_no, tuple(totals)))
        # _totals keeps the finished games before this one: scores() adds this game's
        self._over = True
        self._step = 0
        np = self._np
        self._to_play = self.game._all_play[0]
        self._choice = [()] * np
        self._pending = {}
        self._path = _GENERAL
        self._ruse_ok = False
        self._revealed = self._empty

    # ------------------------------------------------------------------ views

    def _hand_size(self, seat: int) -> int:
        # Face-down bomb cards still count until revealed, so that a hand size does not give
        # away whether the seat's face-down cards include its ruse card.
        played = self._choice[seat]
        n = len(self._hands[seat])
        if played:
            n += len(played) - (RUSE in played)
        return n

    def observation(self, seat: int) -> BoomObservation:
        """What `seat` sees; seat -1 is a spectator. A seat's own face-down choice has left its
        `hand`; `hand_sizes` count face-down bomb cards until they are revealed."""
        np = self._np
        if type(seat) is not int or not -1 <= seat < np:
            raise RulesError(f"there is no seat {seat!r} to observe (seats are 0..{np - 1}, or -1)")
        choice = self._choice
        if seat >= 0:
            hand = tuple(self._hands[seat])
            has_ruse = self._has_ruse[seat]
            to_play = 0 if choice[seat] is not None else self._to_play[seat]
        else:
            hand, has_ruse, to_play = (), False, 0
        view = self._view
        if view is None:
            view = self._view = self._round_view()
        guards_used, paradise, scores, totals = view
        sizes = list(map(len, self._hands))
        for s, played in enumerate(choice):
            if played:
                sizes[s] += len(played) - (RUSE in played)
        return BoomObservation(
            seat, np, self._game_no, self._round, 0 if self._over else self._step, self._guard,
            GUARDS[self._guard], NUM_GUARDS - len(guards_used), guards_used, to_play, hand,
            has_ruse, tuple(sizes), tuple(map(bool, choice)), self._revealed, paradise,
            self._disc_up, scores, totals,
        )  # fmt: skip

    def feature_values(self, seat: int) -> tuple[list[int], list[int], list[float]]:
        """State.feature_values: Boom's array holds 129 + 105n values. Written by
        write_feature_values into a list laid out as the seat's observation (its own part
        first, the blocks from its own on; the other seats' own parts past the end)."""
        np = self._np
        if type(seat) is not int or not 0 <= seat < np:
            raise RulesError.no_seat(seat, np, "encode")
        size = 129 + 105 * np
        others = [s for s in range(np) if s != seat]
        own_at = [0] * np
        for k, s in enumerate(others):
            own_at[s] = size + 52 * k
        block_at = [129 + 105 * ((s - seat) % np) for s in range(np)]
        values = [0.0] * (size + 52 * len(others))
        self.write_feature_values(values, own_at, 0, block_at)
        ones = [i for i in range(size) if values[i] == 1.0]
        at = [i for i in range(size) if values[i] and values[i] != 1.0]
        return ones, at, [values[i] for i in at]

    def feature_key(self) -> tuple[Any, int]:
        """A key of this state for what a caller derives from feature_values: the same object
        (compare it with `is`) and the same count until the state changes, and not both after;
        the caller keeps the object, so that no other takes its place."""
        return self._pending, len(self._pending)

    def round_key(self) -> tuple[int, int]:
        """(game number, round): the same until the round ends, and never again in the match."""
        return self._game_no, self._round

    def write_feature_values(
        self, values: Any, own_at: Sequence[int], head: int, block_at: Sequence[int]
    ) -> None:
        """Every seat's observation values (feature_values'), each written once into `values`
        (a float32 memoryview, zero wherever nothing is written): seat s's own part
        (feature_values' indices 0..51: its hand, its ruse card, its cards to play / 2) at
        own_at[s] + i, the seat-free head (indices 52..128) at head + i, and seat s's block (the
        105 values its own observation starts its blocks with) at block_at[s] + i. A caller
        that keeps every seat's observation up to date gathers them from there
        (arena.envs.arrays), and feature_values reads them; tests/envs/test_env_features.py
        holds both equal to features.encode."""
        self._fold()  # paradise and scores up to date
        guards_used = self._order[: self._gpos + 1]
        guard = self._guard
        limits = GUARDS[guard]
        # guard card 55.., guards used 68.., cards discarded face up 79..
        values[head + 55 + guard] = 1.0
        for used in guards_used:
            values[head + 68 + used] = 1.0
        for card in self._disc_up:
            values[head + 79 + card] = 1.0
        # limits 63..67, guards left 76, round 77, game number 78
        values[head + 63] = limits[0] / 16
        values[head + 64] = limits[1] / 16
        values[head + 65] = limits[2] / 16
        values[head + 66] = limits[3] / 16
        values[head + 67] = limits[4] / 16
        values[head + 76] = (NUM_GUARDS - len(guards_used)) / 8
        values[head + 77] = self._round / 20
        values[head + 78] = self._game_no / 10
        hands, has_ruse = self._hands, self._has_ruse
        for s, (base, at, codes, score, total) in enumerate(
            zip(block_at, own_at, self._paradise, self._scores, self._totals_seen())
        ):
            # the block: paradise cards 51.. (1 face up, 0.5 face down: codes are card * 2 +
            # face up), score / 100 at 103, series total / 200 at 104
            for code in codes:
                values[base + 51 + (code >> 1)] = 1.0 if code & 1 else 0.5
            values[base + 103] = score / 100
            values[base + 104] = total / 200
            # the seat's own part: its hand 0..49, its ruse card at 50
            for card in hands[s]:
                values[at + card] = 1.0
            if has_ruse[s]:
                values[at + 50] = 1.0
        self.write_step_values(values, own_at, head, block_at)

    def write_step_values(
        self, values: Any, own_at: Sequence[int], head: int, block_at: Sequence[int]
    ) -> None:
        """The part of write_feature_values that changes from one escape step of a round to
        the next, laid out as it says: the step's one-hot (52..54, all three written), and for
        every seat the cards it has revealed (block 0..49, and the ruse card at 50: ones), its
        hand size / 16 (block 101), whether it has chosen (block 102) and its cards to play / 2
        (own part 51). The cards that have left a hand are not cleared."""
        step = 0 if self._over else self._step
        values[head + 52] = values[head + 53] = values[head + 54] = 0.0
        values[head + 52 + (step if step < 2 else 2)] = 1.0
        to_play = self._to_play
        for s, (base, at, cards, hand, played) in enumerate(
            zip(block_at, own_at, self._revealed, self._hands, self._choice)
        ):
            for card in cards:
                values[base + card] = 1.0
            size = len(hand)
            if played:  # face-down cards count until they are revealed
                size += len(played) - (RUSE in played)
            values[base + 101] = size / 16
            values[base + 102] = 1.0 if played else 0.0
            values[at + 51] = (0 if played is not None else to_play[s]) / 2

    def _totals_seen(self) -> Iterable[int]:
        """The series totals an observation shows (scores folded): the last game's scores
        added once the match is over."""
        if self._over:  # the last game is finished too
            return map(_add, self._totals, self._scores)
        return self._totals

    def _round_view(self) -> _RoundView:
        """The parts of an observation that change only when a round resolves or a game is
        dealt (guards used, paradise, scores, series totals): built once, shared by every
        observation until then (_view is cleared in _next_round and _end_game)."""
        self._fold()
        cards = _PARADISE_CARDS.__getitem__
        return (
            tuple(self._order[: self._gpos + 1]),
            tuple(tuple(map(cards, p)) for p in self._paradise),
            tuple(self._scores),
            tuple(self._totals_seen()),
        )

    @property
    def events(self) -> tuple[Event, ...]:
        built = self._events
        log = self._log
        for i in range(self._expanded, len(log)):
            record = log[i]
            if record[0] == _ROUND:
                built.extend(map(_to_event, _round_outcome(record)[0]))
            else:
                built.append(_to_event(record))
        self._expanded = len(log)
        if self._over:
            return tuple(built)
        return (*built, *map(_to_event, self._round_so_far()))

    def _round_so_far(self) -> list[tuple]:
        """The records of the round in progress, which its record will hold once it is resolved:
        its guard, and the first reveal once the second escape has begun."""
        so_far: list[tuple[Any, ...]] = [(
            _GUARD, self._game_no, self._round, self._guard, NUM_GUARDS - 1 - self._gpos,
            self._reshuffled,
        )]  # fmt: skip
        if self._step == 2:
            so_far.append((_REVEAL, 1, self._revealed))
        return so_far

    def clone(self) -> "BoomState":
        return _clone_state(self)

    # ------------------------------------------------------------------ inspection (not public)

    def hand(self, seat: int) -> tuple[int, ...]:
        """Seat's bomb cards, without its face-down choice of this step. Hidden information:
        for tests, audits and simulation, never for another seat's bot."""
        return tuple(self._hands[seat])

    def pending_choice(self, seat: int) -> tuple[int, ...] | None:
        """Seat's face-down choice in this step (None: not chosen yet). Hidden information."""
        return self._choice[seat]

    def hidden_discards(self) -> tuple[int, ...]:
        """The cards discarded face down in the basic game. Hidden information."""
        return self._disc_down

    def paradise(self, seat: int) -> tuple[ParadiseCard, ...]:
        self._fold()
        return tuple(map(_PARADISE_CARDS.__getitem__, self._paradise[seat]))

    def game_scores(self) -> tuple[int, ...]:
        """The scores of the game in progress (or of the last game, once over)."""
        self._fold_scores()
        return tuple(self._scores)

    def guard_order(self) -> tuple[int, ...]:
        """The current guard shuffle, in reveal order. Hidden beyond the revealed ones."""
        return tuple(self._order)

    def snapshot(self) -> tuple:
        """Everything that determines this state's future, as comparable plain values (its seed
        and count of shuffles included): equal snapshots play out identically."""
        self._fold()
        return (
            self.game.config(), self._seed, self._shuffles, tuple(map(tuple, self._hands)),
            tuple(self._has_ruse), tuple(map(tuple, self._paradise)), tuple(self._scores),
            tuple(self._totals), self._game_no, self._round, self._step, tuple(self._order),
            self._gpos, self._reshuffled, self._disc_up, self._disc_down, tuple(self._choice),
            tuple(self._to_play), self._revealed, self._dry_rounds, self._over,
            tuple(map(_recorded, self._log)),
        )  # fmt: skip


_clone_state = clone_function(
    BoomState, BoomState._SHARED_FIELDS, BoomState._COPIED_FIELDS, nested=("_hands",)
)


def _to_event(rec: tuple) -> Event:
    kind = rec[0]
    if kind == _ESCAPE:
        _, seat, col, cards, face_up = rec
        return Event(kind, seat, {
            "colour": COLOURS[col], "cards": cards, "face_up": face_up,
            "points": escape_points(cards, face_up),
        })  # fmt: skip
    if kind == _TAKE_BACK:
        _, seat, col, cards = rec
        return Event(kind, seat, {"colour": COLOURS[col], "cards": cards})
    if kind == _REVEAL:
        _, step, cards = rec
        return Event(kind, -1, {"step": step, "cards": tuple(c or () for c in cards)})
    if kind == _GUARD:
        _, game_no, round_no, guard, left, reshuffled = rec
        return Event(kind, -1, {
            "game": game_no, "round": round_no, "guard": guard, "limits": GUARDS[guard],
            "guards_left": left, "reshuffled": reshuffled,
        })  # fmt: skip
    if kind == _RUSE_RETURN:
        return Event(kind, rec[1], {})
    if kind == _BONUS:
        _, seat, points, cards_left = rec
        return Event(kind, seat, {"points": points, "cards_left": cards_left})
    if kind == _GAME_START:
        _, game_no, sizes, disc_up, n_down, removed, ruse = rec
        return Event(kind, -1, {
            "game": game_no, "hand_sizes": sizes, "discarded_face_up": disc_up,
            "discarded_face_down": n_down, "removed": removed, "ruse": ruse,
        })  # fmt: skip
    if kind == _GAME_END:
        _, game_no, end, before, base, rounds = rec
        scores = tuple(_add_gains(base, rounds))
        totals = tuple(map(_add, before, scores))
        return Event(kind, -1, {
            "game": game_no, "scores": scores, "series_totals": totals, "end": end,
            "stalemate": end != _HAND_SIZE_END,
        })  # fmt: skip
    if kind == _SERIES_END:
        _, game_no, totals = rec
        return Event(kind, -1, {"games": game_no, "totals": totals})
    raise AssertionError(f"unknown event record {rec!r}")


def _infer_game(observation: BoomObservation) -> BoomGame:
    # Best effort: the observation does not carry the options (the match start does).
    obs = observation
    ruse = obs.has_ruse or any(RUSE in cards for cards in obs.revealed)
    if not ruse and obs.seat >= 0 and obs.acted[obs.seat] and obs.hand:
        # it put down fewer bomb cards than asked while still holding some: one was its ruse
        asked = STEP_CARDS[obs.num_players][obs.step - 1]
        ruse = obs.hand_sizes[obs.seat] - len(obs.hand) < asked
    return BoomGame(
        observation.num_players,
        advanced=bool(observation.discarded),
        ruse=ruse,
        series=observation.game_number > 1 or any(observation.series_totals),
    )


def _public_knowledge(events: Sequence[Event], num_players: int) -> tuple[list[set[int]], int]:
    """From the current game's events: the cards each seat is known to hold (taken back and not
    played again since), and how many finished rounds in a row had no escape."""
    pinned: list[set[int]] = [set() for _ in range(num_players)]
    dry = 0
    round_open = escaped = False
    for event in events:
        kind = event.kind
        if kind == _GAME_START:
            pinned = [set() for _ in range(num_players)]
            dry = 0
            round_open = escaped = False
        elif kind == _GUARD:
            if round_open:
                dry = 0 if escaped else dry + 1
            round_open, escaped = True, False
        elif kind == _REVEAL:
            for seat, cards in enumerate((event.data or {})["cards"]):
                pinned[seat].difference_update(cards)
        elif kind == _TAKE_BACK:
            pinned[event.seat].update((event.data or {})["cards"])
        elif kind == _ESCAPE:
            escaped = True
    return pinned, dry


def sample_state(
    observation: BoomObservation,
    rng: random.Random,
    game: BoomGameBase | None = None,
    events: Sequence[Event] | None = None,
) -> State:
    """A full state consistent with what `observation`'s seat knows (a determinization).

    Drawn at random (from `rng`) among what that seat has not seen: the other seats' hands,
    the face-down discards, the face-down choices of seats that have already acted in this step
    (a uniformly random legal action), the order of the guard cards left in the deck, and the
    seed behind later reshuffles and deals. Pass `game` (the match's BoomGame) for exact
    options; without it they are guessed from the observation. Pass the public `events` to keep
    cards taken back in the current game in the hands that took them back. The sampled state's
    event log starts with the round in progress: its guard (not marked reshuffled: an
    observation does not say) and, in the second escape, the first reveal. If the observing
    seat has already acted in this step, its own face-down cards are not in its observation, so
    they are sampled too.
    """
    obs = observation
    if game is None:
        game = _infer_game(obs)
    np = obs.num_players
    if game.num_players != np:
        raise RulesError(
            f"the observation is of a {np}-player match, the game has {game.num_players}"
        )
    if obs.step == 0:
        raise RulesError("the match is over: there is nothing left to sample")
    me = obs.seat
    if events is not None:
        pinned, dry = _public_knowledge(events, np)
    else:
        pinned, dry = [set() for _ in range(np)], 0

    known = set(obs.hand) | set(obs.discarded) | set(game.removed)
    for cards in obs.revealed:
        known.update(c for c in cards if c != RUSE)
    for escaped in obs.paradise:
        known.update(p.card for p in escaped)
    unseen = [c for c in range(NUM_CARDS) if c not in known]
    rng.shuffle(unseen)

    # How many unseen bomb cards each seat holds (its face-down bomb cards included).
    need = list(obs.hand_sizes)
    if me >= 0:
        need[me] -= len(obs.hand)
        pinned[me] = set()
    for seat in range(np):
        pinned[seat] &= set(unseen)
        if len(pinned[seat]) > need[seat]:
            raise RulesError(f"the events pin more cards on seat {seat} than it holds")
    taken = set().union(*pinned)
    pool = [c for c in unseen if c not in taken]
    drawn: list[list[int]] = []
    for seat in range(np):
        extra = need[seat] - len(pinned[seat])
        if extra < 0 or extra > len(pool):
            raise RulesError("the observation's hand sizes do not fit the cards left unseen")
        drawn.append(sorted(pinned[seat]) + pool[:extra])
        pool = pool[extra:]
    if game.advanced and pool:
        raise RulesError(f"cards {sorted(pool)} are unaccounted for in an advanced game")

    seed = rng.getrandbits(64)
    used = list(obs.guards_used)
    rest = [g for g in _GUARD_IDS if g not in used]
    rng.shuffle(rest)
    hands = [sorted(cards) for cards in drawn]
    if me >= 0:
        hands[me] = sorted(hands[me] + list(obs.hand))
    state = game.state_in_round(seed, RoundPosition(
        game_number=obs.game_number, round_number=obs.round, step=obs.step,
        guard_order=used + rest, guards_revealed=len(used), hands=hands,
        ruse=[game.ruse and RUSE not in obs.revealed[s] for s in range(np)],
        discarded_face_up=obs.discarded, discarded_face_down=sorted(pool),
        paradise=obs.paradise, scores=obs.scores, series_totals=obs.series_totals,
        first_escape=obs.revealed if obs.step == 2 else None, dry_rounds=dry,
    ))  # fmt: skip
    # Replay the face-down choices already made in this step.
    for seat in range(np):
        if not obs.acted[seat]:
            continue
        if seat == me:
            own = tuple(sorted(drawn[me]))
            if game.ruse and not obs.has_ruse and RUSE not in obs.revealed[me]:
                own += (RUSE,)
            state.apply_action(seat, own)
        else:
            state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    now = state.public_observation()
    if state.is_over() or (now.round, now.step) != (obs.round, obs.step):
        raise RulesError("the observation says every seat has acted in a step that did not resolve")
    return state


# The fast engine's classes by these names too: they stay this engine's when the names above
# are the native core's (native.py subclasses them and makes its twin states of them).
FastBoomGame = BoomGame
FastBoomState = BoomState
fast_sample_state = sample_state

# Which engine runs (arena.games.engines: its native core where built, else this one; one log
# line says which): BoomGame, BoomState and sample_state are then its, here and in KIT.
_engine = load_engine(__name__, builds=("native",))
if _engine.__name__ != __name__:
    # (pickle finds a class by its qualified name: the fast ones' are these names now)
    FastBoomGame.__qualname__, FastBoomState.__qualname__ = "FastBoomGame", "FastBoomState"
    BoomGame = _engine.BoomGame  # type: ignore[misc]
    BoomState = _engine.BoomState  # type: ignore[misc]
    sample_state = _engine.sample_state

KIT = GameKit(
    title="Boom: Runaway",
    game=BoomGame,
    sample_state=sample_state,
    codec="arena.games.boom.wire",
    arrays="arena.games.boom.arrays",
    frames="arena.games.boom.frames",
    example_bots={
        "example-random": "random_bot.py",
        "example-random-2": "random_bot.py",
        "example-boom-heuristic": "boom_heuristic.py",
        "example-boom-strong": "boom_strong.py",
    },
    simultaneous=True,
)
