"""A real ladder of the example bots ranks strong above heuristic above random."""

from __future__ import annotations

import json

from tests.cli import ladder_run_args
from tests.store.helpers import use_seed_key
from tests.support.ladders import arena


def test_ladder_ranks_strong_above_heuristic_above_random(tmp_path):
    db = tmp_path / "a.db"
    for name, script in (
        ("random", "random_bot.py"),
        ("heuristic", "balloon_heuristic.py"),
        ("strong", "balloon_strong.py"),
    ):
        arena("bot", "add", name, "--command", f"python example_bots/{script}", "--db", str(db))
    use_seed_key(db)  # the bots' seeds, and so the ladder, the same in every run
    # Generous move time: the strong bot's search is a fixed number of simulations, so with
    # its time cut-off out of reach the ladder is deterministic from its seed.
    arena(
        *ladder_run_args(
            "strength",
            "random,heuristic,strong",
            db,
            ["--rounds", "5", "--seed", "3", "-j", "3", "--move-ms", "5000"],
            run_dir=tmp_path / "runs",
        )
    )
    doc = json.loads(arena("rankings", "strength", "--json", "--db", str(db)).stdout)
    order = [s["bot"] for s in doc["standings"]]
    assert order == ["strong", "heuristic", "random"], doc["standings"]
    # 5 rounds of 3 sets of 2 (margins mode: no opening round).
    assert doc["completed"] == doc["scheduled"] == 30
    assert doc["rating_mode"] == "margins"
    assert all(s["faults"] == 0 for s in doc["standings"])
