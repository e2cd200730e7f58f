"""The built engines against the plain ones (arena/games/engines.py): the mypyc build of
Balloon's engine (scripts/build_engines.py) and its native core (balloon/_native.c through
balloon/native.py): random matches of every player count played on each and on the plain engine
side by side, every event, observation, legal action list, feature array, score and state
snapshot equal after every action, illegal actions and observers refused with the same reason,
clones and sampled states alike; and the choice of build (ARENA_ENGINE, the log line, a stale
build refused). Boom's native core (boom/_native.c through boom/native.py) the same way against
both Python engines (the fast one, arena.games.boom, and the plain one, boom/plain.py), on every
Boom variant of tests/variants.py.

tests/games runs against the engines the registry hands out (the native core where built);
scripts/test runs Balloon's and Boom's own tests once more with ARENA_ENGINE=plain."""

from __future__ import annotations

import array
import dataclasses
import importlib
import os
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arena.games import engines
from tests.variants import VARIANTS, variant_id

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


DEAL_SEEDS = (0, 1, -1, 7, 2**31, 2**32 - 1, 2**32, -(2**32), 2**63 - 1, -(2**63) + 1)
# |seed| of 2**63 and more: dealt through random.Random itself
BIG_SEEDS = (-(2**63), 2**63, 2**64 - 1, 2**64, 2**100 + 5, -(2**70))


def test_balloon_native_deals_every_seed_as_random_random_does():
    """The native core draws random.Random(seed).random() in C (its own Mersenne Twister, for
    seeds of magnitude below 2**63; larger ones through random.Random): every deck of every
    round as the plain engine deals it, and new_match's state (dealt and started in one call)
    alike."""
    plain_engine, native_engine = built("native")
    for n in (2, 3, 4, 5):
        plain_game, native_game = plain_engine.BalloonGame(n), native_engine.BalloonGame(n)
        for seed in (*DEAL_SEEDS, *BIG_SEEDS, *range(100, 140)):
            decks = plain_game.match_decks(seed)
            assert native_game.match_decks(seed) == decks
            direct = native_engine.seeded_decks(seed, n)
            assert direct == (None if seed in BIG_SEEDS else decks)
            native = native_game.new_match(seed)
            assert type(native) is native_engine.BalloonState
            assert native.snapshot() == plain_game.new_match(seed).snapshot()
    # a seed that is not an int is refused as the plain engine refuses it
    for seed in (True, 1.0, "1", None):
        with pytest.raises(Exception) as plain_refused:
            plain_engine.BalloonGame(4).new_match(seed)
        with pytest.raises(type(plain_refused.value), match=str(plain_refused.value)):
            native_engine.BalloonGame(4).new_match(seed)


def test_balloon_native_keeps_a_plain_log_and_refuses_a_play_it_cannot_hold():
    """Balloon's native core holds plays and drop-outs as C records: a plain state's log comes
    back from it as it went in (entries of every kind, a sampled state's start among them), and
    a log whose play does not fit a record is refused, saying which entry."""
    plain_engine, native_engine = built("native")
    game = plain_engine.BalloonGame(4)
    state = plain_engine.sample_state(game.new_match(3).observation(0), random.Random(5))
    rng = random.Random(9)
    for _ in range(40):
        seat = state.seats_to_act()[0]
        state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    native = native_engine.BalloonState.of(native_engine.BalloonGame(4), state)
    assert native._log == state._log and native.events == state.events
    kinds = {len(entry) for entry in state._log}
    assert {3, 4, 5, 7, 10} <= kinds, kinds  # sampled start, play, drop-out, round start, end
    state._log.append((0, 2**70, 1, 0))
    with pytest.raises(ValueError, match=r"_log: entry \d+ is no play of small ints"):
        native_engine.BalloonState.of(native_engine.BalloonGame(4), state)


