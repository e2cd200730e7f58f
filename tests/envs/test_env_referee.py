"""The environment plays what the referee plays: a seed deals the same match in both (a real
`arena match` run), and what a seat observes in the environment is what the referee sends it,
encoded by the one encoder a bot also uses."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

pytest.importorskip("pettingzoo")

import numpy as np  # noqa: E402

from arena.envs import ArenaEnv  # noqa: E402
from arena_sdk import features  # noqa: E402
from tests.cli import run_match  # noqa: E402

RANDOM = "python example_bots/random_bot.py"


def play_replay_in_env(doc: dict) -> tuple[ArenaEnv, dict[int, list[dict]], list[float]]:
    """Play a replay's moves through a fresh environment reset with the replay's seed; return
    the environment, per seat the engine observation it gave before each of the seat's moves
    (as JSON, like the replay's views), and each seat's reward at the end."""
    config = doc["config"]
    e = ArenaEnv(config["game"], config["num_players"], **config["options"])
    e.reset(seed=doc["seed"])
    moves = [(m[0], tuple(m[1]) if isinstance(m[1], list) else m[1]) for m in doc["moves"]]
    used = [False] * len(moves)
    seen: dict[int, list[dict]] = {s: [] for s in range(config["num_players"])}
    final = [0.0] * config["num_players"]
    for agent in e.agent_iter():
        _, reward, term, _, _ = e.last(observe=False)
        seat = int(agent.removeprefix("seat_"))
        if term:
            final[seat] = reward
            e.step(None)
            continue
        # the seat's next move in the replay (in a simultaneous Boom step the replay holds them
        # in the order they arrived; the environment asks in seat order)
        i = next(i for i, (s, _) in enumerate(moves) if s == seat and not used[i])
        used[i] = True
        obs = e.engine_state.observation(seat)
        seen[seat].append(json.loads(json.dumps(dataclasses.asdict(obs))))
        e.step(features.action_index(config["game"], moves[i][1]))
    assert all(used)
    return e, seen, final


@pytest.mark.parametrize("game, options", [("balloon", []), ("boom", ["--ruse", "--advanced"])])
def test_a_seed_deals_the_same_match_as_arena_match(tmp_path, game, options):
    path = tmp_path / "m.json"
    out = run_match(game, [RANDOM] * 3, 8123, *options, "--replay", str(path))
    assert out.returncode == 0, out.stderr
    doc = json.loads(path.read_text())
    assert doc["seed"] == 8123 and doc["faults"] == []
    e, seen, final = play_replay_in_env(doc)

    # The same deal, and the same observations all along. In Boom, the replay recomputes a
    # simultaneous step's views one reply after another, so there `acted` shows the seats
    # that replied first; everything else is compared.
    def comparable(view: dict) -> dict:
        return view if game == "balloon" else {k: v for k, v in view.items() if k != "acted"}

    for seat, views in doc["views"].items():
        assert seen[int(seat)][0]["hand"] == views[0]["hand"]
        assert [comparable(v) for v in seen[int(seat)]] == [comparable(v) for v in views]
    # ...and the same moves end in the referee's scores, which are the rewards
    assert list(e.engine_state.scores()) == doc["scores"] == final


def random_states(game: str, n: int, options: dict, count: int, seed: int):
    """Engine states along random playouts, each with an env positioned on it."""
    rng = random.Random(seed)
    e = ArenaEnv(game, n, **options)
    e.reset(seed=seed)
    for _ in range(count):
        if e.engine_state.is_over():
            e.reset()
        yield e
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(mask.nonzero()[0])))


@pytest.mark.parametrize(
    "game, n, options",
    [
        ("balloon", 2, {}),
        ("balloon", 5, {}),
        ("boom", 2, {"ruse": True}),
        ("boom", 4, {"advanced": True, "series": True}),
        ("boom", 5, {"ruse": True}),
    ],
)
def test_the_env_observes_what_the_referee_sends_through_the_bots_encoder(game, n, options):
    for e in random_states(game, n, options, 300, seed=5):
        for agent in e.possible_agents:
            sent = e.bot_observation(agent)  # through the referee's wire, as a bot parses it
            assert sent.seat == int(agent.removeprefix("seat_"))
            observed = e.observe(agent)
            np.testing.assert_array_equal(observed["observation"], features.encode(sent))
            legal = e.bot_legal_actions(agent)
            np.testing.assert_array_equal(
                observed["action_mask"],
                features.legal_mask(game, legal)
                if legal
                else np.zeros(features.action_count(game), np.int8),
            )
