"""Balloon Challenge: the rules engine (rules as implemented: docs/rules/balloon.md).

The one statement of the rules: run as it is (the pure-Python engine) or compiled by mypyc
(arena/games/engines.py chooses; scripts/build_engines.py builds), so it is typed as mypyc
checks it at run time: a field holds what its annotation says.

Owns the deck, the deal, turn order, bonus chips, scoring, observations (and their numbers for
the training environments, `feature_values`), the public event log, and determinization
(`sample_state`) for simulation bots.

Cards are ints 0..49 that index CARDS. Actions are ints: a card id plays that card from the
acting seat's hand; DROP_OUT (50) drops out of the round. The default action is DROP_OUT.

The hot path (legal_actions / apply_action) allocates one small tuple per action: hands are kept
as sorted tuples of legal actions (rebuilt only when a card leaves the hand), the log holds
compact tuples, and Event and observation objects are built only when asked for.
"""

from __future__ import annotations

import random
from operator import attrgetter
from typing import Any, ClassVar, Mapping, NamedTuple, Sequence

from ..base import (
    ConfigError,
    Event,
    Game,
    IllegalActionError,
    RulesError,
    State,
    ranks_from_scores,
)
from .values import BalloonObservation, Played

# --------------------------------------------------------------------------------------------
# Rule constants. Everything the rulebook does not state is marked (assumption); see
# docs/rules/balloon.md and ../shared/RULES-NOTES.md. Change them here and nowhere else.
# --------------------------------------------------------------------------------------------

COLOURS: tuple[str, ...] = ("red", "blue", "water", "yellow", "grey")
BLACK = "black"  # the prince's cards
# (assumption) the rulebook gives 8 cards per colour but not their numbers.
COLOUR_CARD_VALUES: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6, 7)
BLACK_CARD_VALUES: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
NUM_ROUNDS = 5
# Cards dealt to each player in round r (index r - 1): 5 + r.
HAND_SIZE_BY_ROUND: tuple[int, ...] = (6, 7, 8, 9, 10)
# Chips in play per player count (5 players: all 12).
CHIPS_BY_PLAYER_COUNT: Mapping[int, int] = {2: 4, 3: 7, 4: 10, 5: 12}
# Cards dealt face up as the start of the balloon, per player count.
FACE_UP_CARDS_BY_PLAYER_COUNT: Mapping[int, int] = {2: 5, 3: 0, 4: 0, 5: 0}
# Set aside at the start of each round for the first player to drop out.
FIRST_DROP_OUT_CHIPS = 1
# Dropping out in turn t gives max(0, EARLY_DROP_OUT_BASE - t) chips: 3, 2, 1, then 0.
EARLY_DROP_OUT_BASE = 4
# Playing exactly the THIRD_CARD_POSITION-th card of a non-black colour gives THIRD_CARD_CHIPS.
THIRD_CARD_POSITION = 3
THIRD_CARD_CHIPS = 1
# Points per chip held at the end of round r (index r - 1).
CHIP_POINTS_BY_ROUND: tuple[int, ...] = (2, 2, 2, 2, 3)

# --------------------------------------------------------------------------------------------
# Derived tables (not rules: computed from the constants above).
# --------------------------------------------------------------------------------------------


class Card(NamedTuple):
    colour: str
    value: int


CARDS: tuple[Card, ...] = tuple(
    [Card(c, v) for c in COLOURS for v in COLOUR_CARD_VALUES]
    + [Card(BLACK, v) for v in BLACK_CARD_VALUES]
)
NUM_CARDS = len(CARDS)
DROP_OUT = NUM_CARDS  # 50 with the default deck
CARD_VALUE: tuple[int, ...] = tuple(card.value for card in CARDS)
BLACK_INDEX = len(COLOURS)
# Colour index per card: 0..4 the colours, BLACK_INDEX for black.
CARD_COLOUR: tuple[int, ...] = tuple(
    COLOURS.index(card.colour) if card.colour != BLACK else BLACK_INDEX for card in CARDS
)
_MAX_TURNS = max(HAND_SIZE_BY_ROUND) + 2
EARLY_CHIPS_BY_TURN: tuple[int, ...] = tuple(
    max(0, EARLY_DROP_OUT_BASE - t) for t in range(_MAX_TURNS + 1)
)
_ALL_CARDS = frozenset(range(NUM_CARDS))
# BalloonState.feature_values: per player count, the indices of the values from 150 on; per
# card, its index as a face-up card and as a card on the table
_FEATURE_TAIL = {n: tuple(range(150, 162 + 6 * n)) for n in range(2, 6)}
_FACE_UP_FEATURE = tuple(range(50, 100))
_TABLE_FEATURE = tuple(range(100, 150))
_card_of = attrgetter("card")