@pytest.mark.parametrize("game", ["balloon", "boom"])
def test_native_observations_recycled_only_when_nobody_holds_them(game):
    """A native core hands its last observation out again, with new values, once nothing else
    holds it (and the tuple of its hand, once nothing else holds that; Balloon's table and
    legal actions the same): an observation, a hand, a table or legal actions that a caller
    keeps never change, and every observation equals the plain engine's."""
    if game == "balloon":
        plain_engine, native_engine = built("native")
        plain_game, native_game = plain_engine.BalloonGame(4), native_engine.BalloonGame(4)
    else:
        from arena.games.boom.plain import PlainBoomGame

        native_game, plain_game = boom_native().BoomGame(4), PlainBoomGame(4)
    rng = random.Random(game)
    kept: list[tuple[Any, Any]] = []  # (an observation or a hand kept, its values then)
    recycled = 0
    for seed in range(3):
        native, plain = native_game.new_match(seed), plain_game.new_match(seed)
        while not plain.is_over():
            for seat in plain.seats_to_act():
                last = id(native.observation(seat))  # dropped at once: recyclable
                seen = native.observation(seat)
                recycled += id(seen) == last
                assert values(seen) == values(plain.observation(seat))
                if rng.random() < 0.3:
                    kept.append((seen, values(seen)))
                del seen
                hand = native.observation(seat).hand
                kept.append((hand, tuple(hand)))
                if game == "balloon" and rng.random() < 0.3:  # (its table grows in place)
                    table = native.observation(seat).table
                    kept.append((table, values(table)))
                if rng.random() < 0.3:  # (Balloon takes a card out of its own tuple in place)
                    legal = native.legal_actions(seat)
                    kept.append((legal, tuple(legal)))
                action = rng.choice(list(plain.legal_actions(seat)))
                plain.apply_action(seat, action)
                native.apply_action(seat, action)
        assert [values(thing) for thing, _ in kept] == [then for _, then in kept]
    assert recycled > 0  # (the recycling ran)


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
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
    lines = [line for line in done.stderr.splitlines() if line.startswith(f"{PLAIN}:")]
    assert lines == [f"{PLAIN}: the plain Python engine (ARENA_ENGINE=plain)"]


