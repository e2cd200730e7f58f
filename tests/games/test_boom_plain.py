"""The fast Boom engine against the plain one, its specification: random matches of every variant
played through both side by side, every public method of the two states compared after every
action (legal and illegal ones, clones, determinizations, and games built from hands)."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from itertools import product

import pytest

from arena.games import IllegalActionError, boom
from arena.games.boom import RUSE, BoomGame, sample_state
from arena.games.boom.plain import (
    DEAL_DRAW,
    MAX_GAME_ROUNDS,
    PlainBoomGame,
    RoundPosition,
    draw_digits,
)

from .support import boom_small_hands

VARIANTS = [
    (players, {"advanced": advanced, "ruse": ruse, "series": series})
    for players, advanced, ruse, series in product((2, 3, 4, 5), *[(False, True)] * 3)
]
# Matches per variant from deals: 8 of one game, 3 of a series (a series is some 5 to 10 games):
# 176 in all, and the matches built below; about 10 s.
MATCHES_PER_VARIANT = {False: 8, True: 3}


def outcome(call):
    """What a call gives: its value, or the reason it is refused."""
    try:
        return "value", call()
    except IllegalActionError as refused:
        return "refused", refused.reason


def assert_same(fast, plain, where) -> None:
    """Every public method of the State interface (and Boom's inspection methods) agrees."""
    players = plain.game.num_players
    assert fast.is_over() == plain.is_over(), where
    assert fast.seats_to_act() == plain.seats_to_act(), where
    assert fast.scores() == plain.scores(), where
    assert fast.ranks() == plain.ranks(), where
    assert fast.game_scores() == plain.game_scores(), where
    assert fast.guard_order() == plain.guard_order(), where
    assert fast.hidden_discards() == plain.hidden_discards(), where
    assert fast.events == plain.events, where
    assert fast.public_observation() == plain.public_observation(), where
    for seat in range(players):
        assert fast.observation(seat) == plain.observation(seat), (where, seat)
    for seat in range(players):
        assert tuple(fast.legal_actions(seat)) == plain.legal_actions(seat), (where, seat)
        assert outcome(lambda seat=seat: fast.default_action(seat)) == outcome(
            lambda seat=seat: plain.default_action(seat)
        ), (where, seat)
        assert fast.hand(seat) == plain.hand(seat), (where, seat)
        assert fast.pending_choice(seat) == plain.pending_choice(seat), (where, seat)
        assert fast.paradise(seat) == plain.paradise(seat), (where, seat)
    for seat in (-1, players, True):  # no such seat
        assert tuple(fast.legal_actions(seat)) == plain.legal_actions(seat) == (), (where, seat)


def wrong_actions(state, seat, rng) -> list:
    """Actions a careless bot might send: most are illegal, each for its own reason."""
    hand = list(state.hand(seat))
    outside = [c for c in range(50) if c not in hand]
    legal = list(state.legal_actions(seat)) or [(0,)]
    action = rng.choice(legal)
    return [
        tuple(reversed(action)),  # not increasing (or legal, for one card)
        action + action[:1],  # one card too many
        action[:-1],  # one card too few
        (*action[:-1], rng.choice(outside)) if outside else action,  # a card not in hand
        (*action[:-1], RUSE),  # a ruse card: legal only in the second escape, when held
        (*action[:-1], 51),  # not a card
        list(action),  # not a tuple
        (*action[:-1], True),  # not an int
        action[:1] * len(action),  # a card twice
    ]


def play_in_step(fast, plain, rng, where, seen: Counter) -> None:
    """One seat of those to act (in a random order) plays: at random a legal action, its
    default action, or first some wrong ones, which both engines must refuse alike."""
    seat = rng.choice(plain.seats_to_act())
    if rng.random() < 0.1:
        for wrong in wrong_actions(plain, seat, rng):
            reason = plain.illegal_reason(seat, wrong)
            if reason is None:
                continue  # legal after all (one card "reversed", a ruse card held): played below
            for state in (fast, plain):
                with pytest.raises(IllegalActionError) as refused:
                    state.apply_action(seat, wrong)
                assert refused.value.reason == reason, (where, wrong)
            seen["refused"] += 1
            assert_same(fast, plain, (where, wrong))
    if rng.random() < 0.1:
        action = plain.default_action(seat)
        seen["default"] += 1
    else:
        action = rng.choice(fast.legal_actions(seat))
    seen["ruse played"] += RUSE in action
    fast.apply_action(seat, action)
    plain.apply_action(seat, action)


def play_side_by_side(fast, plain, rng, where, seen: Counter, sample: bool = True) -> None:
    """Random play to the end through both engines, comparing them after every action. Once a
    match, the two are swapped for their clones; once, for states sampled alike from one seat's
    observation (sample_state with equal generators), played on to the end beside the match."""
    assert_same(fast, plain, where)
    clone_at = rng.randrange(20)
    sample_at = rng.randrange(40) if sample else -1
    moves = 0
    while not plain.is_over():
        play_in_step(fast, plain, rng, (where, moves), seen)
        moves += 1
        assert_same(fast, plain, (where, moves))
        if moves == clone_at:
            fast, plain = fast.clone(), plain.clone()
            assert_same(fast, plain, (where, moves, "clone"))
        if moves == sample_at and not plain.is_over():
            seat = rng.randrange(-1, plain.game.num_players)
            seed = rng.randrange(2**32)
            events = plain.events
            sampled_fast = sample_state(
                fast.observation(seat), random.Random(seed), fast.game, events
            )
            sampled_plain = sample_state(
                plain.observation(seat), random.Random(seed), plain.game, events
            )
            assert type(sampled_plain).__name__ == "PlainBoomState"
            play_side_by_side(
                sampled_fast, sampled_plain, rng, (where, moves, "sampled"), seen, sample=False
            )
            seen["sampled"] += 1
        assert moves < 100_000, "the match did not end"
    for event in plain.events:
        seen[event.kind] += 1
        if event.kind == "game_end":
            seen["end " + event.data["end"]] += 1
        if event.kind == "guard" and event.data["reshuffled"]:
            seen["reshuffle"] += 1


def games(players, options):
    return BoomGame(players, **options), PlainBoomGame(players, **options)


@pytest.mark.parametrize("players, options", VARIANTS, ids=lambda v: str(v))
def test_fast_and_plain_play_random_matches_alike(players, options):
    fast_game, plain_game = games(players, options)
    seen: Counter = Counter()
    matches = MATCHES_PER_VARIANT[options["series"]]
    for seed in range(matches):
        where = (players, options, seed)
        play_side_by_side(
            fast_game.new_match(seed), plain_game.new_match(seed), random.Random(seed), where, seen
        )
    # the matches reached what the variant has, so the comparison above was not idle
    assert seen["take_back"] and seen["escape"] and seen["end hand_size"] and seen["sampled"]
    assert seen["refused"] and seen["default"], seen
    assert bool(seen["ruse played"]) == options["ruse"], seen
    assert bool(seen["fewest_cards_bonus"]) == options["advanced"], seen
    assert (seen["game_start"] > matches) == options["series"], seen


def test_fast_and_plain_play_games_from_small_hands_alike():
    # state_from_hands, with hands that often leave a game provably stuck
    seen: Counter = Counter()
    for seed in range(90):
        rng = random.Random(seed)
        kind = seed % 3 + 1
        players = 2 if kind < 3 else rng.choice([2, 3, 4, 5])
        advanced = kind == 3 and rng.random() < 0.3  # kinds 1 and 2 use cards it removes
        options = {"advanced": advanced, "ruse": rng.random() < 0.4, "series": False}
        fast_game, plain_game = games(players, options)
        hands = boom_small_hands(rng, plain_game.deck, players, kind)
        ruse = [options["ruse"] and rng.random() < 0.6 for _ in range(players)]
        guards = rng.sample(range(8), rng.randint(0, 3))
        fast = fast_game.state_from_hands(hands, guards, ruse=ruse, seed=seed)
        plain = plain_game.state_from_hands(hands, guards, ruse=ruse, seed=seed)
        play_side_by_side(fast, plain, rng, ("hands", seed), seen)
    assert seen["end stuck"] >= 10 and seen["end hand_size"] >= 10 and seen["reshuffle"], seen


def test_fast_and_plain_end_a_game_at_the_round_limit_alike():
    # a game under way near MAX_GAME_ROUNDS (state_in_round): it ends at the limit, scored
    seen: Counter = Counter()
    for seed in range(12):
        rng = random.Random(seed)
        players = 2 + seed % 4
        options = {"advanced": seed % 2 == 1, "ruse": seed % 3 == 0, "series": seed % 5 == 0}
        fast_game, plain_game = games(players, options)
        deck = list(plain_game.deck)
        rng.shuffle(deck)
        hands = [sorted(deck[i * 8 : i * 8 + 8]) for i in range(players)]
        order = rng.sample(range(8), 8)
        position = RoundPosition(
            game_number=1, round_number=MAX_GAME_ROUNDS, step=1, guard_order=order,
            guards_revealed=3, hands=hands, ruse=[options["ruse"]] * players,
            discarded_face_up=deck[8 * players :] if options["advanced"] else (),
            discarded_face_down=() if options["advanced"] else deck[8 * players :],
            paradise=[()] * players, scores=[3] * players, series_totals=[10] * players,
        )  # fmt: skip
        fast = fast_game.state_in_round(seed, position)
        plain = plain_game.state_in_round(seed, position)
        play_side_by_side(fast, plain, rng, ("round limit", seed), seen, sample=False)
    assert seen["end round_limit"] >= 8, seen


def test_fast_and_plain_draw_the_same_digits_also_when_a_draw_is_made_again():
    # The deals above rarely need a second draw (under 1%); here many draws, some of them made
    # again, through the fast engine's drawing code and the plain one.
    radices = (*range(50, 12, -1), *range(8, 1, -1))  # a 4-player basic deal
    plan = boom._digit_plan(radices)
    redrawn = 0
    for seed in range(1500):
        plain = draw_digits(seed, DEAL_DRAW, 1, 0, radices)
        assert list(boom._draw_digits(plan, seed, boom._DEAL_DRAW, 1)) == plain, seed
        # the first try: the values of the first two digests (counters 0 and 1)
        first = b"".join(
            hashlib.blake2b(f"{seed} {DEAL_DRAW} 1 0 {counter}".encode()).digest()
            for counter in (0, 1)
        )
        values = [int.from_bytes(first[i : i + 2], "little") for i in range(0, 2 * len(radices), 2)]
        redrawn += plain != [v % r for v, r in zip(values, radices, strict=True)]
    assert 5 <= redrawn <= 50, redrawn  # about 0.84% of 1,500