# Compact log entries. A play is (seat, card, turn, third_card_chips); a drop-out is
# (seat, DROP_OUT, turn, early_chips, first_drop_out_chips); round starts and ends begin with a
# string so that `type(entry[0]) is str` tells them apart.
_ROUND_START = "round_start"
_ROUND_END = "round_end"
_MATCH_END = "match_end"
_SAMPLED = "sampled"
# `_to_act` once the match is over: equal to no seat, so no seat number (not even -1) can act.
_NOBODY: Any = object()


def card_name(card: int) -> str:
    colour, value = CARDS[card]
    return f"{colour} {value}"


def action_to_string(action: Any) -> str:
    if action == DROP_OUT and type(action) is int:
        return "drop out"
    if type(action) is int and 0 <= action < NUM_CARDS:
        return f"play {card_name(action)}"
    return f"unknown action {action!r}"


def early_drop_out_chips(turn: int) -> int:
    return max(0, EARLY_DROP_OUT_BASE - turn)


def round_points(volume: int, size: int, chips: int, round_: int) -> int:
    """A seat's points for one round: its volume unless burst, plus its chips."""
    return (volume if volume <= size else 0) + chips * CHIP_POINTS_BY_ROUND[round_ - 1]


def face_up_count(num_players: int) -> int:
    return FACE_UP_CARDS_BY_PLAYER_COUNT.get(num_players, 0)


def cards_dealt(num_players: int, round_: int) -> int:
    """How many cards of the deck leave it in round `round_` (hands plus face-up cards)."""
    return num_players * HAND_SIZE_BY_ROUND[round_ - 1] + face_up_count(num_players)


def shuffled_deck(rng: random.Random, dealt: int) -> tuple[int, ...]:
    """A deck order whose first `dealt` cards are uniformly random (partial Fisher-Yates).

    Only `rng.random()` is used, whose sequence Python guarantees across versions (shuffle and
    randrange carry no such promise), so a stored seed replays on any Python.
    """
    total = NUM_CARDS
    deck = list(range(total))
    rnd = rng.random
    for i in range(dealt):
        j = i + int(rnd() * (total - i))
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def deck_from_hands(
    num_players: int, round_: int, hands: Sequence[Sequence[int]], face_up: Sequence[int] = ()
) -> tuple[int, ...]:
    """A deck order that deals exactly `hands` (per seat) and `face_up` in round `round_`.

    For tests, puzzles and determinization: pass the result in `new_match(..., decks=)`.
    The undealt cards follow in ascending order.
    """
    size = HAND_SIZE_BY_ROUND[round_ - 1]
    if len(hands) != num_players:
        raise ConfigError(f"need {num_players} hands, got {len(hands)}")
    for seat, hand in enumerate(hands):
        if len(hand) != size:
            raise ConfigError(f"round {round_} deals {size} cards, seat {seat} got {len(hand)}")
    if len(face_up) != face_up_count(num_players):
        raise ConfigError(
            f"{num_players} players take {face_up_count(num_players)} face-up cards, "
            f"got {len(face_up)}"
        )
    dealt = [c for hand in hands for c in hand] + list(face_up)
    rest = sorted(_ALL_CARDS - set(dealt))
    deck = tuple(dealt + rest)
    _check_deck(deck)
    return deck


def _check_deck(deck: Sequence[int]) -> None:
    if len(deck) != NUM_CARDS or set(deck) != _ALL_CARDS:
        raise ConfigError(f"a deck must hold each card id 0..{NUM_CARDS - 1} exactly once")


# --------------------------------------------------------------------------------------------
# Public types (mirrored by the protobuf protocol: keep fields in step with arena.proto).
# --------------------------------------------------------------------------------------------


