"""A ladder's variant on the pages: each option not at its default by its declared label, with
what it does on hover (arena.games.option_labels), never as raw option keys."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from arena.store import Store
from arena.web.factory import create_app

ROOT = Path(__file__).resolve().parents[2]


def test_the_home_and_ladder_pages_name_the_variant_by_its_labels(tmp_path):
    db = tmp_path / "arena.db"
    with Store(db) as store:
        for name in ("a", "b", "c"):
            store.add_bot(name, "python example_bots/random_bot.py", cwd=ROOT)
        store.create_ladder("rusey", "boom", 3, ["a", "b", "c"], options={"ruse": True})
        store.create_ladder("plain", "boom", 3, ["a", "b", "c"], options={"ruse": False})
    ruse = '<span class="variant" title="deal each player a ruse card">ruse</span>'
    with TestClient(create_app(db)) as client:
        home = client.get("/")
        assert home.status_code == 200, home.text
        assert home.text.count(ruse) == 1  # the plain ladder's ruse=False is left unsaid
        ladder = client.get("/ladders/rusey")
        assert ladder.status_code == 200, ladder.text
        assert ruse in ladder.text
