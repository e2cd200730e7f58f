"""Helpers for the web tests: a database of real matches, a uvicorn server on a free port in a
background thread, a live source that a test advances move by move, and a real ladder of bots
that hold each match until the test lets it go."""

from __future__ import annotations

import atexit
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import uvicorn

from arena.referee.lanes import lane_key
from arena.results import MoveRecord
from arena.store import Store
from arena.web.sample import build_demo, random_result
from tests.cli import ROOT, arena_command, ladder_run_args, start_arena
from tests.timing import scaled

CHROMIUM = "/usr/bin/chromium"
# The screenshots the browser tests take go to docs/img (the pictures docs/web.md and the README
# show) only when asked, `ARENA_SCREENSHOTS=docs scripts/test tests/web`; otherwise to a
# temporary folder removed when the test process ends, so that a run leaves the tree as it was.
DOCS_IMG = ROOT / "docs" / "img"
_screenshots: Path | None = None


def screenshot_path(name: str) -> str:
    """Where the screenshot `name` (for example "home-phone.png") is written."""
    global _screenshots
    if _screenshots is None:
        if os.environ.get("ARENA_SCREENSHOTS") == "docs":
            _screenshots = DOCS_IMG
        else:
            _screenshots = Path(tempfile.mkdtemp(prefix="arena-screenshots-"))
            atexit.register(shutil.rmtree, _screenshots, ignore_errors=True)
    return str(_screenshots / name)


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


GATED = ROOT / "tests" / "bots" / "gated_bot.py"
CHATTY = ROOT / "tests" / "bots" / "chatty_bot.py"


class MatchIndexes:
    """Tells the gated bots (tests/bots/gated_bot.py) which ladder match each of their matches
    is: a bot sees only an opaque match id, which the store maps to its match (the matches'
    match_key). A thread writes DIR/match-ID holding the index of each running match, in each
    gate folder that exists, as soon as the store has started the match; and keeps the gates
    `open` opened in every gate folder.

    A launched lane's work directory is a tmpfs mounted at its launch, hiding what was written
    there before: a gate opened once would be lost for a lane launched (or relaunched after an
    idle stop) later, whose bot would then hold each match until its move deadline."""

    def __init__(self, db: Path, gates: Sequence[Path]):
        self.db, self.gates = db, list(gates)
        self._opened: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="match-indexes")

    def start(self) -> "MatchIndexes":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def open(self, name: str) -> None:
        """Open the gate `name` (a match's index, or "all") in every gate folder, now and in
        the folders of lanes launched later."""
        self._opened.add(name)
        self._write_gates()

    def _run(self) -> None:
        while not self._stop.wait(0.01):  # a poll period, not a synchronisation
            for key, index in self._running():
                self._write(f"match-{key}", str(index))
            self._write_gates()

    def _write_gates(self) -> None:
        for name in list(self._opened):
            self._write(f"open-{name}", "")

    def _write(self, name: str, text: str) -> None:
        """DIR/name holding `text` in each gate folder that exists and lacks it."""
        for gate in self.gates:
            told = gate / name
            if gate.is_dir() and not told.exists():
                part = gate / f".{name}.part"
                try:
                    part.write_text(text)
                    os.replace(part, told)  # whole or absent: the bot never reads half
                except FileNotFoundError:
                    # A lane's work directory is removed at its end: the file is written
                    # again at the next poll if the gate is there again.
                    pass

    def _running(self) -> list[tuple[str, int]]:
        if not self.db.exists():
            return []
        try:
            con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=5)
            try:
                return con.execute(
                    "SELECT match_key, idx FROM matches WHERE status = 'running' "
                    "AND match_key IS NOT NULL"
                ).fetchall()
            finally:
                con.close()
        except sqlite3.OperationalError:  # no schema yet: the run is creating it
            return []


# The admin key of the test app (`client`): it opens every bot's log excerpts.
ADMIN_KEY = "the-web-tests-admin-key"


def build_db(path: Path) -> Path:
    """The demo database (arena.web.sample.build_demo): 6 bots, a Balloon ladder of 3 and a
    Boom ladder of 4 played by random legal moves, one match of each running, frank
    suspended."""
    build_demo(str(path))
    return path


@dataclass
class LaunchedLadder:
    """A Balloon ladder of 3 played by launched bots through `arena ladder run` (real
    sandboxes): crasher (tests/support/crashing_bot.py: crashes in every match), chatty
    (tests/bots/chatty_bot.py: says what it decides) and r1 (random); one set, 3 matches."""

    path: Path
    ladder: str
    tokens: dict[str, str]
    owner_keys: dict[str, str]


RANDOM_BOT = "python example_bots/random_bot.py"


