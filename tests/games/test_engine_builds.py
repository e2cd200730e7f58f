"""The built engines against the plain ones (arena/games/engines.py): the mypyc build of
Balloon's engine (scripts/build_engines.py) and its native core (balloon/_native.c through
balloon/native.py): random matches of every player count played on each and on the plain engine
side by side, every event, observation, legal action list, feature array, score and state
snapshot equal after every action, illegal actions and observers refused with the same reason,
clones and sampled states alike; and the choice of build (ARENA_ENGINE, the log line, a stale
build refused).

tests/games runs against the engines the registry hands out (the native core where built);
scripts/test runs Balloon's own tests once more with ARENA_ENGINE=plain."""

from __future__ import annotations

import dataclasses
import importlib
import random
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest

from arena.games import engines

PLAIN = "arena.games.balloon.engine"


def built(kind: str) -> tuple[ModuleType, ModuleType]:
    """(plain, built) Balloon engine modules, the built one "compiled" (mypyc) or "native";
    skips where it is not built."""
    plain = importlib.import_module(PLAIN)
    if kind == "native":
        native, why_not = engines._native(PLAIN)
        if native is None:
            pytest.skip(f"the native core is not built here ({why_not})")
        return plain, native
    try:
        compiled = importlib.import_module(engines.compiled_name(PLAIN))
    except ImportError:
        pytest.skip("the compiled engines are not built here (scripts/build_engines.py)")
    with open(plain.__file__, "rb") as source:
        if compiled.SOURCE_DIGEST != engines.source_digest(source.read()):
            pytest.fail("the compiled Balloon engine is older than engine.py: run scripts/setup")
    assert compiled.BalloonState is not plain.BalloonState
    return plain, compiled


@pytest.fixture(scope="module")
def builds() -> tuple[ModuleType, ModuleType]:
    """(plain, compiled) Balloon engine modules; skips where the compiled one is not built."""
    return built("compiled")


@pytest.fixture(scope="module", params=["compiled", "native"])
def each_build(request) -> tuple[ModuleType, ModuleType]:
    """(plain, built) for each build of Balloon's engine that is built here."""
    return built(request.param)