# Played and BalloonObservation: in .values, a module run as it is, never compiled (a compiled
# frozen dataclass is slower to build), so both builds of the engine share them.


# --------------------------------------------------------------------------------------------
# Game and state
# --------------------------------------------------------------------------------------------


class BalloonGame(Game):
    name = "balloon"
    min_players = 2
    max_players = 5
    engine_version = "1"

    def __init__(self, num_players: int, **options: Any):
        super().__init__(num_players, **options)
        n = num_players
        # Per seat, the one-seat tuple seats_to_act returns: no allocation per action.
        self._seat_tuples = tuple((s,) for s in range(n))

    def new_match(
        self, seed: int, *, decks: Mapping[int, Sequence[int]] | None = None
    ) -> "BalloonState":
        """The initial state of a match dealt from `seed`.

        All five rounds are dealt here, from `random.Random(seed)`, in round order, each from a
        fresh deck: seat s gets deck[s*h:(s+1)*h] (h the round's hand size), the two-player
        face-up cards follow, the rest stays undealt. The deal depends only on the seed and the
        seat position, never on the actions. `decks` (round -> deck order, see
        `deck_from_hands`) overrides chosen rounds, for hand-built matches.
        """
        return BalloonState(self, self.match_decks(seed, decks))

    def match_decks(
        self, seed: int, decks: Mapping[int, Sequence[int]] | None = None
    ) -> tuple[tuple[int, ...], ...]:
        """Every round's deck order of the match dealt from `seed` (new_match's deal)."""
        if type(seed) is not int:
            # random.Random(None) would seed from the OS: the match could never be replayed.
            raise ConfigError(f"a match seed must be an int, not {seed!r}")
        rng = random.Random(seed)
        n = self.num_players
        dealt = [shuffled_deck(rng, cards_dealt(n, r)) for r in range(1, NUM_ROUNDS + 1)]
        for r, deck in (decks or {}).items():
            if not 1 <= r <= NUM_ROUNDS:
                raise ConfigError(f"rounds are 1..{NUM_ROUNDS}, not {r}")
            deck = tuple(deck)
            _check_deck(deck)
            dealt[r - 1] = deck
        return tuple(dealt)

    def state_in_round(
        self,
        decks: tuple[tuple[int, ...], ...],
        *,
        round_number: int,
        start_seat: int,
        turn: int,
        to_act: int,
        hands: Sequence[tuple[int, ...]],
        face_up: Sequence[int],
        table: Sequence[Played],
        undealt: tuple[int, ...],
        dropped_out: Sequence[int],
        chips: Sequence[int],
        chips_in_middle: int,
        first_drop_out_chip: bool,
        totals: Sequence[int],
    ) -> "BalloonState":
        """A state in the middle of round `round_number`, from its parts (as an observation
        names them, with every seat's hand and the undealt cards; `to_act` -1: over), later
        rounds dealt from `decks` (every round's deck order, as new_match deals them). For
        determinizations (sample_state): its event log begins with a "sampled" event followed
        by the round's plays in `table` (their third-card chips logged as 0), so it is not a
        match history and recount_scores does not apply."""
        n = self.num_players
        st = BalloonState(self, decks, deal=False)
        st._round = round_number
        st._start = start_seat
        st._turn = turn
        st._order = [
            (start_seat + i) % n for i in range(n) if dropped_out[(start_seat + i) % n] == 0
        ]
        st._over = to_act < 0
        st._to_act = _NOBODY if st._over else to_act
        st._pos = st._order.index(to_act) if not st._over else 0
        st._seats = () if st._over else self._seat_tuples[to_act]
        st._legal = [h + (DROP_OUT,) for h in hands]
        st._vol = [sum(CARD_VALUE[c] for c in h) for h in hands]
        counts = [0] * (BLACK_INDEX + 1)
        for c in list(face_up) + [p.card for p in table]:
            counts[CARD_COLOUR[c]] += 1
        st._counts = counts
        st._size = len(face_up) + len(table)
        st._face_up = tuple(face_up)
        st._undealt = undealt
        st._middle = chips_in_middle
        st._first_chip = FIRST_DROP_OUT_CHIPS if first_drop_out_chip else 0
        st._chips = list(chips)
        st._dropped = list(dropped_out)
        st._totals = list(totals)
        st._log = [(_SAMPLED, round_number, turn)] + [(p.seat, p.card, p.turn, 0) for p in table]
        st._round_log = 0
        st._events_cache = []
        st._table_cache = (-1, 0, ())
        return st

    def action_to_string(self, action: Any) -> str:
        return action_to_string(action)


