"""A ladder that seats remote bots says what that means for fair play, on its page and in the
API (arena/ladder/remote.py; docs/protocol.md, "Remote bots and fair play")."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from arena.ladder.remote import UNFAIR
from arena.store import Store
from arena.web.factory import create_app
from tests.cli import ROOT

RANDOM = "python example_bots/random_bot.py"


def test_the_page_and_the_api_of_a_ladder_with_remote_bots_say_so(tmp_path):
    db = tmp_path / "arena.db"
    with Store(db) as store:
        for name in ("a", "b"):
            store.add_bot(name, RANDOM, cwd=ROOT)
        store.add_bot("owner", remote=True)
        store.add_bot("owner2", remote=True)
        store.create_ladder("mixed", "balloon", 2, ["a", "owner", "owner2"], seed=1)
        store.create_ladder("launched", "balloon", 2, ["a", "b"], seed=1)
    with TestClient(create_app(db), raise_server_exceptions=False) as client:
        mixed = html.unescape(client.get("/ladders/mixed").text)
        assert 'id="remote-notice"' in mixed
        assert "This ladder seats 2 remote bots (run on their owners' machines)" in mixed
        assert UNFAIR.split(": ")[0] in mixed and "fair only among trusted remote bots" in mixed
        assert 'id="remote-notice"' not in client.get("/ladders/launched").text
        counts = {row["name"]: row["remote_bots"] for row in client.get("/api/ladders").json()}
        assert counts == {"mixed": 2, "launched": 0}