def values(x: Any) -> Any:
    """`x` as plain values, the classes of either build dropped (a compiled dataclass is never
    equal to its plain twin)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__, *(values(getattr(x, f.name)) for f in dataclasses.fields(x)))
    if isinstance(x, (tuple, list)):
        return type(x)(values(v) for v in x)
    return x


def refusal(state: Any, seat: Any, action: Any) -> str:
    before = state.snapshot()
    with pytest.raises(Exception) as refused:
        state.apply_action(seat, action)
    assert state.snapshot() == before
    return f"{type(refused.value).__name__}: {refused.value}"


def check_alike(plain: Any, compiled: Any, n: int) -> None:
    assert plain.snapshot() == compiled.snapshot()
    assert plain.seats_to_act() == compiled.seats_to_act()
    assert plain.is_over() == compiled.is_over()
    assert plain.scores() == compiled.scores() and plain.ranks() == compiled.ranks()
    assert plain.events == compiled.events
    for seat in range(-1, n):
        assert values(plain.observation(seat)) == values(compiled.observation(seat))
    for seat in range(n):
        assert plain.legal_actions(seat) == compiled.legal_actions(seat)
        assert plain.feature_values(seat) == compiled.feature_values(seat)
        assert plain.feature_tail(seat) == compiled.feature_tail(seat)
        assert plain.hand(seat) == compiled.hand(seat)
    assert (plain.round, plain.turn, plain.size) == (compiled.round, compiled.turn, compiled.size)


def refused_observer(state: Any, seat: Any) -> str:
    with pytest.raises(Exception) as refused:
        state.observation(seat)
    return f"{type(refused.value).__name__}: {refused.value}"


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_each_build_and_plain_play_random_matches_alike(each_build, players):
    plain_engine, compiled_engine = each_build
    rng = random.Random(players)
    plain_game = plain_engine.BalloonGame(players)
    compiled_game = compiled_engine.BalloonGame(players)
    for seed in range(2):
        plain, compiled = plain_game.new_match(seed), compiled_game.new_match(seed)
        check_alike(plain, compiled, players)
        while not plain.is_over():
            (seat,) = plain.seats_to_act()
            legal = plain.legal_actions(seat)
            assert plain.default_action(seat) == compiled.default_action(seat)
            # a wrong seat, a seat that only compares equal, a card not in the hand, junk
            for bad_seat, bad_action in [
                ((seat + 1) % players, legal[0]), (True, legal[0]), (float(seat), legal[0]),
                (seat, next(c for c in range(50) if c not in legal)), (seat, None), (seat, 1.0),
                (seat, 2**70), (seat, -1), (2**70, legal[0]), (-1, legal[0]),
            ]:  # fmt: skip
                assert refusal(plain, bad_seat, bad_action) == refusal(
                    compiled, bad_seat, bad_action
                )
            for observer in (players, -2, True, 0.0, None):
                assert refused_observer(plain, observer) == refused_observer(compiled, observer)
            if rng.random() < 0.1:  # a sampled state, from the same draws, and a clone
                observation = rng.choice(range(players))
                draw = rng.random()
                p = plain_engine.sample_state(plain.observation(observation), random.Random(draw))
                c = compiled_engine.sample_state(
                    compiled.observation(observation), random.Random(draw)
                )
                check_alike(p, c, players)
                p, c = plain.clone(), compiled.clone()
                assert type(c) is compiled_engine.BalloonState
                check_alike(p, c, players)
                # a clone goes its own way: an action on it leaves the original as it was
                before = compiled.snapshot()
                (to_act,) = c.seats_to_act()
                c.apply_action(to_act, compiled_engine.DROP_OUT)
                assert compiled.snapshot() == before and c.snapshot() != before
            action = rng.choice(legal)
            plain.apply_action(seat, action)
            compiled.apply_action(seat, action)
            check_alike(plain, compiled, players)
        assert plain_engine.recount_scores(plain.events) == compiled.scores()
        assert refusal(plain, 0, 50) == refusal(compiled, 0, 50)  # the match is over


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
        text=True, check=False, timeout=60,
    )  # fmt: skip


WHICH = (
    "import logging; logging.basicConfig(level=logging.INFO, format='%(message)s')\n"
    "from arena.games import game_class; print(game_class('balloon').__module__)"
)


def test_arena_engine_plain_forces_the_plain_engine_and_says_so():
    done = run_python(WHICH, {"ARENA_ENGINE": "plain"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == PLAIN
    assert done.stderr.splitlines() == [f"{PLAIN}: the plain Python engine (ARENA_ENGINE=plain)"]


def test_the_registry_hands_out_the_native_core_where_built_and_mypyc_when_asked(builds):
    built("native")
    done = run_python(WHICH, {"ARENA_ENGINE": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "arena.games.balloon.native"
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{PLAIN}: the native core (") and "native.py" in line
    done = run_python(WHICH, {"ARENA_ENGINE": "compiled"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == engines.compiled_name(PLAIN)
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{PLAIN}: the compiled engine (") and "_engine_mypyc" in line


def test_a_bad_arena_engine_value_is_refused_saying_what_to_set():
    done = run_python(WHICH, {"ARENA_ENGINE": "fast"})
    assert done.returncode != 0
    assert "ARENA_ENGINE='fast' is not one of auto, plain, compiled, native" in done.stderr


def test_a_build_older_than_its_source_is_not_run(monkeypatch, caplog, builds):
    """A compiled engine or native core whose source has changed since it was built: the plain
    engine runs, with a warning saying to rebuild; ARENA_ENGINE=compiled or native refuses to
    start."""
    monkeypatch.setattr(engines, "source_digest", lambda source: "another source")
    monkeypatch.delenv("ARENA_ENGINE", raising=False)
    with caplog.at_level("INFO", logger=engines.__name__):
        assert engines.load_engine(PLAIN) is builds[0]
    assert "older than its source" in caplog.text and "scripts/setup" in caplog.text
    monkeypatch.setenv("ARENA_ENGINE", "compiled")
    with pytest.raises(engines.ConfigError, match="another version of the source"):
        engines.load_engine(PLAIN)
    monkeypatch.setenv("ARENA_ENGINE", "native")
    with pytest.raises(engines.ConfigError, match="native core was built from another version"):
        engines.load_engine(PLAIN)


def test_a_clone_shares_and_copies_exactly_the_declared_fields(builds):
    """BalloonState.clone is written out field by field (compiled, that is a native copy): it
    shares every _SHARED_FIELDS field, copies every _COPIED_FIELDS one, and those lists are
    every field there is (the plain class's __slots__)."""
    plain_engine = builds[0]
    cls = plain_engine.BalloonState
    assert sorted(cls.__slots__) == sorted((*cls._SHARED_FIELDS, *cls._COPIED_FIELDS))
    for engine in builds:
        state = engine.BalloonGame(3).new_match(5)
        state.apply_action(state.seats_to_act()[0], engine.DROP_OUT)
        assert state.events  # (fills the events cache, which a clone copies too)
        clone = state.clone()
        assert clone.snapshot() == state.snapshot()
        for name in cls._SHARED_FIELDS:  # (compiled, a tuple field is rebuilt when read)
            assert getattr(clone, name) == getattr(state, name), name
            assert engine is not plain_engine or getattr(clone, name) is getattr(state, name)
        for name in cls._COPIED_FIELDS:
            assert getattr(clone, name) == getattr(state, name), name
            assert getattr(clone, name) is not getattr(state, name), name
