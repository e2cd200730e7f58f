"""`arena download BOT` (issue 33, item 2): a bot's replays and match logs fetched from a real
server (uvicorn over the launched bots' ladder) with its owner key; resumable, and refused with a
clear message for a key that does not open the bot."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena import replay
from arena.cli import main
from arena.web.factory import create_app
from tests.web.support import ServerThread


def test_the_owner_downloads_replays_and_logs_and_a_second_run_fetches_only_what_is_new(
    launched_ladder, tmp_path
):
    server = ServerThread(create_app(launched_ladder.path)).start()
    key_file = tmp_path / "key"
    key_file.write_text(launched_ladder.owner_keys["chatty"] + "\n")
    out = tmp_path / "dl"
    args = ["download", "chatty", "--server", server.url, "--key-file", str(key_file)]
    args += ["--out", str(out)]
    try:
        first = CliRunner().invoke(main, args)
        assert first.exit_code == 0, first.output
        assert "chatty: 3 new replays and 3 new match logs" in first.output
        folder = out / "chatty" / launched_ladder.ladder
        replays = sorted(folder.glob("[0-9]*.json"))
        logs = sorted(folder.glob("*.logs.json"))
        assert [p.name for p in replays if not p.name.endswith(".logs.json")] == [
            "0.json",
            "1.json",
            "2.json",
        ]
        assert len(logs) == 3
        for path in logs:
            doc = json.loads(path.read_text())
            (seat,) = doc["seats"]  # its own seat only
            assert (
                seat["bot"] == "chatty"
                and "chatty decision 1 of" in dict(seat["moves"])[min(dict(seat["moves"]))]
            )
        # Each replay is a replay file: it re-runs and reproduces its result.
        doc = replay.read(folder / "0.json")
        replay.verify(doc)
        # Again: nothing new. A file lost is fetched again, and only it.
        (folder / "1.json").unlink()
        again = CliRunner().invoke(main, args)
        assert again.exit_code == 0, again.output
        assert "1 new replays and 0 new match logs" in again.output
        assert "2 matches were there already" in again.output
        # Another bot's owner key opens nothing of chatty's: refused, saying why.
        key_file.write_text(launched_ladder.owner_keys["r1"])
        refused = CliRunner().invoke(main, [*args[:-2], "--out", str(tmp_path / "other")])
        assert refused.exit_code == 1
        assert "the server refused the key" in refused.output and "owner key" in refused.output
    finally:
        server.stop()