def run_launched_ladder(tmp: Path) -> LaunchedLadder:
    from tests.support.crashing_bot import crashing_bot

    bot = crashing_bot(tmp / "crasher")
    db = tmp / "arena.db"
    with Store(db) as store:
        tokens = {
            "crasher": store.add_bot("crasher", directory=str(bot)),
            "chatty": store.add_bot("chatty", f"python {CHATTY}", cwd=ROOT),
            "r1": store.add_bot("r1", RANDOM_BOT, cwd=ROOT),
        }
        owner_keys = {name: store.new_owner_key(name) for name in tokens}
    args = ladder_run_args("l", "crasher,chatty,r1", db, k=3, run_dir=tmp / "runs")
    # One duplicate set of three matches, no opening round (these tests count its matches).
    args += ["--rounds", "1", "--seed", "3", "-j", "1", "--move-ms", "5000", "--no-opening-round"]
    done = subprocess.run(
        arena_command(*args), cwd=ROOT, capture_output=True, text=True, timeout=scaled(240)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return LaunchedLadder(db, "l", tokens, owner_keys)


def completed_in_open_set(db: Path, ladder: str) -> Any:
    """A completed match (store.matches' record) whose set still has a match running: one
    whose deal nothing public may show yet."""
    with Store(db, readonly=True) as store:
        matches = store.matches(ladder)
    running = next(m for m in matches if m.status == "running")
    return next(m for m in matches if m.set_index == running.set_index and m.status == "completed")


class ServerThread:
    """uvicorn serving `app` on a free loopback port in a thread; `stop()` ends it."""

    def __init__(self, app: Any):
        self.app = app
        # IPPROTO_TCP so that asyncio sets TCP_NODELAY on accepted connections.
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))  # the OS picks a free port; uvicorn gets the socket
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._ready = threading.Event()
        ready = self._ready

        class _Server(uvicorn.Server):
            async def startup(self, sockets=None):  # noqa: ANN001 - uvicorn's signature
                await super().startup(sockets=sockets)
                ready.set()

            def install_signal_handlers(self) -> None:
                pass  # not the main thread; the test stops the server itself

        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self.server = _Server(config)
        self.thread = threading.Thread(
            target=self.server.run,
            kwargs={"sockets": [self.sock]},
            name="web-test-server",
            daemon=True,
        )

    def start(self) -> "ServerThread":
        self.thread.start()
        if not self._ready.wait(scaled(20)):
            self.stop()
            raise RuntimeError("the test web server did not start within 20 s")
        return self

    def stop(self) -> None:
        feeds = getattr(self.app.state, "feeds", None)
        if feeds is not None:
            feeds.close()  # open event streams end, so that uvicorn can stop
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
        if self.thread.is_alive():
            raise RuntimeError("the test web server did not stop within 10 s")


class FakeLive:
    """A LiveSource for one running match: its moves come from a real random playout, and the
    test reveals them with `advance(n)`, as the referee would while the match is played."""

    def __init__(self, db: Path, ladder: str):
        with Store(db, readonly=True) as store:
            match = store.matches(ladder, ("running",))[0]
            config = store.get_ladder(ladder).config
        self.ladder, self.index = ladder, match.index
        full = random_result(config, match.seed, match.seats, random.Random(5))
        self._all: list[MoveRecord] = list(full.moves)
        self._doc = {"config": config, "seed": match.seed, "seat_names": list(match.seats)}
        self._shown = 0
        self._lock = threading.Lock()

    @property
    def total(self) -> int:
        return len(self._all)

    def advance(self, n: int) -> int:
        with self._lock:
            self._shown = min(self.total, self._shown + n)
            return self._shown

    def live_replay(self, ladder: str, index: int) -> dict[str, Any] | None:
        if (ladder, index) != (self.ladder, self.index):
            return None
        with self._lock:
            moves = [m.to_list() for m in self._all[: self._shown]]
        return {**self._doc, "moves": moves}


def gate_dirs(runs: Path, ladder: str, bots: Sequence[str]) -> list[Path]:
    """The work directories of every lane of the gated bots of start_gated_ladder (tables of
    3: lanes 0-2, arena.referee.lanes), where each looks for its gates: a match's bot is the
    lane of its rotation."""
    return [runs / ladder / "bots" / lane_key(b, r) for b in bots for r in range(3)]


def start_gated_ladder(
    db: Path, runs: Path, ladder: str, bots: Sequence[str], seed: int, workers: int, log: IO
) -> subprocess.Popen:
    """`arena ladder run LADDER` on `db` in its own session, its output to `log`: Balloon for 3
    among `bots`, added as launched tests/bots/gated_bot.py (each holds its matches until the
    test opens its gate, in its lanes' work directories: gate_dirs), two rounds, `workers`
    matches at once; no opening round, so that every match is a rotation of one of two sets of
    three (an opening match, a set of one, is tests/store's test_an_opening_match_...)."""
    with Store(db) as store:
        for b in bots:
            store.add_bot(b, f"python {GATED}", cwd=ROOT)
    # Made now (private, as the launcher makes them), so that a gate opened for every lane
    # reaches a lane launched later too.
    for gate in gate_dirs(runs, ladder, bots):
        gate.mkdir(mode=0o700, parents=True, exist_ok=True)
    return start_arena(
        *ladder_run_args(
            ladder,
            ",".join(bots),
            db,
            [
                *("--rounds", "2", "--seed", str(seed), "-j", str(workers)),
                *("--move-ms", "60000", "--no-opening-round"),
            ],
            k=3,
            run_dir=runs,
        ),
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
