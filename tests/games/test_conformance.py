"""The conformance test every registered game passes, through the public game interface only
(arena.games, and each game's kit: its `sample_state` is its determinizer): for every variant
(player count and options) and every engine version the game keeps, random matches played to
the end from several seeds, with the invariants of the State interface checked at every
decision, and the match replayed both from (configuration, engine version, seed, actions) and
through a replay file (arena/replay.py). A new game is covered once it is registered (the game
the tests register themselves, tests/games/highcard, is registered by tests/games/conftest.py)."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from arena import replay
from arena.games import (
    Game,
    IllegalActionError,
    RulesError,
    State,
    game_class,
    game_from_config,
    game_kit,
    game_names,
    ranks_from_scores,
)
from arena.results import MatchResult, MoveRecord

SEEDS = (0, 1, 2)


def variants() -> list[tuple[str, str, int, dict[str, Any]]]:
    """(game, engine version, players, options): every player count and every combination of
    option values of every registered game, at its current engine version; and, for each
    earlier engine version a game still plays, its default options at every player count."""
    out = []
    for name in game_names():
        cls = game_class(name)
        keys = list(cls.options_spec)
        for version in sorted(cls.engine_versions()):
            current = version == cls.engine_version
            allowed = cls.options_spec.values()
            # an earlier version: the default options (the first allowed values)
            combos = list(itertools.product(*allowed) if current else [[a[0] for a in allowed]])
            for players in range(cls.min_players, cls.max_players + 1):
                for values in combos:
                    out.append((name, version, players, dict(zip(keys, values))))
    return out


def variant_id(variant) -> str:
    name, version, players, options = variant
    on = "+".join(k for k, v in options.items() if v)
    return f"{name}-v{version}-{players}p" + (f"-{on}" if on else "")


def build(name: str, version: str, players: int, options: dict[str, Any]) -> Game:
    config = {"game": name, "num_players": players, "options": options}
    return game_from_config(config, version)


def view(state: State) -> tuple:
    """Everything the public interface tells about a state, for comparing two."""
    players = state.game.num_players
    return (
        state.is_over(),
        state.seats_to_act(),
        state.scores(),
        tuple(state.events),
        state.public_observation(),
        tuple(state.observation(s) for s in range(players)),
        tuple(tuple(state.legal_actions(s)) for s in range(players)),
    )


def check_decision(state: State, rng: random.Random, name: str) -> None:
    """The invariants of a state in which seats must decide."""
    players = state.game.num_players
    to_act = state.seats_to_act()
    assert to_act, "a match that is not over has seats to act"
    assert len(set(to_act)) == len(to_act) and all(0 <= s < players for s in to_act), to_act
    for seat in range(players):
        legal = state.legal_actions(seat)
        if seat in to_act:
            assert len(legal) > 0, f"seat {seat} must act but has no legal action"
            assert state.default_action(seat) in legal, seat
            hash(legal[0])  # actions are hashable values
        else:
            assert len(legal) == 0, f"seat {seat} does not act but has legal actions"
    # An illegal action is refused and changes nothing.
    before = view(state)
    waiting = [s for s in range(players) if s not in to_act]
    for seat, action in [
        (to_act[0], "not an action"),
        *[(s, state.legal_actions(to_act[0])[0]) for s in waiting[:1]],
    ]:
        with pytest.raises(IllegalActionError):
            state.apply_action(seat, action)
    assert view(state) == before

    # A seat's observation holds only what it may see: a state drawn from it, the hidden
    # cards of the other seats drawn afresh, shows that seat the same observation.
    seat = rng.choice(to_act)
    seen = state.observation(seat)
    sampled = game_kit(name).sample_state(seen, random.Random(rng.random()))
    assert sampled.observation(seat) == seen

    # In a simultaneous step, what a seat chose face down shows nowhere until the step resolves.
    if len(to_act) > 2:  # another seat still acts after this one: the step does not resolve
        chooser = to_act[0]
        legal = state.legal_actions(chooser)
        if len(legal) > 1:
            one, other = state.clone(), state.clone()
            one.apply_action(chooser, legal[0])
            other.apply_action(chooser, legal[-1])
            assert one.public_observation() == other.public_observation()
            assert tuple(one.events) == tuple(other.events)
            for watcher in range(players):
                if watcher != chooser:
                    assert one.observation(watcher) == other.observation(watcher), watcher


def check_over(state: State) -> None:
    players = state.game.num_players
    assert state.seats_to_act() == ()
    assert all(len(state.legal_actions(s)) == 0 for s in range(players))
    scores = state.scores()
    assert len(scores) == players and all(type(x) is int for x in scores), scores
    assert state.ranks() == ranks_from_scores(scores)
    assert min(state.ranks()) == 0
    assert state.events, "a finished match has an event log"


def play(game: Game, seed: int, rng: random.Random) -> tuple[State, list[tuple[int, Any]]]:
    """A random match checked at every decision; returns the final state and its moves."""
    name = game.name
    state = game.new_match(seed)
    moves: list[tuple[int, Any]] = []
    log = tuple(state.events)
    forked = False
    while not state.is_over():
        check_decision(state, rng, name)
        for seat in state.seats_to_act():
            if not forked and len(moves) >= 5:
                check_clone_is_independent(state, rng)
                forked = True
            action = rng.choice(state.legal_actions(seat))
            state.apply_action(seat, action)
            moves.append((seat, action))
            events = tuple(state.events)
            assert events[: len(log)] == log, "the event log only grows"
            log = events
            if state.is_over():
                break
    check_over(state)
    return state, moves


def check_clone_is_independent(state: State, rng: random.Random) -> None:
    before = view(state)
    copy = state.clone()
    assert view(copy) == before
    while not copy.is_over():  # the copy plays on to the end; the original does not move
        seat = copy.seats_to_act()[0]
        copy.apply_action(seat, rng.choice(copy.legal_actions(seat)))
    assert view(state) == before


@pytest.mark.parametrize("variant", variants(), ids=variant_id)
def test_random_matches_keep_the_invariants_and_replay(variant):
    name, version, players, options = variant
    game = build(*variant)
    assert game.config() == {"game": name, "num_players": players, "options": options}
    for seed in SEEDS:
        state, moves = play(game, seed, random.Random(seed))

        # Replayed from (configuration, engine version, seed, actions): the same match.
        again = build(*variant).new_match(seed)
        for seat, action in moves:
            again.apply_action(seat, action)
        assert view(again) == view(state)

        # And through a replay file, its actions encoded as JSON.
        result = MatchResult(
            match_id=f"conformance-{seed}", config=game.config(), seed=seed,
            seat_names=tuple(f"bot{s}" for s in range(players)), scores=state.scores(),
            ranks=state.ranks(), faults=(), engine_version=version,
            moves=tuple(MoveRecord(seat, _jsonable(action), 0.0) for seat, action in moves),
        )  # fmt: skip
        doc = replay.check(json.loads(json.dumps(replay.to_dict(result, with_views=False))))
        rerun = replay.verify(doc)
        assert view(rerun) == view(state)


def _jsonable(action: Any) -> Any:
    return list(action) if isinstance(action, tuple) else action


def test_every_game_refuses_a_configuration_it_does_not_allow():
    for name in game_names():
        cls = game_class(name)
        for players in (cls.min_players - 1, cls.max_players + 1):
            with pytest.raises(RulesError, match="played by"):
                cls(players)
        with pytest.raises(RulesError, match="no option"):
            cls(cls.min_players, no_such_option=True)
