"""Engine versions: a match re-runs by the rules of the engine version it was played with, when
this Arena still plays that version, or is refused with a message that says what to do."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest

from arena import replay
from arena.games import EngineVersionError, game_from_config
from arena.games.balloon import BalloonGame
from arena.games.boom import BoomGame, BoomGameV2
from arena.results import MoveRecord

# A genuine version 2 replay: the audit's 2-player series (seed 146, random play drawn from
# random.Random(37)), played and written by the version 2 engine (boom.py at commit 1da6bc6),
# whose game 3 ended after 8 rounds without an escape.
V2_REPLAY = Path(__file__).parent / "data" / "boom-v2-seed146-series.json"


def v2_doc() -> dict:
    return replay.check(json.loads(V2_REPLAY.read_text()), str(V2_REPLAY))


def test_boom_plays_versions_3_and_2_and_balloon_version_1():
    config = {
        "game": "boom",
        "num_players": 2,
        "options": {"advanced": False, "ruse": False, "series": True},
    }
    assert BoomGame.engine_version == "3" and BalloonGame.engine_version == "1"
    assert type(game_from_config(config)) is BoomGame
    assert type(game_from_config(config, "3")) is BoomGame
    old = game_from_config(config, "2")
    assert type(old) is BoomGameV2 and old.engine_version == "2" and old.config() == config
    # a copy or a pickle of a version 2 game is still version 2
    assert type(pickle.loads(pickle.dumps(old))) is BoomGameV2
    assert type(copy.deepcopy(old.new_match(1)).game) is BoomGameV2
    assert type(game_from_config({"game": "balloon", "num_players": 3}, "1")) is BalloonGame


def test_an_old_version_replay_replays_under_its_own_version():
    doc = v2_doc()
    assert doc["engine_version"] == "2"
    state = replay.verify(doc)  # the recorded scores and ranks, re-run by version 2's rules
    assert type(state.game) is BoomGameV2 and state.scores() == (235, 179)
    ends = [e.data["end"] for e in state.events if e.kind == "game_end"]
    assert ends == ["hand_size", "hand_size", "dry_rounds", "hand_size"]
    views = replay.seat_views(
        doc["config"], doc["seed"], [MoveRecord.from_list(m) for m in doc["moves"]], "2"
    )
    assert sum(map(len, views.values())) == len(doc["moves"])
    # Under version 3 the same moves do not make the same match: game 3 goes on where version
    # 2 dealt game 4, so the recorded moves stop being legal.
    doc["engine_version"] = "3"
    with pytest.raises(replay.ReplayError, match="does not replay|does not reproduce"):
        replay.verify(doc)


@pytest.mark.parametrize(
    "version, advice",
    [
        ("1", "Arena from before commit 028f709"),
        ("9", "the Arena release it was played with"),
    ],
)
def test_a_version_this_arena_cannot_play_is_refused_with_what_to_do(version, advice):
    doc = v2_doc()
    doc["engine_version"] = version
    with pytest.raises(replay.ReplayError) as refused:
        replay.verify(doc)
    message = str(refused.value)
    assert f"boom engine version '{version}'" in message
    assert "engine version(s) 2, 3" in message and advice in message
    with pytest.raises(replay.ReplayError, match=f"version '{version}'"):
        list(replay.rerun(doc))
    with pytest.raises(EngineVersionError, match=advice):
        game_from_config(doc["config"], version)
