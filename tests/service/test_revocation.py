"""A revoked bot is cut off at once: `arena bot rotate-token`, `suspend` and `remove`, run as
processes of their own beside a real `arena serve` (sharing its SQLite file), and the admin
API's equivalents, end the bot's open stream within a second. Its seat in the running match
faults as disconnected, the SDK bot stops (no retrying), the old token is refused afterwards
and the new one plays."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import grpc
import httpx
import pytest

from arena.ladder.local import refusal
from arena.referee.lanes import lane_key
from arena.store import BotAccess
from arena.tokens import hash_token
from tests.cli import ROOT
from tests.procs import bot_processes, processes_in
from tests.service.serving import ADMIN, RANDOM, Server, arena, wait_until
from tests.timing import scaled

from .probe import hello

SLOW_BOT = ROOT / "tests" / "bots" / "slow_sdk_bot.py"
# The goal: the stream ends within a second of the command's exit (or of the admin API's answer).
CUT_OFF_S = 1.0


class RemoteBot:
    """A bot run by its owner, with a token, as a process of its own (the slow SDK bot unless
    `command` says otherwise). The address and token are given as options and, for bots that
    read only those, as ARENA_ADDRESS and ARENA_TOKEN."""

    def __init__(
        self,
        tmp: Path,
        server: Server,
        token: str,
        n: int,
        command: tuple[str, ...] = (sys.executable, str(SLOW_BOT)),
    ):
        self.log = tmp / f"owner-{n}.log"
        address = f"127.0.0.1:{server.port}"
        env = {**os.environ, "ARENA_ADDRESS": address, "ARENA_TOKEN": token}
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [*command, "--address", address, "--token", token],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(scaled(10))


def ladder_db(tmp_path: Path) -> tuple[Path, str]:
    """A database with two launched random bots and the remote bot `owner`: every table of
    three has the owner at it."""
    db = tmp_path / "arena.db"
    for name in ("r1", "r2"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    token = arena("bot", "add", "owner", "--remote", "--db", str(db)).stdout.split()[-1]
    return db, token


def query(db: Path, sql: str, *params) -> list[tuple]:
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def running_with(db: Path, bot: str, after: int = -1) -> list[int]:
    """The running matches (after index `after`) the bot has a seat in."""
    ((bot_id,),) = query(db, "SELECT id FROM bots WHERE name = ?", bot)
    rows = query(db, "SELECT idx, seats FROM matches WHERE status = 'running' AND idx > ?", after)
    return [index for index, seats in rows if bot_id in json.loads(seats)]  # ids in seat order


def faults_in(db: Path, bot: str, index: int | None = None) -> list[tuple[int, str, str]]:
    """The bot's faults (match index, kind, detail), in match `index` or in every match."""
    return query(
        db,
        "SELECT m.idx, f.kind, f.detail FROM faults f "
        "JOIN matches m ON m.id = f.match_id JOIN bots b ON b.id = f.bot_id "
        "WHERE b.name = ? AND (? IS NULL OR m.idx = ?) ORDER BY m.idx, f.id",
        bot,
        index,
        index,
    )


def seat_of(db: Path, bot: str, index: int) -> int:
    """The bot's seat in match `index`."""
    ((bot_id,),) = query(db, "SELECT id FROM bots WHERE name = ?", bot)
    ((seats,),) = query(db, "SELECT seats FROM matches WHERE idx = ?", index)
    return json.loads(seats).index(bot_id)