class BalloonState(State):
    """One match of Balloon Challenge. Mutated only by apply_action."""

    # The fields, by how a clone copies them (clone, whose test holds it to these lists):
    # shared as they are (immutable values, or tuples replaced rather than changed), or copied
    # (lists of values that are not changed in place).
    _SHARED_FIELDS: ClassVar[tuple[str, ...]] = (
        "game", "_seat_tuples", "_n", "_decks", "_round", "_start", "_turn", "_pos", "_to_act",
        "_seats", "_over", "_size", "_face_up", "_undealt", "_middle", "_first_chip",
        "_round_log", "_table_cache",
    )  # fmt: skip
    _COPIED_FIELDS: ClassVar[tuple[str, ...]] = (
        "_order", "_legal", "_vol", "_counts", "_chips", "_dropped", "_totals", "_log",
        "_events_cache",
    )  # fmt: skip
    __slots__ = (*_SHARED_FIELDS, *_COPIED_FIELDS)

    game: BalloonGame
    _seats: tuple[int, ...]  # the seat to act, or none
    _to_act: Any  # the seat to act, or _NOBODY once the match is over

    def __init__(
        self, game: BalloonGame, decks: tuple[tuple[int, ...], ...], deal: bool = True
    ) -> None:
        """The match at the start of its first round; with `deal` False, a state whose round
        the caller sets up (state_in_round, a clone: a compiled class cannot be made without
        its __init__)."""
        self.game = game
        self._n = game.num_players
        self._seat_tuples = game._seat_tuples
        self._decks = decks
        self._totals = [0] * self._n
        self._log: list[tuple] = []
        self._events_cache: list[Event] = []
        self._table_cache: tuple[int, int, tuple[Played, ...]] = (-1, 0, ())
        self._over = False
        if deal:
            self._start_round(1)

    # ---- the interface ------------------------------------------------------------------
    # A seat from outside is typed Any: compiled, an int parameter would turn True into 1 and
    # refuse 1.0 with a TypeError before the rules could say why it is no seat.

    def seats_to_act(self) -> tuple[int, ...]:
        return self._seats

    def legal_actions(self, seat: Any) -> tuple[int, ...]:
        if seat == self._to_act and type(seat) is int:  # True == 1, but True is no seat
            return self._legal[seat]
        return ()

    def apply_action(self, seat: Any, action: Any) -> None:
        # True == 1 and 1.0 == 1: a seat that only compares equal to the seat to act is refused
        # here, before anything changes (a bool would act for seat 1, a float fail half-way).
        if seat != self._to_act or type(action) is not int or type(seat) is not int:
            raise self._illegal(seat, action)
        if action == DROP_OUT:
            self._drop_out(seat)
            return
        legal = self._legal[seat]
        try:
            i = legal.index(action)
        except ValueError:
            raise self._illegal(seat, action) from None
        self._legal[seat] = legal[:i] + legal[i + 1 :]
        self._vol[seat] -= CARD_VALUE[action]
        colour = CARD_COLOUR[action]
        counts = self._counts
        k = counts[colour] + 1
        counts[colour] = k
        turn = self._turn
        chip = 0
        if k == THIRD_CARD_POSITION and colour != BLACK_INDEX:
            chip = self._middle
            if chip > THIRD_CARD_CHIPS:
                chip = THIRD_CARD_CHIPS
            self._middle -= chip
            self._chips[seat] += chip
        self._log.append((seat, action, turn, chip))
        self._size += 1
        self._pass_turn(self._pos + 1)

    def default_action(self, seat: Any) -> int:
        return DROP_OUT

    def is_over(self) -> bool:
        return self._over

    def scores(self) -> tuple[int, ...]:
        return tuple(self._totals)

    def observation(self, seat: Any) -> BalloonObservation:
        if type(seat) is not int or not -1 <= seat < self._n:
            raise RulesError(f"seat must be -1 (spectator) or 0..{self._n - 1}, not {seat!r}")
        legal = self._legal
        return BalloonObservation(
            seat=seat,
            num_players=self._n,
            round=self._round,
            turn=self._turn,
            start_seat=self._start,
            to_act=-1 if self._over else self._to_act,
            hand=legal[seat][:-1] if seat >= 0 else (),
            hand_sizes=tuple(len(h) - 1 for h in legal),
            face_up=self._face_up,
            table=self._table(),
            dropped_out=tuple(self._dropped),
            chips=tuple(self._chips),
            chips_in_middle=self._middle,
            first_drop_out_chip=self._first_chip > 0,
            totals=tuple(self._totals),
        )

    def feature_values(self, seat: Any) -> tuple[list[int], Sequence[int], list[float]]:
        """State.feature_values: Balloon's array holds 162 + 6n values."""
        n = self._n
        if type(seat) is not int or not 0 <= seat < n:
            raise RulesError.no_seat(seat, n, "encode")
        legal = self._legal
        # own hand [0, 50), face-up cards [50, 100), the table [100, 150)
        ones = [
            *legal[seat][:-1],
            *map(_FACE_UP_FEATURE.__getitem__, self._face_up),
            *map(_TABLE_FEATURE.__getitem__, map(_card_of, self._table())),
        ]
        return ones, _FEATURE_TAIL[n], self._feature_tail(seat)

    def _table(self) -> tuple[Played, ...]:
        # The table only grows within a round, so extend the last answer instead of rebuilding
        # it: observations are asked for at every move.
        start, scanned, table = self._table_cache
        log = self._log
        if start != self._round_log:
            start, scanned, table = self._round_log, self._round_log, ()
        if scanned < len(log):
            table += tuple(
                Played(e[0], e[1], e[2]) for e in log[scanned:] if len(e) == 4 and type(e[0]) is int
            )
        self._table_cache = (start, len(log), table)
        return table

    @property
    def events(self) -> tuple[Event, ...]:
        cache = self._events_cache
        log = self._log
        for entry in log[len(cache) :]:
            cache.append(_event_from_entry(entry))
        return tuple(cache)

    def clone(self) -> "BalloonState":
        # one assignment per field, _SHARED_FIELDS then _COPIED_FIELDS: compiled, each is a
        # native copy (a loop of setattr over the lists would not be)
        new = BalloonState(self.game, self._decks, deal=False)
        new._seat_tuples = self._seat_tuples
        new._n = self._n
        new._round = self._round
        new._start = self._start
        new._turn = self._turn
        new._pos = self._pos
        new._to_act = self._to_act
        new._seats = self._seats
        new._over = self._over
        new._size = self._size
        new._face_up = self._face_up
        new._undealt = self._undealt
        new._middle = self._middle
        new._first_chip = self._first_chip
        new._round_log = self._round_log
        new._table_cache = self._table_cache
        new._order = self._order.copy()
        new._legal = self._legal.copy()
        new._vol = self._vol.copy()
        new._counts = self._counts.copy()
        new._chips = self._chips.copy()
        new._dropped = self._dropped.copy()
        new._totals = self._totals.copy()
        new._log = self._log.copy()
        new._events_cache = self._events_cache.copy()
        return new

    # ---- extra read-only views (tests, referee, replays) ----------------------------------

    @property
    def num_players(self) -> int:
        return self._n

    @property
    def round(self) -> int:
        return self._round

    @property
    def turn(self) -> int:
        return self._turn

    @property
    def size(self) -> int:
        """Balloon size: cards on the table this round, face-up cards included."""
        return self._size

    def hand(self, seat: int) -> tuple[int, ...]:
        """The true hand of a seat (hidden information: not for bots)."""
        return self._legal[seat][:-1]

    def volume(self, seat: int) -> int:
        return self._vol[seat]

    def undealt(self) -> tuple[int, ...]:
        """This round's undealt cards, sorted (hidden information: not for bots)."""
        return tuple(sorted(self._undealt))

    def table_cards(self) -> tuple[int, ...]:
        return tuple(p.card for p in self.observation(-1).table)

    def snapshot(self) -> tuple:
        """Every field of the state as plain values: equal snapshots, equal states."""
        return (
            self._n,
            self._decks,
            self._round,
            self._start,
            self._turn,
            tuple(self._order),
            self._pos,
            -1 if self._over else self._to_act,
            self._seats,
            self._over,
            tuple(self._legal),
            tuple(self._vol),
            tuple(self._counts),
            self._size,
            self._face_up,
            self._undealt,
            self._middle,
            self._first_chip,
            tuple(self._chips),
            tuple(self._dropped),
            tuple(self._totals),
            tuple(self._log),
            self._round_log,
        )

    # ---- rules ------------------------------------------------------------------------------

    def _start_round(self, round_: int) -> None:
        n = self._n
        deck = self._decks[round_ - 1]
        size = HAND_SIZE_BY_ROUND[round_ - 1]
        f = face_up_count(n)
        legal = []
        vol = []
        value = CARD_VALUE.__getitem__
        for s in range(n):
            hand = deck[s * size : (s + 1) * size]
            vol.append(sum(map(value, hand)))
            actions = sorted(hand)
            actions.append(DROP_OUT)
            legal.append(tuple(actions))
        face_up = tuple(deck[n * size : n * size + f])
        counts = [0] * (BLACK_INDEX + 1)
        for c in face_up:
            counts[CARD_COLOUR[c]] += 1
        start = (round_ - 1) % n
        self._round = round_
        self._start = start
        self._turn = 1
        self._order = [(start + i) % n for i in range(n)]
        self._pos = 0
        self._to_act = start
        self._seats = self.game._seat_tuples[start]
        self._legal = legal
        self._vol = vol
        self._counts = counts
        self._size = f
        self._face_up = face_up
        self._undealt = deck[n * size + f :]
        self._first_chip = FIRST_DROP_OUT_CHIPS
        self._middle = CHIPS_BY_PLAYER_COUNT[n] - FIRST_DROP_OUT_CHIPS
        self._chips = [0] * n
        self._dropped = [0] * n
        self._round_log = len(self._log)
        self._log.append(
            (_ROUND_START, round_, start, (size,) * n, face_up, self._middle, self._first_chip)
        )

    def _drop_out(self, seat: int) -> None:
        turn = self._turn
        early = EARLY_CHIPS_BY_TURN[turn] if turn < len(EARLY_CHIPS_BY_TURN) else 0
        middle = self._middle
        if early > middle:
            early = middle
        self._middle = middle - early
        first = self._first_chip
        self._first_chip = 0
        self._chips[seat] += early + first
        self._dropped[seat] = turn
        self._log.append((seat, DROP_OUT, turn, early, first))
        order = self._order
        del order[self._pos]  # the next seat in turn order moves up to this position
        if not order:
            self._end_round()
            return
        self._pass_turn(self._pos)

    def _pass_turn(self, pos: int) -> None:
        """The seat at `pos` in the turn order acts next; past the last seat in the row, the
        next row (turn) begins with the first."""
        order = self._order
        if pos == len(order):
            pos = 0
            self._turn += 1
        self._pos = pos
        seat = order[pos]
        self._to_act = seat
        self._seats = self._seat_tuples[seat]

    def _end_round(self) -> None:
        n = self._n
        size = self._size
        vol = self._vol
        chips = self._chips
        complete = tuple(s for s in range(n) if vol[s] == size)
        share = self._middle // len(complete) if complete else 0
        for s in complete:
            chips[s] += share
        # The remainder of an uneven split stays in the middle, unawarded.
        self._middle -= share * len(complete)
        round_ = self._round
        scores = tuple(round_points(vol[s], size, chips[s], round_) for s in range(n))
        totals = self._totals
        for s in range(n):
            totals[s] += scores[s]
        self._log.append(
            (
                _ROUND_END,
                round_,
                size,
                tuple(h[:-1] for h in self._legal),
                tuple(vol),
                complete,
                share,
                tuple(chips),
                scores,
                tuple(totals),
            )
        )
        if round_ == NUM_ROUNDS:
            self._over = True
            self._to_act = _NOBODY
            self._seats = ()
            self._log.append((_MATCH_END, tuple(totals)))
        else:
            self._start_round(round_ + 1)

    def _illegal(self, seat: Any, action: Any) -> IllegalActionError:
        if self._over:
            reason = "the match is over"
        elif type(seat) is not int or not 0 <= seat < self._n:
            reason = f"there is no seat {seat!r} (seats are 0..{self._n - 1})"
        elif seat != self._to_act:
            reason = f"it is not your turn (seat {self._to_act} is to act)"
        elif type(action) is not int or not 0 <= action <= DROP_OUT:
            reason = (
                f"unknown action; actions are card ids 0..{NUM_CARDS - 1} (play that card) "
                f"or {DROP_OUT} (drop out)"
            )
        else:
            reason = (
                f"card {action} ({card_name(action)}) is not in your hand; "
                f"your hand is {list(self._legal[seat][:-1])}"
            )
        return IllegalActionError(seat, action, reason)

    # ---- the training environments' fast path (arena.envs.arrays) ---------------------------

    def feature_tail(self, seat: Any) -> list[float]:
        """feature_values(seat)'s values (every value from index 150 on) without its ones:
        for a caller that keeps the ones itself, as they change only by a card leaving a hand
        or reaching the table (arena.envs.arrays). tests/envs/test_env_features.py holds it
        equal to feature_values."""
        n = self._n
        if type(seat) is not int or not 0 <= seat < n:
            raise RulesError.no_seat(seat, n, "encode")
        return self._feature_tail(seat)

    def _feature_tail(self, seat: int) -> list[float]:
        """Every value from index 150 on, for a seat already checked."""
        n, legal = self._n, self._legal
        to_act = -1 if self._over else self._to_act
        start, dropped, chips, totals = self._start, self._dropped, self._chips, self._totals
        c = self._counts
        values = [
            c[0] / 8,
            c[1] / 8,
            c[2] / 8,
            c[3] / 8,
            c[4] / 8,
            c[5] / 8,
            self._round / 5,
            self._turn / 12,
            self._size / 50,
            self._vol[seat] / 50,
            self._middle / 12,
            1.0 if self._first_chip > 0 else 0.0,
        ]
        for s in (*range(seat, n), *range(seat)):  # seats rotated: the observer first
            values += (
                (len(legal[s]) - 1) / 10,
                1.0 if dropped[s] else 0.0,
                chips[s] / 12,
                totals[s] / 100,
                1.0 if to_act == s else 0.0,
                1.0 if start == s else 0.0,
            )
        return values


# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------


def _event_from_entry(e: tuple) -> Event:
    kind = e[0]
    if type(kind) is int:
        if e[1] == DROP_OUT:
            return Event(
                "drop_out",
                kind,
                {
                    "turn": e[2],
                    "early_chips": e[3],
                    "first_drop_out_chips": e[4],
                    "chips": e[3] + e[4],
                },
            )
        return Event(
            "play", kind, {"card": e[1], "turn": e[2], "third_card_chips": e[3], "chips": e[3]}
        )
    if kind == _ROUND_START:
        _, round_, start, hand_sizes, face_up, middle, first = e
        return Event(
            "round_start",
            start,
            {
                "round": round_,
                "start_seat": start,
                "hand_sizes": hand_sizes,
                "face_up": face_up,
                "chips_in_middle": middle,
                "first_drop_out_chips": first,
            },
        )
    if kind == _ROUND_END:
        _, round_, size, hands, volumes, complete, share, chips, scores, totals = e
        return Event(
            "round_end",
            -1,
            {
                "round": round_,
                "size": size,
                "hands": hands,
                "volumes": volumes,
                "complete": complete,
                "complete_share": share,
                "chips": chips,
                "round_scores": scores,
                "totals": totals,
            },
        )
    if kind == _MATCH_END:
        return Event("match_end", -1, {"totals": e[1], "ranks": ranks_from_scores(e[1])})
    if kind == _SAMPLED:
        return Event("sampled", -1, {"round": e[1], "turn": e[2]})
    raise AssertionError(f"unknown log entry {e!r}")


