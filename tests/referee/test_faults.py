"""Every fault kind, with real bot processes over real gRPC: the match ends with the right
outcome, the faulted seat ranks last, and no bot process is left behind."""

from __future__ import annotations

import dataclasses

import pytest

from arena.games import make_game
from arena.referee.host import RefereeHost
from arena.referee.launcher import ResourceLimits
from arena.referee.match import Limits
from arena.results import CRASH, DISCONNECT, ILLEGAL_ACTION, MALFORMED, TIMEOUT, UNKNOWN_REQUEST
from tests.timing import scaled

from .conftest import FAST, fault_bot, pid_alive, play


def kinds(result, seat):
    return [f.kind for f in result.faults if f.seat == seat]


def assert_clean(pids):
    assert [p for p in pids if pid_alive(p)] == []


@pytest.fixture
def played(run, tmp_path):
    """Plays a match among fault_bot modes (conftest.play's arguments) to its end and gives
    its result, once it has checked that no bot process was left behind."""

    def play_match(game: str, modes: list[str], **options):
        result, pids = run(play(tmp_path, game, modes, **options))
        assert_clean(pids)
        return result

    return play_match


@pytest.mark.parametrize("game", ["balloon", "boom"])
def test_good_bots_play_a_full_match_without_faults(played, game):
    n = 2 if game == "balloon" else 3
    result = played(game, ["good"] * n)
    assert result.faults == ()
    assert len(result.scores) == n and len(result.moves) > 0


@pytest.mark.parametrize(
    "mode,expected",
    [
        ("crash_start", CRASH),
        ("crash_mid", CRASH),
        ("hang", TIMEOUT),
        ("illegal", ILLEGAL_ACTION),
        ("wrong_game", MALFORMED),
        ("garbage", MALFORMED),
        ("bad_token", CRASH),
        ("wrong_version", CRASH),
    ],
)
def test_fault_is_an_outcome_and_ranks_last(played, mode, expected):
    result = played("balloon", [mode, "good", "good"])
    assert expected in kinds(result, 0), result.faults
    assert kinds(result, 1) == [] and kinds(result, 2) == []
    # The faulted seat ranks below every seat that did not fault, whatever the scores.
    assert result.ranks[0] > max(result.ranks[1], result.ranks[2])


def test_a_bot_that_never_connects_is_a_disconnect(tmp_path, run):
    async def main():
        async with RefereeHost(tmp_path) as host:
            procs = [
                await host.launch("no_connect", fault_bot("no_connect")),
                await host.launch("good", fault_bot("good")),
            ]
            # The good bot is connected first, so only the other one waits the connect time.
            assert await host.server.directory.wait_for("good", scaled(30)) is not None
            limits = dataclasses.replace(FAST, connect_ms=1500)
            result = await host.run_match(
                make_game("balloon", 2), 7, ["no_connect", "good"], limits
            )
        return result, [p.proc.pid for p in procs]

    result, pids = run(main())
    [fault] = [f for f in result.faults if f.seat == 0]
    assert fault.kind == DISCONNECT and fault.move == -1
    assert "not connected when the match started, nor within 1.5 s" in fault.detail
    assert kinds(result, 1) == [] and result.ranks[0] > result.ranks[1]
    assert_clean(pids)
    # One whose process exits first is a crash, said so.
    result, pids = run(play(tmp_path / "exits", "balloon", ["crash_start", "good"]))
    [fault] = [f for f in result.faults if f.seat == 0]
    assert fault.kind == CRASH and fault.detail == "the bot's process exited before it connected"


def test_too_slow_draws_on_the_bank_then_times_out(played, monkeypatch):
    # 250 ms against a 150 ms deadline: each move overruns by at least 100 ms, so a 600 ms
    # bank covers a few moves and then moves time out until the strikes retire the seat.
    monkeypatch.setenv("SLOW_MS", "250")
    limits = Limits(move_ms=150, time_bank_ms=600, max_strikes=2, connect_ms=8000)
    result = played("balloon", ["slow", "good"], limits=limits)
    timeouts = [f for f in result.faults if f.seat == 0]
    assert [f.kind for f in timeouts] == [TIMEOUT, TIMEOUT]
    slow_moves = [m for m in result.moves if m.seat == 0 and not m.default]
    assert len(slow_moves) >= 2 and all(m.elapsed_ms > 150 for m in slow_moves)


def test_reply_to_unknown_request_is_a_fault_but_play_goes_on(played):
    limits = dataclasses.replace(FAST, max_strikes=5)
    result = played("balloon", ["unknown_request", "good"], limits=limits)
    assert kinds(result, 0).count(UNKNOWN_REQUEST) == 2
    assert result.ranks[0] == 1


def test_disconnect_mid_match_retires_the_seat(played):
    result = played("boom", ["crash_mid", "good", "good"])
    faults = kinds(result, 0)
    assert faults in ([CRASH], [DISCONNECT])
    later = [m for m in result.moves if m.seat == 0][3:]
    assert later and all(m.default for m in later)


def test_children_of_an_unconfined_bot_die_with_its_group(tmp_path, played):
    # Unconfined (--no-sandbox), the process group is what ends a bot's children; in a sandbox
    # its PID namespace does (tests/reliability/test_sandbox.py).
    played("balloon", ["fork_exit", "good"], resource_limits=ResourceLimits(sandbox=False))
    child = int((tmp_path / "bots" / "fork_exit-0" / "child.pid").read_text())
    assert not pid_alive(child)
