"""Boom: Runaway told plainly: the specification of the rules (docs/rules/boom.md).

This module owns the rules data (the cards, the guard cards, the deal and step sizes, and every
point the rulebook leaves open), the values a seat sees (BoomObservation, ParadiseCard), the
rules as plain functions, and PlainBoomGame / PlainBoomState: an engine written to be read, each
rule in one place, in plain names, with no speed tricks. It deals the same cards from the same
seed, offers the same legal actions in the same order and gives the same observations, events
and scores as the fast engine, `arena.games.boom`, which matches and bots run: that one builds
its tables from the data here, and tests/games/test_boom_plain.py plays the two side by side over
every variant, checking them equal after every action. Where they ever differ, this one says
what the rules are.
"""

from __future__ import annotations

import abc
import copy
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Iterable, Mapping, Sequence, cast

from ..base import ConfigError, Event, Game, GameOption, IllegalActionError, RulesError, State

# =================================================================================================
# Rules data. Every point the rulebook leaves open is decided here (see ../shared/RULES-NOTES.md
# and docs/rules/boom.md); change a constant to play with the real cards if they differ.
# =================================================================================================

# (assumption) Colour order on the guard cards, left to right; also the order of resolution.
COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue", "brown")
# (assumption) The ten bomb cards of each colour, by value. Card id = colour * 10 + index here.
VALUES: tuple[int, ...] = (1, 2, 2, 3, 3, 4, 4, 5, 5, 6)
# (assumption) The 8 guard cards: the limit per colour, in COLOURS order. Index 0 is guard "1".
GUARDS: tuple[tuple[int, ...], ...] = (
    (8, 10, 12, 14, 16),
    (16, 8, 10, 12, 14),
    (14, 16, 8, 10, 12),
    (12, 14, 16, 8, 10),
    (10, 12, 14, 16, 8),
    (6, 9, 11, 13, 7),
    (9, 7, 13, 6, 11),
    (11, 13, 6, 9, 15),
)
# Cards dealt to each seat in the basic game, by player count (rulebook); the rest are
# discarded face down.
BASIC_DEAL: Mapping[int, int] = {2: 16, 3: 12, 4: 12, 5: 10}
# Cards dealt to each seat in the advanced game, by player count (rulebook); the rest are
# discarded face up.
ADVANCED_DEAL: Mapping[int, int] = {2: 15, 3: 13, 4: 12, 5: 10}
# Values of which one card of each colour is removed before the advanced deal (rulebook).
# (assumption) Of two cards with the same value, the one with the lower id is removed.
ADVANCED_REMOVED_VALUES: Mapping[int, tuple[int, ...]] = {2: (2, 3, 4, 5), 3: (3, 5), 4: (), 5: ()}
# Cards each seat plays in the first and in the second escape, by player count (rulebook).
STEP_CARDS: Mapping[int, tuple[int, int]] = {2: (2, 2), 3: (1, 2), 4: (1, 2), 5: (1, 1)}
# (assumption) A seat holding fewer cards than a step asks for plays all it has (its ruse card
# counts as a card it may play in the second escape). If False, such a seat plays nothing then.
SHORT_HAND_PLAYS_ALL: bool = True
# The escape steps (1 = first, 2 = second) in which a ruse card may be played (rulebook).
RUSE_STEPS: tuple[int, ...] = (2,)
# Advanced game: points for the seat(s) holding the fewest bomb cards (rulebook: 5).
FEWEST_CARDS_BONUS: int = 5
# (assumption) The fewest-cards bonus is given at the end of every round (after the ruse cards
# return, before the game-end check). If False, only at the end of a game's last round.
FEWEST_CARDS_BONUS_EVERY_ROUND: bool = True
# A game ends after a round in which some seat is left with this many bomb cards or fewer
# (ruse cards do not count) (rulebook).
GAME_END_HAND_SIZE: int = 2
# Longer play: the series ends after the first game in which some seat's total reaches this
# (rulebook). (assumption) If several reach it in that game, the highest total wins and equal
# totals share the place: that is how ranks follow from scores anyway.
SERIES_TARGET: int = 200
# A game that can never end (decision; the rulebook is silent, see RULES-NOTES, Boom step 8): when
# every seat must play its whole hand each round and no guard card would let any of those cards
# escape, nothing can ever change again, so the game ends at once, scored as it stands
# (provably_stuck). Two players left with green 2, 4, 5 and green 2, 3, 6 are such a game: they
# tie at 11 under every guard, and no green limit reaches 22. A game that is not provably stuck
# goes on however long no card escapes (the guard that lets a hand out may not have come up yet).
# Only as a safety limit, for bots that keep choosing to tie, a game ends after this many rounds,
# scored as it stands.
MAX_GAME_ROUNDS: int = 200

# =================================================================================================