def recount_scores(events: Sequence[Event]) -> tuple[int, ...]:
    """The match totals recounted from the public event log alone, by the rules.

    Independent of the engine's bookkeeping: chips are re-derived from the plays and
    drop-outs (third card, early, first drop-out, complete), the size from the face-up cards
    and plays, the volumes from the revealed hands. Raises RulesError when a recorded chip
    count or round summary disagrees with the recount.
    """
    totals: list[int] = []
    n = 0
    for ev in events:
        d = ev.data or {}
        if ev.kind == "round_start":
            n = len(d["hand_sizes"])
            if not totals:
                totals = [0] * n
            round_ = d["round"]
            middle = CHIPS_BY_PLAYER_COUNT[n] - FIRST_DROP_OUT_CHIPS
            first = FIRST_DROP_OUT_CHIPS
            chips = [0] * n
            counts: dict[int, int] = {}
            for c in d["face_up"]:
                counts[CARD_COLOUR[c]] = counts.get(CARD_COLOUR[c], 0) + 1
            size = len(d["face_up"])
        elif ev.kind == "play":
            colour = CARD_COLOUR[d["card"]]
            counts[colour] = counts.get(colour, 0) + 1
            size += 1
            got = 0
            if counts[colour] == THIRD_CARD_POSITION and colour != BLACK_INDEX:
                got = min(THIRD_CARD_CHIPS, middle)
            if got != d["third_card_chips"]:
                raise RulesError(f"play {d} should have taken {got} chips")
            middle -= got
            chips[ev.seat] += got
        elif ev.kind == "drop_out":
            early = min(early_drop_out_chips(d["turn"]), middle)
            if (early, first) != (d["early_chips"], d["first_drop_out_chips"]):
                raise RulesError(f"drop-out {d} should have taken {early} + {first} chips")
            middle -= early
            chips[ev.seat] += early + first
            first = 0
        elif ev.kind == "round_end":
            volumes = [sum(CARD_VALUE[c] for c in hand) for hand in d["hands"]]
            complete = [s for s in range(n) if volumes[s] == size]
            share = middle // len(complete) if complete else 0
            for s in complete:
                chips[s] += share
            if size != d["size"] or tuple(chips) != tuple(d["chips"]):
                raise RulesError(f"round {round_} summary disagrees with its events")
            for s in range(n):
                totals[s] += round_points(volumes[s], size, chips[s], round_)
    return tuple(totals)


