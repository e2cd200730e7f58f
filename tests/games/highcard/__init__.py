"""High card: a small game only the tests play, one package (engine, determinizer, wire codec,
SDK module, a bot) registered by one line (tests/games/conftest.py in the test process;
ARENA_GAMES=tests.games.highcard for the `arena` commands a test starts). It shows that a game
is one package plus its proto messages (HighCardObservation, HighCardAction): no edit anywhere
else in Arena (docs/architecture.md, "A game is one package").

Rules: a deck of ten cards, values 1..10 (card id c has value c + 1). Each seat is dealt two.
Two rounds; in a round each seat in turn (round 1 from seat 0, round 2 from seat 1) plays one
card of its hand face up; the highest card takes the round: one point. An action is the id of
the card played; the default action plays the lowest card.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Sequence

from arena.games import Event, Game, GameKit, IllegalActionError, RulesError, State

DECK = 10
COLOURS = ("black", "red")
ROUNDS = 2


def card_value(card: int) -> int:
    return card + 1


def card_colour(card: int) -> str:
    return COLOURS[card % 2]


@dataclass(frozen=True, slots=True)
class HighCardObservation:
    seat: int  # -1: a spectator, with an empty hand
    num_players: int
    round: int
    to_act: int  # -1 when the match is over
    hand: tuple[int, ...]  # own cards, sorted
    played: tuple[int, ...]  # per seat, the card it played this round, -1: none yet
    scores: tuple[int, ...]


class HighCardGame(Game):
    name = "highcard"
    min_players = 2
    max_players = 4
    engine_version = "1"

    def new_match(self, seed: int) -> HighCardState:
        deck = list(range(DECK))
        random.Random(seed).shuffle(deck)
        n = self.num_players
        hands = [sorted(deck[2 * s : 2 * s + 2]) for s in range(n)]
        return HighCardState(self, hands, 1, [-1] * n, [0] * n, [Event("deal")])


class HighCardState(State):
    def __init__(self, game, hands, round_, played, scores, events) -> None:
        self.game = game
        self.hands: list[list[int]] = hands
        self.round: int = round_
        self.played: list[int] = played
        self._scores: list[int] = scores
        self._events: list[Event] = events

    def _to_act(self) -> int:
        if self.is_over():
            return -1
        n = self.game.num_players
        start = (self.round - 1) % n
        for k in range(n):
            seat = (start + k) % n
            if self.played[seat] < 0:
                return seat
        return -1

    def is_over(self) -> bool:
        return self.round == ROUNDS and all(c >= 0 for c in self.played)

    def seats_to_act(self) -> tuple[int, ...]:
        seat = self._to_act()
        return () if seat < 0 else (seat,)

    def legal_actions(self, seat: int) -> Sequence[int]:
        return tuple(self.hands[seat]) if seat == self._to_act() else ()

    def default_action(self, seat: int) -> int:
        return min(self.hands[seat])

    def apply_action(self, seat: int, action: Any) -> None:
        if seat != self._to_act():
            raise IllegalActionError(seat, action, "it is not this seat's turn")
        if type(action) is not int or action not in self.hands[seat]:
            raise IllegalActionError(seat, action, "it is not a card of the seat's hand")
        self.hands[seat].remove(action)
        self.played[seat] = action
        self._events.append(Event("play", seat, {"card": action}))
        if all(c >= 0 for c in self.played):
            best = max(self.played)
            winner = self.played.index(best)
            self._scores[winner] += 1
            self._events.append(Event("round_end", winner, {"round": self.round, "card": best}))
            if self.round < ROUNDS:
                self.round += 1
                self.played = [-1] * self.game.num_players

    def scores(self) -> tuple[int, ...]:
        return tuple(self._scores)

    def observation(self, seat: int) -> HighCardObservation:
        n = self.game.num_players
        if not -1 <= seat < n:
            raise RulesError.no_seat(seat, n, "observe")
        return HighCardObservation(
            seat=seat,
            num_players=n,
            round=self.round,
            to_act=self._to_act(),
            hand=tuple(self.hands[seat]) if seat >= 0 else (),
            played=tuple(self.played),
            scores=tuple(self._scores),
        )

    @property
    def events(self) -> Sequence[Event]:
        return tuple(self._events)

    def clone(self) -> HighCardState:
        return HighCardState(
            self.game,
            [list(h) for h in self.hands],
            self.round,
            list(self.played),
            list(self._scores),
            list(self._events),
        )


def sample_state(observation: HighCardObservation, rng: random.Random) -> HighCardState:
    """A full state that shows the observing seat `observation`: the other seats' hands drawn
    from the cards it has not seen."""
    obs = observation
    n = obs.num_players
    seen = set(obs.hand) | {c for c in obs.played if c >= 0}
    unseen = [c for c in range(DECK) if c not in seen]
    rng.shuffle(unseen)
    hands = []
    for s in range(n):
        if s == obs.seat:
            hands.append(list(obs.hand))
            continue
        size = ROUNDS - obs.round + (0 if obs.played[s] >= 0 else 1)
        hands.append(sorted(unseen[:size]))
        del unseen[:size]
    game = HighCardGame(n)
    return HighCardState(
        game, hands, obs.round, list(obs.played), list(obs.scores), [Event("sampled")]
    )


KIT = GameKit(
    title="High card (the tests' game)",
    game=HighCardGame,
    sample_state=sample_state,
    codec="tests.games.highcard.wire",
)