# Card ids: bomb card 0..49 is colour COLOURS[id // 10] and value VALUES[id % 10] (red 0..9,
# yellow 10..19, ...); RUSE (50) stands for a seat's own ruse card, no colour and no value.
RUSE = 50
NUM_CARDS = len(COLOURS) * len(VALUES)
NUM_GUARDS = len(GUARDS)
NUM_COLOURS = len(COLOURS)
assert NUM_CARDS == RUSE == 50, "card ids and RUSE assume 5 colours x 10 values"
assert all(len(g) == NUM_COLOURS for g in GUARDS)


def card_colour(card: int) -> str:
    return COLOURS[card // 10]


def card_value(card: int) -> int:
    return VALUES[card % 10]


def card_to_string(card: int) -> str:
    if card == RUSE:
        return "ruse"
    return f"{COLOURS[card // 10]} {VALUES[card % 10]} (#{card})"


def action_to_string(action: Sequence[int]) -> str:
    """A readable form of an action, e.g. "green 6 (#29) + ruse"."""
    return " + ".join(card_to_string(c) for c in action) if action else "nothing"


def removed_cards(num_players: int, advanced: bool) -> tuple[int, ...]:
    """The cards taken out of the game before dealing (advanced game only)."""
    if not advanced:
        return ()
    out = []
    for colour in range(NUM_COLOURS):
        for value in ADVANCED_REMOVED_VALUES[num_players]:
            out.append(colour * 10 + VALUES.index(value))
    return tuple(sorted(out))


@dataclass(frozen=True, slots=True)
class ParadiseCard:
    card: int
    face_up: bool


@dataclass(frozen=True, slots=True)
class BoomObservation:
    """What one seat may see (seat == -1: a spectator, with an empty hand)."""

    seat: int
    num_players: int
    game_number: int  # 1-based; above 1 only in longer play (a series)
    round: int  # 1-based within the game
    step: int  # 1 = first escape, 2 = second escape, 0 = match over
    guard: int  # index into GUARDS of the revealed guard card
    guard_limits: tuple[int, ...]  # per colour, in COLOURS order
    guards_left: int  # guard cards left in the deck before a reshuffle
    guards_used: tuple[int, ...]  # guard cards revealed since the last shuffle, current one last
    to_play: int  # how many cards this seat plays in this step (0: none now)
    hand: tuple[int, ...]  # own bomb cards, sorted
    has_ruse: bool  # own ruse card in hand
    hand_sizes: tuple[int, ...]  # bomb cards in each seat's hand
    acted: tuple[bool, ...]  # who has already chosen in this step (face-down cards on the table)
    revealed: tuple[tuple[int, ...], ...]  # cards each seat has revealed this round (RUSE = 50)
    paradise: tuple[tuple[ParadiseCard, ...], ...]  # per seat
    discarded: tuple[int, ...]  # cards discarded face up (advanced game)
    scores: tuple[int, ...]  # this game's scores so far
    series_totals: tuple[int, ...]  # totals of the finished games of the series


# The players a game may have (BoomGame and PlainBoomGame).
MIN_PLAYERS = 2
MAX_PLAYERS = 5
# Why a game ended: the `end` of its game_end event.
HAND_SIZE_END = "hand_size"  # a seat holds GAME_END_HAND_SIZE bomb cards or fewer
STUCK_END = "stuck"  # provably_stuck
ROUND_LIMIT_END = "round_limit"  # MAX_GAME_ROUNDS


# ------------------------------------------------------------------------------ the rules, plainly


def cards_to_play(asked: int, held: int) -> int:
    """How many cards a seat plays in an escape step that asks for `asked`, holding `held` cards
    it may play in that step (bomb cards, and its ruse card where the step allows it)."""
    if held >= asked:
        return asked
    return held if SHORT_HAND_PLAYS_ALL else 0


def resolve_colour(sums: Sequence[int], limit: int) -> tuple[list[int], list[int]]:
    """Step 4 of a round for one colour: `sums[p]` is the sum of seat p's cards of the colour
    played this round, `limit` the guard's limit for it. While the total is over the limit,
    every seat with the highest sum takes its cards back. Returns the seats that take back, in
    the order they do, and the seats whose cards escape face up (the highest sum left); every
    other seat with a sum left escapes face down."""
    left = list(sums)
    taken_back = []
    while sum(left) > limit:
        top = max(left)
        for seat, s in enumerate(left):
            if s == top:
                taken_back.append(seat)
                left[seat] = 0
    top = max(left, default=0)
    face_up = [seat for seat, s in enumerate(left) if s and s == top]
    return taken_back, face_up


def colour_sums(colour: int, played: Sequence[Iterable[int]]) -> list[int]:
    """Each seat's sum of its cards of `colour` among `played[seat]` (RUSE has no colour)."""
    return [
        sum(card_value(c) for c in cards if c != RUSE and c // 10 == colour) for cards in played
    ]


def any_escape(guard: int, played: Sequence[Iterable[int]]) -> bool:
    """Whether any bomb card escapes in a round in which seat p plays the cards `played[p]`
    under guard card `guard` (index into GUARDS): some colour has a seat left to escape once
    the take-backs are done (resolve_colour)."""
    played = [tuple(cards) for cards in played]
    return any(
        resolve_colour(colour_sums(colour, played), GUARDS[guard][colour])[1]
        for colour in range(NUM_COLOURS)
    )


def plays_whole_hand(num_players: int, bomb_cards: int, holds_ruse: bool) -> bool:
    """Whether a seat holding `bomb_cards` bomb cards (and its ruse card, if `holds_ruse`) must
    play its whole hand in a round, whatever it chooses (cards_to_play in each step, its ruse
    card among the cards it may play in RUSE_STEPS). Which cards go in which step is then its
    only choice, and that changes nothing: a round is resolved from all the cards played in it.
    With the rulebook's numbers: it holds no more cards than the round asks for (2 players 4,
    3 or 4 players 3, 5 players 2)."""
    cards, ruse = bomb_cards, holds_ruse
    for step, asked in enumerate(STEP_CARDS[num_players], 1):
        ruse_playable = ruse and step in RUSE_STEPS
        held = cards + ruse_playable
        plays = cards_to_play(asked, held)
        if plays == held:
            cards, ruse = 0, ruse and not ruse_playable
        elif ruse_playable and plays:
            return False  # it chooses between keeping its ruse card and keeping a bomb card
        else:
            cards -= plays
    return cards == 0


def provably_stuck(num_players: int, hands: Sequence[Sequence[int]], ruse: Sequence[bool]) -> bool:
    """The rule for a game that can never end (RULES-NOTES, Boom step 8), as it reads: every
    seat must play its whole hand each round (`hands[p]`, its bomb cards; `ruse[p]`, whether it
    holds its ruse card), and under none of the guard cards would any of those cards escape.
    Every round then takes every card back and the next round is the same again: nothing can
    ever change."""
    if not all(plays_whole_hand(num_players, len(h), r) for h, r in zip(hands, ruse)):
        return False
    return not any(any_escape(guard, hands) for guard in range(NUM_GUARDS))


def escape_points(cards: Sequence[int], face_up: bool) -> int:
    """What paradise cards are worth: 1 each, plus their values when face up."""
    return len(cards) + (sum(card_value(c) for c in cards) if face_up else 0)


def recount_scores(events: Sequence[Event]) -> tuple[int, ...]:
    """Each seat's total over the whole match, recounted from the public event log alone:
    1 per paradise card, plus its value when face up, plus every fewest-cards bonus."""
    totals: list[int] | None = None
    for event in events:
        data = event.data or {}
        if event.kind == "game_start":
            if totals is None:
                totals = [0] * len(data["hand_sizes"])
        elif event.kind in ("escape", "fewest_cards_bonus"):
            if totals is None:
                raise RulesError(f"the event log has a {event.kind} event before any game_start")
            if event.kind == "escape":
                totals[event.seat] += escape_points(data["cards"], data["face_up"])
            else:
                totals[event.seat] += data["points"]
    if totals is None:
        raise RulesError("the event log has no game_start event")
    return tuple(totals)


def illegal_reason(
    game: BoomGameBase,
    over: bool,
    step: int,
    to_play: Sequence[int],
    choice: Sequence[tuple[int, ...] | None],
    hands: Sequence[Sequence[int]],
    has_ruse: Sequence[bool],
    seat: Any,
    action: Any,
) -> str | None:
    """Why `seat` may not play `action` now, or None if it may: the legality of an action, for
    both engines. `to_play[p]` is how many cards seat p plays in escape step `step`, `choice[p]`
    its face-down choice (None: still to choose), `hands[p]` its bomb cards, `has_ruse[p]`
    whether it holds its ruse card."""
    if over:
        return "the match is over"
    if type(seat) is not int or not 0 <= seat < game.num_players:
        return f"there is no seat {seat!r} (seats are 0..{game.num_players - 1})"
    asked = to_play[seat]
    if not asked:
        return f"it plays no cards in escape step {step}"
    if choice[seat] is not None:
        return f"it has already chosen its cards for escape step {step}"
    if type(action) is not tuple:
        return "an action is a sorted tuple of card ids, e.g. (12,) or (3, 47)"
    if len(action) != asked:
        return f"escape step {step} asks this seat for {asked} card(s), not {len(action)}"
    if any(type(c) is not int for c in action):
        return "card ids are ints (0..49 bomb cards, 50 = own ruse card)"
    if len(set(action)) != len(action):
        return "a card appears twice"
    if list(action) != sorted(action):
        return "card ids must be listed in increasing order"
    for c in action:
        if c == RUSE:
            if not game.ruse:
                return "there are no ruse cards in this game (option ruse is off)"
            if step not in RUSE_STEPS:
                return f"a ruse card may only be played in escape step(s) {RUSE_STEPS}"
            if not has_ruse[seat]:
                return "its ruse card is not in its hand"
        elif not 0 <= c < NUM_CARDS:
            return f"{c} is not a card id (0..49 bomb cards, 50 = own ruse card)"
        elif c not in hands[seat]:
            return f"card {c} ({card_to_string(c)}) is not in its hand"
    return None


# ------------------------------------------------------------------------------ chance

# What a draw of chance is for (the `purpose` of draw_digits).
DEAL_DRAW = 0
GUARD_DRAW = 1


def draw_digits(
    seed: int, purpose: int, game_number: int, shuffle_number: int, radices: Sequence[int]
) -> list[int]:
    """One event of chance: a digit uniform in [0, r) for each radix r (at most 256), decided
    by the match seed and the event alone (docs/rules/boom.md, "Chance and replays").

    Each digit is a 16-bit little-endian value from BLAKE2b digests of the text
    "<seed> <purpose> <game> <shuffle> <counter>", modulo its radix. If any value is at or above
    the largest multiple of its radix up to 2**16 (which would make small digits likelier), the
    whole draw is made again from the next digests."""
    # imported here: the fast engine imports this module for its data, and hashlib loads
    # OpenSSL (~15 ms), which a bot starting up should not pay for a function it never calls
    from hashlib import blake2b

    counter = 0
    while True:
        values: list[int] = []
        while len(values) < len(radices):
            text = f"{seed} {purpose} {game_number} {shuffle_number} {counter}"
            digest = blake2b(text.encode()).digest()
            counter += 1
            values += [int.from_bytes(digest[i : i + 2], "little") for i in range(0, 64, 2)]
        values = values[: len(radices)]
        if all(v < r * (65536 // r) for v, r in zip(values, radices)):
            return [v % r for v, r in zip(values, radices)]


def pop_at(pool: list[int], digits: Iterable[int]) -> list[int]:
    """Pops pool's items at these digits, in turn: a uniformly random order of what it pops."""
    return [pool.pop(d) for d in digits]


def shuffle_guards(seed: int, game_number: int, shuffle_number: int) -> list[int]:
    """The order of the guard deck after a reshuffle (shuffle_number counts from 1 in a game)."""
    guards = list(range(NUM_GUARDS))
    digits = draw_digits(seed, GUARD_DRAW, game_number, shuffle_number, range(NUM_GUARDS, 1, -1))
    return pop_at(guards, digits) + guards


def complete_guard_order(given: Sequence[int], seed: int, game_number: int) -> list[int]:
    """`given` guards first, then the others in an order drawn from the seed."""
    given = list(given)
    if any(type(g) is not int or not 0 <= g < NUM_GUARDS for g in given) or len(set(given)) < len(
        given
    ):
        raise RulesError(f"a guard order lists distinct guard indices 0..{NUM_GUARDS - 1}: {given}")
    rest = [g for g in range(NUM_GUARDS) if g not in given]
    digits = draw_digits(seed, GUARD_DRAW, game_number, 0, range(len(rest), 1, -1))
    return given + pop_at(rest, digits) + rest


@dataclass(frozen=True)
class Deal:
    """The cards and the guard order a game starts with."""

    hands: list[list[int]]
    discards: list[int]
    guard_order: list[int]


def deal(
    num_players: int, deck: Sequence[int], deal_size: int, seed: int, game_number: int
) -> Deal:
    """One draw pops every card but seat 0's hand from the sorted deck (what is left is that
    hand), then pops the guard order. Seat i gets the i-th slice of the popped cards, so the
    same seed deals the same cards to the same seat positions; what is left over is discarded."""
    cards = list(deck)
    popped = len(cards) - deal_size
    radices = [*range(len(cards), deal_size, -1), *range(NUM_GUARDS, 1, -1)]
    digits = draw_digits(seed, DEAL_DRAW, game_number, 0, radices)
    drawn = pop_at(cards, digits[:popped])
    guards = list(range(NUM_GUARDS))
    order = pop_at(guards, digits[popped:]) + guards
    others = [sorted(drawn[i * deal_size : (i + 1) * deal_size]) for i in range(num_players - 1)]
    return Deal([cards, *others], sorted(drawn[(num_players - 1) * deal_size :]), order)


# ------------------------------------------------------------------------------ the engine


@dataclass(frozen=True)
class RoundPosition:
    """A game under way, at the start of escape step `step` of round `round_number`, no seat
    having chosen yet (what BoomGameBase.state_in_round builds a state from): the guard
    revealed is guard_order[guards_revealed - 1]; `first_escape` is what each seat revealed in
    the first escape (step 2 only); `scores` are the game's so far, `series_totals` those of
    the games finished before it; `dry_rounds` counts the rounds in a row without an escape
    (engine version 2 only)."""

    game_number: int
    round_number: int
    step: int
    guard_order: Sequence[int]
    guards_revealed: int
    hands: Sequence[Sequence[int]]
    ruse: Sequence[bool]
    discarded_face_up: Sequence[int]
    discarded_face_down: Sequence[int]
    paradise: Sequence[Sequence[ParadiseCard]]
    scores: Sequence[int]
    series_totals: Sequence[int]
    first_escape: Sequence[Sequence[int]] | None = None
    dry_rounds: int = 0

    def __post_init__(self) -> None:
        if self.step == 2 and self.first_escape is None:
            raise RulesError("a position in the second escape step needs first_escape")


class BoomGameBase(Game):
    """What every Boom game is, whichever engine plays it: its facts, its options and its cards.
    Options: advanced (card removal, open discard, +5 for the fewest cards), ruse (one ruse card
    per seat), series (longer play to SERIES_TARGET). An engine adds new_match and start_state."""

    name = "boom"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    declared_options = (
        GameOption("advanced", "the advanced game"),
        GameOption("ruse", "deal each player a ruse card"),
        GameOption("series", f"longer play, games to {SERIES_TARGET} points"),
    )
    engine_version = "3"

    def __init__(self, num_players: int, **options: Any):
        super().__init__(num_players, **options)
        self.advanced: bool = bool(self.options["advanced"])
        self.ruse: bool = bool(self.options["ruse"])
        self.series: bool = bool(self.options["series"])
        self.deal_size: int = (ADVANCED_DEAL if self.advanced else BASIC_DEAL)[num_players]
        self.removed: tuple[int, ...] = removed_cards(num_players, self.advanced)
        self.deck: tuple[int, ...] = tuple(c for c in range(NUM_CARDS) if c not in self.removed)
        if self.deal_size * num_players > len(self.deck):
            raise ConfigError(
                f"boom cannot deal {self.deal_size} cards to {num_players} players from "
                f"{len(self.deck)} cards; check BASIC_DEAL, ADVANCED_DEAL, ADVANCED_REMOVED_VALUES"
            )

    def action_to_string(self, action: Any) -> str:
        return action_to_string(action)

    def state_from_hands(
        self,
        hands: Sequence[Iterable[int]],
        guard_order: Sequence[int] = (),
        *,
        discarded: Iterable[int] | None = None,
        ruse: Sequence[bool] | None = None,
        seed: int = 0,
        series_totals: Sequence[int] | None = None,
        game_number: int = 1,
    ) -> State:
        """A state at the start of a game (round 1, first escape) with the given hands, for tests,
        puzzles and what-if analysis.

        `hands[seat]` are the seat's bomb cards. `guard_order` lists guard indices (into GUARDS)
        in the order they will be revealed, the first one now; guards not listed follow in an
        order drawn from `seed`, which also drives every later reshuffle (and, in a series, the
        later deals). `discarded` defaults to every card neither dealt nor removed; it is face
        down in the basic game and face up in the advanced game. `ruse` says which seats hold
        their ruse card (default: all, in the ruse variant). `series_totals` and `game_number`
        place the game inside a series.
        """
        np = self.num_players
        if len(hands) != np:
            raise RulesError(f"state_from_hands needs {np} hands, got {len(hands)}")
        hand_lists = [sorted(h) for h in hands]
        dealt = [c for h in hand_lists for c in h]
        removed = set(self.removed)
        if discarded is None:
            discards = sorted(set(self.deck) - set(dealt))
        else:
            discards = sorted(discarded)
        everything = dealt + discards
        bad = [c for c in everything if type(c) is not int or not 0 <= c < NUM_CARDS]
        if bad:
            raise RulesError(f"not bomb card ids (0..49): {bad}")
        if len(set(everything)) != len(everything):
            raise RulesError("a card is in two places (hands and discards must not overlap)")
        if removed & set(everything):
            raise RulesError(f"cards {sorted(removed & set(everything))} are removed in this game")
        if ruse is None:
            ruse = [self.ruse] * np
        if any(ruse) and not self.ruse:
            raise RulesError("ruse cards are only in the game with the ruse option")
        if type(seed) is not int:
            raise RulesError(f"a seed is an int, not {seed!r}")
        order = complete_guard_order(guard_order, seed, game_number)
        totals = [0] * np if series_totals is None else list(series_totals)
        return self.start_state(
            seed, game_number, totals, hand_lists, [bool(r) for r in ruse], discards, order
        )

    @abc.abstractmethod
    def start_state(
        self,
        seed: int,
        game_number: int,
        series_totals: list[int],
        hands: list[list[int]],
        ruse: list[bool],
        discards: list[int],
        guard_order: list[int],
    ) -> State:
        """A state at round 1 of game `game_number`, with these hands (sorted), ruse cards,
        discards and guard order (the first is revealed now); later chance is drawn from
        `seed`. For state_from_hands, which has checked them."""

    @abc.abstractmethod
    def state_in_round(self, seed: int, position: RoundPosition) -> State:
        """A state at `position` in a game under way; later reshuffles are drawn from `seed`.
        Its event log starts with the round in progress: its guard (not marked reshuffled)
        and, in step 2, the first reveal. For determinizations (sample_state)."""


class PlainBoomGame(BoomGameBase):
    """Boom: Runaway for 2-5 players, told plainly: the specification of BoomGame."""

    def new_match(self, seed: int) -> "PlainBoomState":
        if type(seed) is not int:
            raise RulesError(f"a match seed is an int, not {seed!r}")
        state = PlainBoomState(self, seed)
        state.deal_game()
        return state

    def start_state(self, seed, game_number, series_totals, hands, ruse, discards, guard_order):
        state = PlainBoomState(self, seed, game_number, series_totals)
        state.start_game(hands, ruse, discards, guard_order)
        return state

    def state_in_round(self, seed: int, position: RoundPosition) -> PlainBoomState:
        at = position
        state = PlainBoomState(self, seed, at.game_number, at.series_totals)
        state.hands = [sorted(h) for h in at.hands]
        state.has_ruse = list(at.ruse)
        state.discarded_face_up = tuple(at.discarded_face_up)
        state.discarded_face_down = tuple(at.discarded_face_down)
        state.paradise_piles = [list(cards) for cards in at.paradise]
        state.scores_this_game = list(at.scores)
        state.guard_deck = list(at.guard_order)
        state.guards_revealed = at.guards_revealed
        state.shuffles = 1  # later reshuffles are new draws, not the one behind guard_order
        state.round_number = at.round_number
        state.log.append(state.guard_event())
        if at.step == 2 and at.first_escape is not None:
            state.first_escape = tuple(map(tuple, at.first_escape))
            state.log.append(Event("reveal", -1, {"step": 1, "cards": state.first_escape}))
        state.start_step(at.step)
        return state


class PlainBoomState(State):
    """One Boom match (one game, or one series in longer play), told plainly. The public
    methods are BoomState's, and give the same answers."""

    game: PlainBoomGame

    def __init__(
        self,
        game: PlainBoomGame,
        seed: int,
        game_number: int = 1,
        series_totals: Sequence[int] | None = None,
    ):
        np = game.num_players
        self.game = game
        self.seed = seed
        self.game_number = game_number
        # totals of the games of the series finished before this one
        self.totals_before: list[int] = [0] * np if series_totals is None else list(series_totals)
        self.over = False
        self.log: list[Event] = []
        # set for each game by start_game
        self.hands: list[list[int]] = [[] for _ in range(np)]  # bomb cards, sorted
        self.has_ruse = [False] * np
        self.discarded_face_up: tuple[int, ...] = ()
        self.discarded_face_down: tuple[int, ...] = ()
        self.paradise_piles: list[list[ParadiseCard]] = [[] for _ in range(np)]
        self.scores_this_game: list[int] = [0] * np
        self.guard_deck: list[int] = []
        self.guards_revealed = 0  # since the last shuffle; the last one revealed is the guard
        self.shuffles = 0  # guard shuffles drawn in this game, its deal's included
        self.reshuffled = False  # the guard deck was reshuffled for this round
        self.round_number = 0
        # set for each step by start_step
        self.step = 0
        self.to_play = [0] * np  # cards each seat plays in this step
        self.choice: list[tuple[int, ...] | None] = [()] * np  # None: still to choose
        self.first_escape: tuple[tuple[int, ...], ...] | None = None  # revealed, this round

    # ------------------------------------------------------------------ the course of a match

    def deal_game(self) -> None:
        """Deal the next game (the first, or the next of a series) from the seed."""
        game = self.game
        dealt = deal(game.num_players, game.deck, game.deal_size, self.seed, self.game_number)
        ruse = [game.ruse] * game.num_players
        self.start_game(dealt.hands, ruse, dealt.discards, dealt.guard_order)

    def start_game(
        self, hands: list[list[int]], ruse: list[bool], discards: list[int], guard_order: list[int]
    ) -> None:
        game = self.game
        np = game.num_players
        self.hands = hands
        self.has_ruse = ruse
        # the advanced game discards face up (public), the basic game face down (hidden)
        if game.advanced:
            self.discarded_face_up, self.discarded_face_down = tuple(discards), ()
        else:
            self.discarded_face_up, self.discarded_face_down = (), tuple(discards)
        self.paradise_piles = [[] for _ in range(np)]
        self.scores_this_game = [0] * np
        self.round_number = 0
        self.log.append(Event("game_start", -1, {
            "game": self.game_number, "hand_sizes": tuple(map(len, hands)),
            "discarded_face_up": self.discarded_face_up,
            "discarded_face_down": len(self.discarded_face_down), "removed": game.removed,
            "ruse": tuple(ruse),
        }))  # fmt: skip
        self.guard_deck = guard_order
        self.shuffles = 1
        self.guards_revealed = 0
        self.start_round()

    def start_round(self) -> None:
        """Step 1: reveal the next guard card, reshuffling all 8 when the deck is empty."""
        self.round_number += 1
        self.reshuffled = self.guards_revealed == NUM_GUARDS
        if self.reshuffled:
            self.guard_deck = shuffle_guards(self.seed, self.game_number, self.shuffles)
            self.shuffles += 1
            self.guards_revealed = 0
        self.guards_revealed += 1
        self.log.append(self.guard_event())
        self.first_escape = None
        self.start_step(1)

    def guard_event(self) -> Event:
        return Event("guard", -1, {
            "game": self.game_number, "round": self.round_number, "guard": self.guard(),
            "limits": GUARDS[self.guard()], "guards_left": NUM_GUARDS - self.guards_revealed,
            "reshuffled": self.reshuffled,
        })  # fmt: skip

    def guard(self) -> int:
        return self.guard_deck[self.guards_revealed - 1]

    def ruse_playable(self, seat: int) -> bool:
        """Whether the seat may play its ruse card in this step."""
        return self.game.ruse and self.step in RUSE_STEPS and self.has_ruse[seat]

    def start_step(self, step: int) -> None:
        """Steps 2 and 3: every seat chooses its cards face down, all at once."""
        asked = STEP_CARDS[self.game.num_players][step - 1]
        self.step = step
        self.to_play = [
            cards_to_play(asked, len(self.hands[seat]) + self.ruse_playable(seat))
            for seat in range(self.game.num_players)
        ]
        self.choice = [None if n else () for n in self.to_play]
        if not self.seats_to_act():
            self.end_step()

    def end_step(self) -> None:
        """Every seat has chosen: the step's cards are revealed."""
        played = cast("tuple[tuple[int, ...], ...]", tuple(self.choice))  # none is None now
        self.log.append(Event("reveal", -1, {"step": self.step, "cards": played}))
        if self.step == 1:
            self.first_escape = played
            self.start_step(2)
        else:
            assert self.first_escape is not None  # set when the first step ended
            self.resolve_round(self.first_escape, played)

    def resolve_round(self, first: tuple, second: tuple) -> None:
        """Steps 4 to 8: each colour resolves, ruse cards return, the fewest-cards bonus, and
        the game ends or the next round starts."""
        np = self.game.num_players
        played = [first[seat] + second[seat] for seat in range(np)]
        limits = GUARDS[self.guard()]
        for colour in range(NUM_COLOURS):
            cards = [
                tuple(sorted(c for c in played[seat] if c != RUSE and c // 10 == colour))
                for seat in range(np)
            ]
            taken_back, face_up = resolve_colour(colour_sums(colour, played), limits[colour])
            for seat in taken_back:
                self.hands[seat] = sorted(self.hands[seat] + list(cards[seat]))
                self.log.append(Event("take_back", seat, {
                    "colour": COLOURS[colour], "cards": cards[seat],
                }))  # fmt: skip
            for seat in range(np):
                if cards[seat] and seat not in taken_back:
                    self.escape(seat, colour, cards[seat], seat in face_up)
        for seat in range(np):
            if RUSE in played[seat]:
                self.has_ruse[seat] = True
                self.log.append(Event("ruse_return", seat, {}))
        end = self.game_end()
        if self.game.advanced and (end or FEWEST_CARDS_BONUS_EVERY_ROUND):
            fewest = min(map(len, self.hands))
            for seat in range(np):
                if len(self.hands[seat]) == fewest:
                    self.scores_this_game[seat] += FEWEST_CARDS_BONUS
                    self.log.append(Event("fewest_cards_bonus", seat, {
                        "points": FEWEST_CARDS_BONUS, "cards_left": fewest,
                    }))  # fmt: skip
        if end:
            self.end_game(end)
        else:
            self.start_round()

    def escape(self, seat: int, colour: int, cards: tuple[int, ...], face_up: bool) -> None:
        points = escape_points(cards, face_up)
        self.paradise_piles[seat] += [ParadiseCard(c, face_up) for c in cards]
        self.scores_this_game[seat] += points
        self.log.append(Event("escape", seat, {
            "colour": COLOURS[colour], "cards": cards, "face_up": face_up, "points": points,
        }))  # fmt: skip

    def game_end(self) -> str:
        """Why the game ends after this round ("" if it goes on): steps 7 and 8."""
        if min(map(len, self.hands)) <= GAME_END_HAND_SIZE:
            return HAND_SIZE_END
        if provably_stuck(self.game.num_players, self.hands, self.has_ruse):
            return STUCK_END
        if self.round_number >= MAX_GAME_ROUNDS:
            return ROUND_LIMIT_END
        return ""

    def end_game(self, end: str) -> None:
        totals = [a + b for a, b in zip(self.totals_before, self.scores_this_game)]
        self.log.append(Event("game_end", -1, {
            "game": self.game_number, "scores": tuple(self.scores_this_game),
            "series_totals": tuple(totals), "end": end, "stalemate": end != HAND_SIZE_END,
        }))  # fmt: skip
        if self.game.series:
            if max(totals) < SERIES_TARGET:
                self.totals_before = totals
                self.game_number += 1
                self.deal_game()
                return
            self.log.append(Event("series_end", -1, {
                "games": self.game_number, "totals": tuple(totals),
            }))  # fmt: skip
        self.over = True
        self.step = 0
        self.to_play = [0] * self.game.num_players
        self.choice = [()] * self.game.num_players
        self.first_escape = None

    # ------------------------------------------------------------------ the interface

    def seats_to_act(self) -> tuple[int, ...]:
        return tuple(seat for seat, chosen in enumerate(self.choice) if chosen is None)

    def is_seat(self, seat: Any) -> bool:
        return type(seat) is int and 0 <= seat < self.game.num_players

    def legal_actions(self, seat: int) -> Sequence[tuple[int, ...]]:
        """Every sorted tuple of `to_play` distinct cards from the seat's hand (and its ruse
        card in a step that allows it), in lexicographic order; () if the seat need not act."""
        if not self.is_seat(seat) or self.choice[seat] is not None:
            return ()
        pool = self.hands[seat] + ([RUSE] if self.ruse_playable(seat) else [])
        return tuple(combinations(pool, self.to_play[seat]))

    def illegal_reason(self, seat: Any, action: Any) -> str | None:
        """Why `seat` may not play `action` now, or None if it may."""
        return illegal_reason(
            self.game, self.over, self.step, self.to_play, self.choice, self.hands, self.has_ruse,
            seat, action,
        )  # fmt: skip

    def apply_action(self, seat: int, action: Any) -> None:
        reason = self.illegal_reason(seat, action)
        if reason is not None:
            raise IllegalActionError(seat, action, reason)
        for c in action:
            if c == RUSE:
                self.has_ruse[seat] = False
            else:
                self.hands[seat].remove(c)
        self.choice[seat] = action
        if not self.seats_to_act():
            self.end_step()

    def default_action(self, seat: int) -> tuple[int, ...]:
        """The lowest card ids the step asks for; the ruse card only when the seat holds too few
        bomb cards to fill the step without it."""
        if self.over or not self.is_seat(seat) or self.choice[seat] is not None:
            raise IllegalActionError(seat, None, "this seat does not act now")
        hand = self.hands[seat]
        to_play = self.to_play[seat]
        if len(hand) >= to_play:
            return tuple(hand[:to_play])
        return (*hand, RUSE)

    def is_over(self) -> bool:
        return self.over

    def final_totals(self) -> list[int]:
        return [a + b for a, b in zip(self.totals_before, self.scores_this_game)]

    def scores(self) -> tuple[int, ...]:
        return tuple(self.final_totals())

    def hand_size(self, seat: int) -> int:
        # Face-down bomb cards count until revealed, so that a hand size does not give away
        # whether the seat's face-down cards include its ruse card.
        face_down = [c for c in self.choice[seat] or () if c != RUSE]
        return len(self.hands[seat]) + len(face_down)

    def observation(self, seat: int) -> BoomObservation:
        """What `seat` sees; seat -1 is a spectator."""
        np = self.game.num_players
        if type(seat) is not int or not -1 <= seat < np:
            raise RulesError(f"there is no seat {seat!r} to observe (seats are 0..{np - 1}, or -1)")
        if seat >= 0:
            hand, has_ruse = tuple(self.hands[seat]), self.has_ruse[seat]
            to_play = self.to_play[seat] if self.choice[seat] is None else 0
        else:
            hand, has_ruse, to_play = (), False, 0
        guards_used = tuple(self.guard_deck[: self.guards_revealed])
        return BoomObservation(
            seat=seat, num_players=np, game_number=self.game_number, round=self.round_number,
            step=self.step, guard=self.guard(), guard_limits=GUARDS[self.guard()],
            guards_left=NUM_GUARDS - len(guards_used), guards_used=guards_used,
            to_play=to_play, hand=hand, has_ruse=has_ruse,
            hand_sizes=tuple(self.hand_size(s) for s in range(np)),
            acted=tuple(bool(chosen) for chosen in self.choice),
            revealed=self.first_escape or ((),) * np,
            paradise=tuple(map(tuple, self.paradise_piles)), discarded=self.discarded_face_up,
            scores=tuple(self.scores_this_game),
            series_totals=tuple(self.final_totals() if self.over else self.totals_before),
        )  # fmt: skip

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self.log)

    def clone(self) -> "PlainBoomState":
        return copy.deepcopy(self, {id(self.game): self.game})

    # ------------------------------------------------------------------ hidden information

    def hand(self, seat: int) -> tuple[int, ...]:
        return tuple(self.hands[seat])

    def pending_choice(self, seat: int) -> tuple[int, ...] | None:
        return self.choice[seat]

    def hidden_discards(self) -> tuple[int, ...]:
        return self.discarded_face_down

    def paradise(self, seat: int) -> tuple[ParadiseCard, ...]:
        return tuple(self.paradise_piles[seat])

    def game_scores(self) -> tuple[int, ...]:
        """The scores of the game in progress (or of the last game, once over)."""
        return tuple(self.scores_this_game)

    def guard_order(self) -> tuple[int, ...]:
        """The current guard shuffle, in reveal order."""
        return tuple(self.guard_deck)