# --------------------------------------------------------------------------------------------
# Determinization
# --------------------------------------------------------------------------------------------


def sample_state(observation: BalloonObservation, rng: random.Random) -> BalloonState:
    """A full state consistent with `observation`, the hidden cards drawn at random.

    The other seats' hands and the undealt cards of the current round are drawn from the cards
    the observing seat has not seen (not in its hand, the face-up cards or the table); later
    rounds are dealt afresh from `rng`. The sampled state's event log begins with a "sampled"
    event followed by the current round's plays as seen (their third-card chips are not
    observed and are logged as 0); it is not a match history and recount_scores does not apply.
    """
    obs = observation
    n = obs.num_players
    game = BalloonGame(n)
    seen = set(obs.hand) | set(obs.face_up) | {p.card for p in obs.table}
    unseen = sorted(_ALL_CARDS - seen)
    rng.shuffle(unseen)
    hands: list[tuple[int, ...]] = []
    k = 0
    for s in range(n):
        if s == obs.seat:
            hands.append(tuple(sorted(obs.hand)))
        else:
            m = obs.hand_sizes[s]
            hands.append(tuple(sorted(unseen[k : k + m])))
            k += m
    undealt = tuple(sorted(unseen[k:]))
    decks = [shuffled_deck(rng, cards_dealt(n, r)) for r in range(1, NUM_ROUNDS + 1)]

    return game.state_in_round(
        tuple(decks), round_number=obs.round, start_seat=obs.start_seat, turn=obs.turn,
        to_act=obs.to_act, hands=hands, face_up=obs.face_up, table=obs.table, undealt=undealt,
        dropped_out=obs.dropped_out, chips=obs.chips, chips_in_middle=obs.chips_in_middle,
        first_drop_out_chip=obs.first_drop_out_chip, totals=obs.totals,
    )  # fmt: skip