def test_the_registry_hands_out_the_native_core_where_built_and_mypyc_when_asked(builds):
    built("native")
    done = run_python(WHICH, {"ARENA_ENGINE": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "arena.games.balloon.native"
    (line,) = [line for line in done.stderr.splitlines() if line.startswith(f"{PLAIN}:")]
    assert line.startswith(f"{PLAIN}: the native core (") and "native.py" in line
    done = run_python(WHICH, {"ARENA_ENGINE": "compiled"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == engines.compiled_name(PLAIN)
    (line,) = [line for line in done.stderr.splitlines() if line.startswith(f"{PLAIN}:")]
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


def test_the_header_the_native_cores_share_is_part_of_their_digest(tmp_path):
    """A native core is stale when the header it includes (arena/games/native_core.h) changes,
    as when its own _native.c does."""
    games = Path(engines.__file__).parent
    copy = tmp_path / "games"
    (copy / "balloon").mkdir(parents=True)
    source = copy / "balloon" / engines.NATIVE_SOURCE
    source.write_bytes((games / "balloon" / engines.NATIVE_SOURCE).read_bytes())
    header = (games / engines.NATIVE_HEADER).read_bytes()
    (copy / engines.NATIVE_HEADER).write_bytes(header)
    built = engines.native_source_digest(games / "balloon" / engines.NATIVE_SOURCE)
    assert engines.native_source_digest(source) == built
    (copy / engines.NATIVE_HEADER).write_bytes(header + b"/* an edit */\n")
    assert engines.native_source_digest(source) != built


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


# ---------------------------------------------------------------- Boom's native core

BOOM = "arena.games.boom"
SEEDS = int(os.environ.get("BOOM_NATIVE_SEEDS", "4"))  # matches per variant


def boom_native() -> ModuleType:
    """Boom's engine with its native core (boom/native.py); skips where it is not built."""
    native, why_not = engines._native(BOOM)
    if native is None:
        pytest.skip(f"Boom's native core is not built here ({why_not})")
    return native


def boom_alike(native: Any, fast: Any, plain: Any, n: int) -> None:
    """The native state equal to the fast engine's (everything) and the plain one's (what it
    has): events, observations, legal actions, features, hands, scores, snapshots."""
    assert native.snapshot() == fast.snapshot()
    assert native.seats_to_act() == fast.seats_to_act() == plain.seats_to_act()
    assert native.is_over() == fast.is_over() == plain.is_over()
    assert native.scores() == fast.scores() == plain.scores()
    assert native.ranks() == fast.ranks()
    assert native.events == fast.events == plain.events
    assert native.round_key() == fast.round_key()
    for seat in range(-1, n):
        seen = values(native.observation(seat))
        assert seen == values(fast.observation(seat)) == values(plain.observation(seat))
    assert values(native.public_observation()) == values(fast.public_observation())
    for seat in range(n):
        legal = native.legal_actions(seat)
        expected = tuple(plain.legal_actions(seat))
        assert tuple(legal) == tuple(fast.legal_actions(seat)) == expected
        assert legal == expected and len(legal) == len(expected)
        assert type(legal) is tuple or legal == list(expected)  # (LegalPairs: as a tuple does)
        assert [legal[i] for i in range(-len(legal), len(legal))] == [*expected, *expected]
        assert getattr(legal, "pool", None) == getattr(fast.legal_actions(seat), "pool", None)
        assert native.feature_values(seat) == fast.feature_values(seat)
        assert native.hand(seat) == fast.hand(seat) == plain.hand(seat)
        assert native.pending_choice(seat) == fast.pending_choice(seat)
        assert native.paradise(seat) == fast.paradise(seat) == plain.paradise(seat)
    for whole in (True, False):
        assert boom_written(native, n, whole) == boom_written(fast, n, whole)
    assert native.game_scores() == fast.game_scores() == plain.game_scores()
    assert native.guard_order() == fast.guard_order()
    assert native.hidden_discards() == fast.hidden_discards() == plain.hidden_discards()


def boom_written(state: Any, n: int, whole: bool) -> list[float]:
    """What write_feature_values (whole) or write_step_values writes into a float32 buffer laid
    out as arena/games/boom/arrays.py lays it (the native core writes that itself), over values
    that are not zero, so that what is left alone shows too."""
    own, head, block = 52, 129, 105
    size = n * own + head - own + n * block
    buffer = array.array("f", [0.25] * size)
    own_at = [s * own for s in range(n)]
    block_at = [n * own + head - own + s * block for s in range(n)]
    write = state.write_feature_values if whole else state.write_step_values
    write(memoryview(buffer), own_at, n * own - own, block_at)
    if hasattr(state, "_write_values"):  # the native core took it, not its twin
        again = array.array("f", [0.25] * size)
        assert state._write_values(memoryview(again), own_at, n * own - own, block_at, whole)
        assert again == buffer
    return buffer.tolist()


def boom_refusals(seat: int, legal: Any, hand: tuple[int, ...], n: int) -> list[tuple]:
    """Wrong seats and actions of every kind, for a seat to act with these legal actions."""
    action = legal[0]
    not_held = next(c for c in range(50) if c not in hand)
    return [
        ((seat + 1) % n, action), (True, action), (float(seat), action), (-1, action),
        (2**70, action), (n, action), (seat, None), (seat, list(action)), (seat, ()),
        (seat, (not_held,) * len(action)), (seat, (*action, 49)), (seat, (1.0,) * len(action)),
        (seat, (2**70,) * len(action)), (seat, (-1,) * len(action)), (seat, (50,) * len(action)),
        (seat, tuple(reversed(action)) + (() if len(action) > 1 else (0, 0))),
        (seat, (True,) * len(action)), (seat, (51,) * len(action)),
    ]  # fmt: skip


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v[0] == "boom"], ids=variant_id)
def test_boom_native_and_the_other_engines_play_random_matches_alike(variant):
    from arena.games import boom
    from arena.games.boom.plain import PlainBoomGame

    native_engine = boom_native()
    _, n, options = variant
    rng = random.Random(variant_id(variant))
    games = (
        native_engine.BoomGame(n, **options), boom.FastBoomGame(n, **options),
        PlainBoomGame(n, **options),
    )  # fmt: skip
    for seed in range(SEEDS):
        native, fast, plain = (game.new_match(seed) for game in games)
        assert type(native) is native_engine.BoomState
        boom_alike(native, fast, plain, n)
        actions = 0
        while not plain.is_over():
            for seat in plain.seats_to_act():
                legal = plain.legal_actions(seat)
                assert native.default_action(seat) == fast.default_action(seat)
                if rng.random() < 0.2:
                    for bad_seat, bad in boom_refusals(seat, legal, plain.hand(seat), n):
                        if plain.illegal_reason(bad_seat, bad) is None:
                            continue  # (the ruse card, where it may be played)
                        expected = refusal(fast, bad_seat, bad)
                        assert refusal(native, bad_seat, bad) == expected, (bad_seat, bad)
                    for observer in (n, -2, True, 0.0, None):
                        assert refused_observer(native, observer) == refused_observer(
                            fast, observer
                        )
                if rng.random() < 0.05:  # a sampled state, from the same draws, and a clone
                    observer = rng.choice(range(-1, n))
                    draw = rng.random()
                    seen = native.observation(observer)
                    if observer >= 0:
                        f = boom.fast_sample_state(seen, random.Random(draw), games[1])
                        s = native_engine.sample_state(seen, random.Random(draw), games[0])
                        assert type(s) is native_engine.BoomState
                        assert s.snapshot() == f.snapshot() and s.events == f.events
                        assert values(s.observation(observer)) == values(f.observation(observer))
                        s = native_engine.sample_state(seen, random.Random(draw))  # game inferred
                        assert type(s) is native_engine.BoomState
                    c, f = native.clone(), fast.clone()
                    assert type(c) is native_engine.BoomState
                    assert c.snapshot() == f.snapshot() and c.events == f.events
                    before = native.snapshot()
                    for s in c.seats_to_act():  # a clone goes its own way
                        c.apply_action(s, c.default_action(s))
                    assert native.snapshot() == before and c.snapshot() != before
                action = rng.choice(legal)
                for state in (native, fast, plain):
                    state.apply_action(seat, action)
                actions += 1
                if actions < 40 or rng.random() < 0.25:
                    boom_alike(native, fast, plain, n)
        boom_alike(native, fast, plain, n)
        assert native.scores() == boom.recount_scores(native.events)
        assert refusal(native, 0, (0,)) == refusal(fast, 0, (0,))  # the match is over


def test_boom_states_built_from_hands_and_in_round_are_native_and_alike():
    from arena.games import boom

    native_engine = boom_native()
    for n, options in [(2, {}), (3, {"ruse": True}), (4, {"advanced": True, "ruse": True})]:
        native_game, fast_game = (
            native_engine.BoomGame(n, **options),
            boom.FastBoomGame(n, **options),
        )
        hands = [[c for c in range(50) if c % n == seat][:6] for seat in range(n)]
        native = native_game.state_from_hands(hands, (3, 1), seed=7)
        fast = fast_game.state_from_hands(hands, (3, 1), seed=7)
        assert type(native) is native_engine.BoomState
        rng = random.Random(n)
        while not fast.is_over():
            assert native.snapshot() == fast.snapshot() and native.events == fast.events
            for seat in fast.seats_to_act():
                action = rng.choice(fast.legal_actions(seat))
                native.apply_action(seat, action)
                fast.apply_action(seat, action)
        assert native.snapshot() == fast.snapshot() and native.scores() == fast.scores()


def test_the_registry_hands_out_boom_native_where_built_and_the_fast_engine_otherwise():
    boom_native()
    code = (
        "import logging; logging.basicConfig(level=logging.INFO, format='%(message)s')\n"
        "from arena.games import game_class; print(game_class('boom').__module__)"
    )
    done = run_python(code, {"ARENA_ENGINE": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "arena.games.boom.native"
    lines = [line for line in done.stderr.splitlines() if line.startswith(f"{BOOM}:")]
    assert len(lines) == 1 and lines[0].startswith(f"{BOOM}: the native core (")
    for choice, said in [("plain", "the plain Python engine (ARENA_ENGINE=plain)"),
                         ("compiled", "the Python engine (it has no compiled build)")]:  # fmt: skip
        done = run_python(code, {"ARENA_ENGINE": choice})
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == BOOM
        assert f"{BOOM}: {said}" in done.stderr.splitlines()


def test_boom_native_hashes_its_draws_of_chance_as_hashlib_does():
    """The native core's BLAKE2b (its deals and guard shuffles) against hashlib's, over lengths
    around the 128-byte block."""
    import hashlib

    boom_native()
    from arena.games.boom import _native_core  # type: ignore[attr-defined]

    rng = random.Random(0)
    for length in [*range(0, 300), 1000]:
        data = rng.randbytes(length)
        assert _native_core._blake2b(data) == hashlib.blake2b(data).digest(), length


def test_boom_native_pairs_behave_as_the_fast_engines():
    """Two-card legal actions: the native LegalPairs answers as the fast engine's (a sequence
    equal to the tuple of the pairs) to indexing, slicing, membership, hashing and the rest."""
    import pickle
    from collections.abc import Sequence

    from arena.games import boom

    native_engine = boom_native()
    native, fast = native_engine.BoomGame(2).new_match(3), boom.FastBoomGame(2).new_match(3)
    for state in (native, fast):
        for seat in (0, 1):  # the first escape: two cards each, at two players
            assert len(state.legal_actions(seat)[0]) == 2
    mine, theirs = native.legal_actions(0), fast.legal_actions(0)
    assert isinstance(mine, Sequence) and type(mine).__name__ == "LegalPairs"
    every = tuple(theirs)
    assert mine == every and mine == list(every) and not (mine != every) and mine != every[1:]
    assert hash(mine) == hash(every) and tuple(mine) == every and list(iter(mine)) == list(every)
    assert mine[3:9] == every[3:9] and mine[::-1] == every[::-1] and mine[-1] == every[-1]
    assert mine.pool == theirs.pool and repr(mine) == repr(theirs)
    assert pickle.loads(pickle.dumps(mine)) == every
    pool = mine.pool
    for action in [
        every[0], every[-1], (pool[1], pool[0]), (pool[0], pool[0]), (pool[0], 99), (pool[0],),
        [pool[0], pool[1]], (float(pool[0]), pool[1]), (True, pool[1]), "x", None,
    ]:  # fmt: skip
        assert (action in mine) == (action in theirs) == (action in every), action
    for index in (len(every), -len(every) - 1, 1.0, "1"):
        with pytest.raises(Exception) as refused:
            mine[index]
        with pytest.raises(type(refused.value)):
            every[index]


def test_boom_native_deals_every_seed_as_the_fast_engine():
    """Seeds past 64 bits and negative ones hash as their decimal text, as the fast engine's;
    a game of another setting after one is dealt by its own (the core keeps the last game's)."""
    from arena.games import boom

    native_engine = boom_native()
    for n, options in [(2, {}), (5, {"advanced": True}), (3, {"ruse": True, "series": True})]:
        native_game, fast_game = (
            native_engine.BoomGame(n, **options),
            boom.FastBoomGame(n, **options),
        )
        for seed in (0, 1, -5, 2**63 - 1, 2**63, 2**70 + 3, -(2**80)):
            assert native_game.new_match(seed).snapshot() == fast_game.new_match(seed).snapshot()