def mid_match(server: Server, db: Path, bot: str = "owner", after: int = -1) -> int:
    """Wait until the bot is in the middle of a match (after index `after`): one that has
    played some moves, the bot itself some of them and the referee none for it. A match whose
    seat the bot has already lost is not one: e.g. a match that began while the bot was not
    connected, whose seat the Hello probe (tests/service/probe.py) took and faulted by closing
    its stream, and that is still running, waiting for newly launched lanes, as the next bot
    connects. Its index."""

    def playing():
        for index in running_with(db, bot, after):
            live = httpx.get(
                f"{server.web}/api/ladders/bal/matches/{index}/live", params={"since": 0}
            ).json()
            if live["status"] != "running" or len(live["frames"]) <= 3:
                continue
            seat = seat_of(db, bot, index)
            moves = [f["move"] for f in live["frames"] if f["move"] and f["move"]["seat"] == seat]
            if moves and not any(m["default"] for m in moves):
                return index + 1  # never 0: wait_until wants a true value
        return None

    return wait_until(playing, f"{bot} playing a match", server=server) - 1


def faults_of(server: Server, db: Path, index: int, bot: str = "owner") -> list[tuple[str, str]]:
    """The bot's faults in match `index`, once the match is over."""

    def over():
        ((status,),) = query(db, "SELECT status FROM matches WHERE idx = ?", index)
        if status != "completed":
            return None
        return [(kind, detail) for _, kind, detail in faults_in(db, bot, index)] or [("none", "")]

    return wait_until(over, f"match {index} to complete", server=server)


def stream_ended(server: Server, bot: str, since: float) -> float:
    """When the referee logged the end of the bot's stream (the first end at or after `since`;
    wall-clock seconds, to the millisecond of the log's time stamps)."""
    ends = []
    for line in server.log.read_text(errors="replace").splitlines():
        if f"INFO bot {bot} disconnected" in line:
            stamp = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            if stamp >= since - 0.001:  # the stamp is truncated to the millisecond
                ends.append(stamp)
    assert ends, f"no end of {bot}'s stream in the server's log:\n{server.log_tail()}"
    return ends[0]


def cut_off(
    tmp: Path,
    server: Server,
    db: Path,
    token: str,
    n: int,
    revoke,
    what: str,
    code: grpc.StatusCode,
) -> tuple[float, float]:
    """Connect the owner's bot with `token`, wait until it is in the middle of a match, revoke
    it with `revoke()`, and check it is cut off: seconds from revoke()'s return to the end of
    its stream (as the referee logs it) and to the end of the bot (its SDK stops at the
    referee's status, without retrying)."""
    bot = RemoteBot(tmp, server, token, n)
    try:
        try:
            index = mid_match(server, db)
        except AssertionError as err:
            raise AssertionError(f"{err}\nthe owner's log:\n{bot.stderr()[-3000:]}") from None
        asked_wall = time.time()
        revoke()
        revoked_at, revoked_wall = time.monotonic(), time.time()
        deadline = revoked_at + 10
        while bot.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        elapsed = time.monotonic() - revoked_at
        assert bot.proc.poll() == 1, f"the bot did not stop; its log:\n{bot.stderr()[-3000:]}"
    finally:
        bot.stop()
    log = bot.stderr()
    # The SDK stops at the referee's status and tells its owner why. When it was writing a reply
    # as the stream ended, grpc-python reports INTERNAL to it instead of the status: it then
    # reconnects once, after its backoff, and stops at the refusal of its Hello.
    assert "refused this bot" in log or "does not know this bot's token" in log, log[-3000:]
    if "INTERNAL" in log:
        assert log.count("reconnecting") == 1, log[-3000:]
    else:
        assert "reconnecting" not in log, log[-3000:]
        assert what in log and (code.name in log or code == grpc.StatusCode.UNAUTHENTICATED), log[
            -3000:
        ]
    faults = faults_of(server, db, index)
    assert faults and all(kind == "disconnect" for kind, _ in faults), faults
    assert what in faults[0][1], faults
    return stream_ended(server, "owner", asked_wall) - revoked_wall, elapsed


