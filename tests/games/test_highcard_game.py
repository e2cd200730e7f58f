"""The tests' own game, high card (tests/games/highcard: one package, its proto messages and one
registration line), played end to end like the games Arena ships: through the referee (real
gRPC, real bot processes that play it with the SDK), a ladder (`arena ladder run`), the web's
pages and API, and the PettingZoo environment; the conformance test covers it too
(test_conformance.py, registered by tests/games/conftest.py)."""

from __future__ import annotations

import json
import os
import random

from arena.games import game_kit, make_game
from arena.referee import wire
from arena.store import Store
from arena_sdk import features, games
from arena_sdk import wire as sdk_wire
from tests.cli import ROOT, run_arena, run_match

BOT = f"python {ROOT / 'tests' / 'games' / 'highcard' / 'bot.py'}"
# the `arena` commands a test starts register the game by the environment
ENV = {**os.environ, "ARENA_GAMES": "tests.games.highcard"}
games.register("tests.games.highcard.sdk_game")  # the SDK's side, in this process


def test_a_match_through_the_referee_with_real_bot_processes():
    done = run_match("highcard", [BOT, BOT], 7, env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    # the bots play their highest card: the seed's deal decides the match
    state = make_game("highcard", 2).new_match(7)
    while not state.is_over():
        (seat,) = state.seats_to_act()
        state.apply_action(seat, max(state.legal_actions(seat)))
    assert result["scores"] == list(state.scores()), result
    assert result["faults"] == []


def test_a_ladder_plays_it_and_the_web_shows_it(tmp_path):
    from fastapi.testclient import TestClient

    from arena.web.factory import create_app

    db = tmp_path / "arena.db"
    with Store(db) as store:
        for name in ("high-a", "high-b", "high-c"):
            store.add_bot(name, BOT, cwd=ROOT)
    args = ["ladder", "run", "hc", "--game", "highcard", "-k", "2", "--bots"]
    args += ["high-a,high-b,high-c", "--rounds", "1", "--seed", "3", "--db", str(db)]
    done = run_arena(*args, "--no-progress", "--run-dir", str(tmp_path / "runs"), env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr

    with TestClient(create_app(db)) as client:
        listed = client.get("/api/matches", params={"ladder": "hc"})
        assert listed.status_code == 200, listed.text
        matches = listed.json()["matches"]
        assert matches and all(m["status"] == "completed" for m in matches), matches
        index = matches[0]["index"]
        match = client.get(f"/api/ladders/hc/matches/{index}", params={"frames": "true"})
        assert match.status_code == 200, match.text
        frames = match.json()["frames"]
        # the deal, then one frame a card played (two seats, two rounds)
        assert len(frames) == 5, frames
        assert any("round_end" in text for f in frames for text in f["events"]), frames
        page = client.get(f"/ladders/hc/matches/{index}")
        assert page.status_code == 200 and "highcard" in page.text
        rankings = client.get("/api/ladders/hc")
        assert rankings.status_code == 200, rankings.text


def test_the_environment_plays_it_and_sees_what_a_bot_sees():
    from pettingzoo.test import api_test

    from arena.envs import env

    api_test(env("highcard", 3), num_cycles=20)
    e = env("highcard", 2)
    e.reset(seed=5)
    rng = random.Random(5)
    for agent in e.agent_iter():
        obs, reward, done, truncated, _ = e.last()
        if done or truncated:
            e.step(None)
            continue
        seen = e.unwrapped.bot_observation(agent)
        assert (features.encode(seen) == obs["observation"]).all()
        legal = [i for i, on in enumerate(obs["action_mask"]) if on]
        e.step(rng.choice(legal))
    assert sorted(e.unwrapped.engine_state.scores()) in ([0, 2], [1, 1])


def test_its_messages_go_both_ways_through_both_codecs():
    state = make_game("highcard", 3).new_match(1)
    for seat in range(-1, 3):
        obs = state.observation(seat)
        seen = sdk_wire.observation(wire.observation_to_pb("highcard", obs))
        assert seen.played == obs.played and [c.id for c in seen.hand] == list(obs.hand)
    (seat,) = state.seats_to_act()
    for action in state.legal_actions(seat):
        sdk_action = sdk_wire.action(wire.action_to_pb("highcard", action))
        back = wire.action_from_pb("highcard", sdk_wire.action_to_proto(sdk_action))
        assert back == action
    assert game_kit("highcard").title.startswith("High card")