def revokers(via: str, db: Path, server: Server):
    """rotate, suspend, reinstate, remove: by the CLI in a process of its own, or by the admin
    API. rotate returns the new token."""
    key = {"X-Admin-Key": ADMIN}
    admin = f"{server.web}/api/admin/bots/owner"

    def ok(response: httpx.Response) -> dict:
        assert response.status_code in (200, 204), response.text
        return response.json() if response.status_code == 200 else {}

    if via == "cli":
        return {
            "rotate": lambda: arena("bot", "rotate-token", "owner", "--db", str(db)).stdout.split()[
                -1
            ],
            "suspend": lambda: arena(
                "bot", "suspend", "owner", "--reason", "cheating", "--db", str(db)
            ),
            "reinstate": lambda: arena("bot", "reinstate", "owner", "--db", str(db)),
            "remove": lambda: arena("bot", "remove", "owner", "--db", str(db)),
        }
    return {
        "rotate": lambda: ok(httpx.post(f"{admin}/rotate-token", headers=key))["token"],
        "suspend": lambda: ok(
            httpx.post(f"{admin}/suspend", json={"reason": "cheating"}, headers=key)
        ),
        "reinstate": lambda: ok(httpx.post(f"{admin}/reinstate", headers=key)),
        "remove": lambda: ok(httpx.delete(admin, headers=key)),
    }


@pytest.mark.parametrize("via", ["cli", "admin"])
def test_rotate_suspend_and_remove_cut_a_connected_bot_off_at_once(tmp_path, via):
    db, token = ladder_db(tmp_path)
    server = Server(tmp_path, db, ["--move-ms", "5000", "--allow-remote"])
    address = f"127.0.0.1:{server.port}"
    times = {}
    try:
        wait_until(server.up, "the web server", server=server)
        do = revokers(via, db, server)
        new_token: list[str] = []

        # rotate-token: the stream that presented the old token ends; the old token is
        # refused from then on, and the new one plays (the next step's bot uses it).
        times["rotate-token"] = cut_off(
            tmp_path,
            server,
            db,
            token,
            1,
            lambda: new_token.append(do["rotate"]()),
            "rotated",
            grpc.StatusCode.UNAUTHENTICATED,
        )
        code, detail = hello(address, token)
        assert code == grpc.StatusCode.UNAUTHENTICATED, (code, detail)
        token = new_token[0]
        assert hello(address, token) == (grpc.StatusCode.OK, "owner")

        # suspend: the same; the token is refused while suspended, and plays once reinstated.
        times["suspend"] = cut_off(
            tmp_path,
            server,
            db,
            token,
            2,
            do["suspend"],
            "suspended",
            grpc.StatusCode.PERMISSION_DENIED,
        )
        code, detail = hello(address, token)
        assert code == grpc.StatusCode.PERMISSION_DENIED and "cheating" in detail, (code, detail)
        do["reinstate"]()
        assert hello(address, token) == (grpc.StatusCode.OK, "owner")

        # remove: the same, and the token is refused for good.
        times["remove"] = cut_off(
            tmp_path, server, db, token, 3, do["remove"], "removed", grpc.StatusCode.UNAUTHENTICATED
        )
        code, detail = hello(address, token)
        assert code == grpc.StatusCode.UNAUTHENTICATED, (code, detail)
    finally:
        assert server.stop() == 0
    after = "the command's exit" if via == "cli" else "the admin API's answer"
    each = ", ".join(
        f"{what} {stream * 1000:.0f} / {bot * 1000:.0f} ms" for what, (stream, bot) in times.items()
    )
    print(
        f"FIGURE revoke_{via}: from {after} to the end of the stream (referee's log; negative: "
        "before it) / of the bot's process: " + each
    )
    assert all(stream < CUT_OFF_S for stream, _ in times.values()), times
    # The bot's own end may add one reconnection's backoff (at most 0.5 s, see cut_off).
    assert all(bot < CUT_OFF_S + 0.5 for _, bot in times.values()), times


def test_a_suspended_launched_bot_is_stopped_and_not_launched_again_until_reinstated(tmp_path):
    """And when its registered token is rotated, its process (whose token the referee issued)
    is replaced by one with a new token."""
    db = tmp_path / "arena.db"
    arena("bot", "add", "slow", "--command", f"python {SLOW_BOT}", "--db", str(db))
    for name in ("r1", "r2", "r3"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    server = Server(tmp_path, db, ["--move-ms", "5000"])
    bots = tmp_path / "runs" / "bots"  # its lanes' work directories (docs/bots.md#lanes)
    try:
        wait_until(server.up, "the web server", server=server)
        index = mid_match(server, db, "slow")
        assert bot_processes(bots, "slow"), "the launched bot has no process"
        arena("bot", "suspend", "slow", "--reason", "cheating", "--db", str(db))
        suspended_at = time.monotonic()
        wait_until(
            lambda: bot_processes(bots, "slow") == [],
            "the bot's process to end",
            timeout=10,
            server=server,
        )
        stopped_s = time.monotonic() - suspended_at
        faults = faults_of(server, db, index, "slow")
        assert [kind for kind, _ in faults] == ["disconnect"], faults
        assert "suspended (cheating)" in faults[0][1], faults

        # The other three play on without it, and it is not launched again.
        def matches_without_slow():
            board = httpx.get(
                f"{server.web}/api/matches", params={"ladder": "bal", "status": "completed"}
            ).json()
            later = [m for m in board["matches"] if m["index"] > index]
            return later if len(later) >= 6 else None

        later = wait_until(matches_without_slow, "matches after the suspension", server=server)
        assert all("slow" not in [s["bot"] for s in m["seats"]] for m in later), later
        assert bot_processes(bots, "slow") == []

        # Reinstated, it is launched again and plays.
        arena("bot", "reinstate", "slow", "--db", str(db))
        index = mid_match(server, db, "slow", after=index)
        old = set(bot_processes(bots, "slow"))
        assert old

        # Its token rotated, its stream ends and its process is replaced.
        arena("bot", "rotate-token", "slow", "--db", str(db))
        wait_until(
            lambda: not old & set(bot_processes(bots, "slow")),
            "the old process to end",
            timeout=10,
            server=server,
        )
        faults = faults_of(server, db, index, "slow")
        assert [kind for kind, _ in faults] == ["disconnect"], faults
        assert "rotated" in faults[0][1], faults
        mid_match(server, db, "slow", after=index)
        assert bot_processes(bots, "slow") and not old & set(bot_processes(bots, "slow"))
    finally:
        assert server.stop() == 0
    assert processes_in(tmp_path) == []
    print(
        f"FIGURE revoke_launched: from arena bot suspend's exit to the end of the launched "
        f"bot's process: {stopped_s * 1000:.0f} ms"
    )
    assert stopped_s < CUT_OFF_S + 2.0  # the stream at once; the process within its stop grace


def test_refusal_says_why_a_stream_may_not_play_on():
    current = hash_token("arena_current")
    row = BotAccess(current, False, None)
    assert refusal("b", row, current, issued=False) is None
    assert refusal("b", row, hash_token("arena_launch"), issued=True) is None
    rotated = refusal("b", row, hash_token("arena_old"), issued=False)
    assert rotated.code == grpc.StatusCode.UNAUTHENTICATED and "rotated" in rotated.detail
    removed = refusal("b", None, current, issued=True)
    assert removed.code == grpc.StatusCode.UNAUTHENTICATED and "removed" in removed.detail
    held = refusal("b", BotAccess(current, True, "cheating"), current, issued=True)
    assert held.code == grpc.StatusCode.PERMISSION_DENIED and "(cheating)" in held.detail


def test_arena_ladder_run_cuts_off_a_bot_suspended_by_another_process(tmp_path):
    """The same executor runs `arena ladder run`: a launched bot suspended by `arena bot
    suspend` mid-ladder is cut off and stopped; its seats in the ladder's later matches (the
    schedule is fixed) fault at once instead of waiting for it to connect."""
    db = tmp_path / "arena.db"
    arena("bot", "add", "slow", "--command", f"python {SLOW_BOT}", "--db", str(db))
    for name in ("r1", "r2"):
        arena("bot", "add", name, "--command", RANDOM, "--db", str(db))
    log = tmp_path / "ladder.log"
    with open(log, "w") as out:
        ladder = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "arena",
                "ladder",
                "run",
                "lad",
                "--game",
                "balloon",
                "-k",
                "3",
                "--bots",
                "slow,r1,r2",
                "--rounds",
                "4",
                "--seed",
                "1",
                "-j",
                "1",
                "--move-ms",
                "5000",
                "--no-progress",
                "--db",
                str(db),
                "--run-dir",
                str(tmp_path / "runs"),
            ],
            cwd=ROOT,
            stdout=out,
            stderr=out,
            text=True,
            start_new_session=True,
        )
    bots = tmp_path / "runs" / "lad" / "bots"  # its lanes' work directories
    try:

        def slow_playing():
            if ladder.poll() is not None:
                raise AssertionError(f"the ladder ended first:\n{log.read_text()[-3000:]}")
            # Connected and playing (not still starting: its seats would then fault as "not
            # connected", the suspension cutting off no stream): it has acted in a match, in
            # the lane (its rotation's) that plays this one.
            for index in running_with(db, "slow"):
                ((rotation,),) = query(db, "SELECT rotation FROM matches WHERE idx = ?", index)
                workdir = bots / lane_key("slow", rotation)
                if processes_in(workdir) and (workdir / "playing").exists():
                    return index + 1
            return None

        index = wait_until(slow_playing, "the slow bot in a match", timeout=60) - 1
        arena("bot", "suspend", "slow", "--reason", "cheating", "--db", str(db))
        suspended_at = time.monotonic()
        wait_until(
            lambda: bot_processes(bots, "slow") == [], "the bot's processes to end", timeout=10
        )
        stopped_s = time.monotonic() - suspended_at
        assert ladder.wait(scaled(60)) == 0, log.read_text()[-3000:]
        rest_s = time.monotonic() - suspended_at
    finally:
        if ladder.poll() is None:
            ladder.kill()
            ladder.wait()
    rows = faults_in(db, "slow")
    total = 4 * 3  # 4 rounds of a set of 3 (margins mode: no opening round)
    assert query(db, "SELECT count(*) FROM matches WHERE status = 'completed'") == [(total,)]
    faulted = {i for i, _, _ in rows}
    assert faulted == set(range(index, total)), rows  # this match and every later one
    assert {kind for _, kind, _ in rows} == {"disconnect"}, rows
    assert "suspended (cheating)" in rows[0][2], rows
    assert processes_in(tmp_path) == []
    print(
        f"FIGURE revoke_ladder: from arena bot suspend's exit to the end of the launched bot's "
        f"process {stopped_s * 1000:.0f} ms; the ladder's {total - index} matches from the one "
        f"in progress on done {rest_s:.1f} s after it"
    )
    assert rest_s < 20  # not connect_ms (20 s) per match


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_node_bot_stops_when_suspended(tmp_path):
    """Bots in other languages see the same statuses: the example Node bot stops at
    PERMISSION_DENIED instead of reconnecting."""
    db, token = ladder_db(tmp_path)
    server = Server(tmp_path, db, ["--allow-remote"])
    try:
        wait_until(server.up, "the web server", server=server)
        bot = RemoteBot(
            tmp_path,
            server,
            token,
            1,
            ("node", str(ROOT / "example_bots" / "node_random" / "index.js")),
        )
        try:
            wait_until(
                lambda: query(
                    db,
                    "SELECT count(*) FROM results r JOIN bots b "
                    "ON b.id = r.bot_id WHERE b.name = 'owner'",
                )[0][0],
                "the Node bot's first match",
                server=server,
            )
            arena("bot", "suspend", "owner", "--reason", "cheating", "--db", str(db))
            assert bot.proc.wait(CUT_OFF_S + 5) == 1, bot.stderr()
        finally:
            bot.stop()
    finally:
        assert server.stop() == 0
    log = bot.stderr()
    assert "refused this bot" in log and "suspended (cheating)" in log, log[-3000:]
    assert "reconnecting" not in log, log[-3000:]
