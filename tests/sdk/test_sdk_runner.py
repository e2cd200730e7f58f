"""The SDK runner against a scripted referee over real loopback gRPC: concurrent matches,
declared concurrency, failures inside act(), reconnects, refusals, and the example bots (the
Python random bot and the Node.js bot) as real processes."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import shutil
import signal
import socket
import sys
import threading
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from sdk_fake_referee import (
    MATCHES,
    ROOT,
    TIMEOUT,
    TOKEN,
    HangUp,
    Referee,
    Session,
    balloon_request,
    boom_request,
    pb,
    play_matches,
    serving,
)

from arena_sdk import (
    Backoff,
    BalloonObservation,
    BoomAction,
    BoomObservation,
    Bot,
    Card,
    Match,
    MatchResult,
    RefusedError,
    Rejection,
    serve,
    wire,
)
from arena_sdk.runner import CAPACITY_RETRY_S
from tests.tls import self_signed_loopback_certificate

FAST = Backoff(initial=0.01, factor=2.0, maximum=0.05)
NODE_BOT = ROOT / "example_bots" / "node_random"


def run_async(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 4 * TIMEOUT))


@asynccontextmanager
async def bot_task(bot: Bot, address: str, token: str = TOKEN) -> AsyncIterator[asyncio.Task[None]]:
    """The SDK serving `bot` in this event loop; stopped (and awaited) on exit."""
    stop = asyncio.Event()
    task = asyncio.create_task(serve(bot, address, token, backoff=FAST, stop=stop))
    try:
        yield task
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.shield(task), TIMEOUT)


@asynccontextmanager
async def bot_process(
    cmd: Sequence[str], address: str, token: str, log_path: Path, **extra_env: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    """A bot as a real process, configured as the launcher does (environment variables)."""
    env = dict(
        os.environ,
        ARENA_ADDRESS=address,
        ARENA_TOKEN=token,
        **extra_env,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "sdk"), os.environ.get("PYTHONPATH")])),
    )
    with open(log_path, "wb") as log_file:  # noqa: ASYNC230 (a local file: instant)
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            env=env,
            cwd=ROOT,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
        )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


class RecordingBot(Bot):
    """Plays with match.rng and records every call, per match, in order."""

    name = "recorder"
    max_concurrent = 3

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.lock = threading.Lock()
        self.calls: dict[str, list[str]] = defaultdict(list)
        self.matches: dict[str, Match] = {}
        self.observations: dict[str, list[Any]] = defaultdict(list)
        self.results: dict[str, MatchResult] = {}
        self.rejections: list[Rejection] = []
        self.both_ended = asyncio.Event()

    def on_match_start(self, match: Match) -> None:
        with self.lock:
            self.calls[match.match_id].append("start")
            self.matches[match.match_id] = match

    def act(self, observation: Any, legal_actions: Sequence[Any], match: Match) -> Any:
        with self.lock:
            self.calls[match.match_id].append("act")
            self.observations[match.match_id].append(observation)
        assert 0 < match.clock.remaining() <= match.clock.move_ms / 1000
        return match.rng.choice(legal_actions)

    def on_rejected(self, match: Match, rejection: Rejection) -> None:
        with self.lock:
            self.calls[match.match_id].append("rejected")
            self.rejections.append(rejection)

    def on_match_end(self, match: Match, result: MatchResult) -> None:
        with self.lock:
            self.calls[match.match_id].append("end")
            self.results[match.match_id] = result
            if len(self.results) == len(MATCHES):
                self.loop.call_soon_threadsafe(self.both_ended.set)


def referee_playing(
    moves: int, reject: bool = False, batched_as_asked: bool = False
) -> tuple[Referee, asyncio.Event]:
    """A scripted referee that plays both MATCHES with the bot (play_matches: `moves` requests
    each, a rejection with `reject`, the first requests batched for a bot that asks for
    batches with `batched_as_asked`), and an event set once it has."""
    done = asyncio.Event()

    async def script(r: Referee, s: Session) -> None:
        batched = batched_as_asked and s.hello.batches
        await play_matches(r, s, moves=moves, reject=reject, batched=batched)
        done.set()

    return Referee(script), done


async def play_both_matches(bot: RecordingBot) -> Referee:
    """The scripted referee plays its two matches (6 moves each, one boom reply rejected) with
    `bot` to their end; it is given back once the exchange is checked: no protocol problem,
    every request answered, each match's calls in protocol order, the rejection where it was
    sent."""
    referee, _ = referee_playing(moves=6, reject=True)
    async with serving(referee) as address, bot_task(bot, address):
        await asyncio.wait_for(bot.both_ended.wait(), TIMEOUT)
    assert referee.problems == []
    assert len(referee.replies) == 12
    assert bot.calls["m-balloon"] == ["start"] + ["act"] * 6 + ["end"]
    assert bot.calls["m-boom"] == ["start", "act", "rejected"] + ["act"] * 5 + ["end"]
    return referee


def test_serves_two_concurrent_matches_in_order_with_legal_tagged_replies() -> None:
    async def main() -> None:
        bot = RecordingBot()
        referee = await play_both_matches(bot)
        [hello] = referee.hellos
        assert (
            hello.token,
            hello.name,
            hello.protocol_version,
            hello.max_concurrent,
            hello.batches,
        ) == (TOKEN, "recorder", 1, 3, True)

        boom = bot.matches["m-boom"]
        assert (boom.game, boom.num_players, boom.seat, boom.seat_names) == (
            "boom",
            3,
            0,
            ("me", "b", "c"),
        )
        assert dict(boom.options) == {"advanced": True, "ruse": True, "series": False}
        assert (boom.limits.move_ms, boom.limits.time_bank_ms, boom.limits.max_strikes) == (
            1000,
            5000,
            3,
        )
        assert boom.bot_seed == 2**64 - 1
        assert dict(bot.matches["m-balloon"].options) == {}

        # match.rng is seeded from bot_seed: the same choices again from a fresh generator.
        rng = random.Random(12345)
        expected = [
            wire.action_to_proto(
                rng.choice(wire.legal_actions(balloon_request("m-balloon", 0, k).legal_actions))
            )
            for k in range(6)
        ]
        assert [r.action for r in referee.replies if r.match_id == "m-balloon"] == expected

        first_boom = bot.observations["m-boom"][0]
        assert isinstance(first_boom, BoomObservation)
        assert first_boom.hand == tuple(
            wire.card(c) for c in boom_request("m-boom", 0, 0).observation.boom.hand
        )
        assert first_boom.revealed[1].cards == (Card(44, "grey", 3),)
        assert first_boom.revealed[1].ruse and not first_boom.revealed[0].ruse
        assert not first_boom.paradise[0][0].face_up
        assert all(isinstance(o, BalloonObservation) for o in bot.observations["m-balloon"])

        [rejection] = bot.rejections
        assert rejection.fault == "timeout" and rejection.detail == "no reply within 1000 ms"
        assert isinstance(rejection.played_instead, BoomAction)

        result = bot.results["m-balloon"]
        assert (result.scores, result.ranks, result.reason) == ((10, 4, -3), (0, 1, 2), "completed")
        assert isinstance(result.final_observation, BalloonObservation)

    run_async(main())


class QuickRecordingBot(RecordingBot):
    """A quick bot: its calls run on the SDK's event loop thread, never in a worker."""

    quick = True

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def act(self, observation: Any, legal_actions: Sequence[Any], match: Match) -> Any:
        self.threads.add(threading.get_ident())
        return super().act(observation, legal_actions, match)


def test_a_quick_bot_plays_on_the_event_loop_in_protocol_order() -> None:
    async def main() -> None:
        bot = QuickRecordingBot()
        await play_both_matches(bot)
        assert bot.threads == {threading.get_ident()}  # this test's loop thread

    run_async(main())


def test_a_batch_of_requests_is_answered_with_one_batch_of_replies() -> None:
    """ActionRequests (sent to a bot whose Hello said `batches`): each request is answered, and
    replies ready together (a quick bot's are, at once) go back as one ActionReplies."""

    async def main() -> pb.BotMessage:
        answer: asyncio.Future[pb.BotMessage] = asyncio.get_running_loop().create_future()

        async def script(r: Referee, s: Session) -> None:
            assert s.hello.batches
            await s.send(welcome=pb.Welcome(bot_name="quick", protocol_version=1, max_concurrent=3))
            for start in MATCHES:
                await s.send(match_start=start)
            await s.send(
                action_requests=pb.ActionRequests(
                    requests=[balloon_request("m-balloon", 1, 0), boom_request("m-boom", 2, 0)]
                )
            )
            answer.set_result(await s.recv())

        async with serving(Referee(script)) as address, bot_task(QuickRecordingBot(), address):
            return await asyncio.wait_for(answer, TIMEOUT)

    msg = run_async(main())
    assert msg.WhichOneof("kind") == "action_replies"
    replies = list(msg.action_replies.replies)
    assert [(r.match_id, r.request_id) for r in replies] == [("m-balloon", 1), ("m-boom", 2)]
    assert replies[0].action in list(balloon_request("m-balloon", 1, 0).legal_actions)
    assert replies[1].action in list(boom_request("m-boom", 2, 0).legal_actions)


def test_quick_must_be_a_bool() -> None:
    class Odd(Bot):
        quick = "yes"  # type: ignore[assignment]

        def act(self, observation: Any, legal_actions: Sequence[Any], match: Match) -> Any:
            return legal_actions[0]

    with pytest.raises(ValueError, match="quick must be True or False"):
        run_async(serve(Odd(), "127.0.0.1:9", TOKEN))


class BarrierBot(Bot):
    """act() waits until `parties` calls are inside it at once; records the worker threads."""

    def __init__(self, max_concurrent: int, parties: int) -> None:
        self.max_concurrent = max_concurrent  # type: ignore[misc]
        self.barrier = threading.Barrier(parties, timeout=TIMEOUT)
        self.threads: set[int] = set()

    def act(self, observation: Any, legal_actions: Sequence[Any], match: Match) -> Any:
        self.threads.add(threading.get_ident())
        self.barrier.wait()
        return legal_actions[0]


@pytest.mark.parametrize("max_concurrent", [1, 2])
def test_declared_max_concurrent_is_sent_and_is_the_number_of_act_threads(
    max_concurrent: int,
) -> None:
    """With 2, two act() calls must be inside act at once (the barrier needs both); with 1,
    every call runs on the same single thread even though the referee sends two requests."""

    async def main() -> None:
        referee, done = referee_playing(moves=3)
        bot = BarrierBot(max_concurrent, parties=max_concurrent)
        async with serving(referee) as address, bot_task(bot, address):
            await asyncio.wait_for(done.wait(), TIMEOUT)
        assert referee.problems == []
        assert referee.hellos[0].max_concurrent == max_concurrent
        assert len(bot.threads) == max_concurrent

    run_async(main())


class FaultyBot(Bot):
    def __init__(self, mode: str) -> None:
        self.mode = mode

    def act(self, observation: Any, legal_actions: Sequence[Any], match: Match) -> Any:
        if self.mode == "raise":
            return {}["no such key"]
        return "not an action"


@pytest.mark.parametrize("mode", ["raise", "wrong type"])
def test_failing_act_is_logged_and_answered_at_once_with_an_empty_action(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> pb.ActionReply:
        replied: asyncio.Future[pb.ActionReply] = asyncio.get_running_loop().create_future()

        async def script(r: Referee, s: Session) -> None:
            await s.send(welcome=pb.Welcome(bot_name="faulty", protocol_version=1))
            await s.send(match_start=MATCHES[0])
            await s.send(action_request=balloon_request("m-balloon", 7, 0))
            replied.set_result((await s.recv()).action)

        async with serving(Referee(script)) as address, bot_task(FaultyBot(mode), address):
            return await asyncio.wait_for(replied, TIMEOUT)

    with caplog.at_level(logging.ERROR, logger="arena_sdk"):
        reply = run_async(main())
    assert (reply.match_id, reply.request_id) == ("m-balloon", 7)
    assert not reply.HasField("action")
    [record] = [r for r in caplog.records if "act() failed" in r.getMessage()]
    assert record.exc_info is not None
    assert record.exc_info[0] is (KeyError if mode == "raise" else TypeError)


@pytest.mark.parametrize("drop", ["abort UNAVAILABLE", "end stream"])
def test_reconnects_after_the_referee_drops_the_stream(drop: str) -> None:
    async def main() -> None:
        done = asyncio.Event()
        first_replies: list[pb.BotMessage] = []

        async def script(r: Referee, s: Session) -> None:
            if s.number == 1:
                await s.send(welcome=pb.Welcome(bot_name="x", protocol_version=1))
                await s.send(match_start=MATCHES[0])
                await s.send(action_request=balloon_request("m-balloon", 1, 0))
                first_replies.append(await s.recv())
                if drop == "abort UNAVAILABLE":
                    await s.context.abort(grpc.StatusCode.UNAVAILABLE, "referee restarting")
                raise HangUp
            await play_matches(r, s, moves=4)
            done.set()

        referee = Referee(script)
        async with serving(referee) as address, bot_task(RecordingBot(), address):
            await asyncio.wait_for(done.wait(), TIMEOUT)
        assert len(referee.hellos) == 2
        assert referee.problems == []
        assert [m.action.request_id for m in first_replies] == [1]
        assert len(referee.replies) == 4 * len(MATCHES)

    run_async(main())


@dataclass(frozen=True)
class CountingBackoff(Backoff):
    """The fast backoff, recording each attempt; `third` is set at the third failure."""

    attempts: list[int] = field(default_factory=list)
    third: asyncio.Event = field(default_factory=asyncio.Event)

    def delay(self, attempt: int, rng: random.Random) -> float:
        self.attempts.append(attempt)
        if len(self.attempts) == 3:
            self.third.set()
        return super().delay(attempt, rng)


def test_backs_off_while_no_referee_listens_and_stops_when_asked() -> None:
    async def main() -> None:
        # A bound but not listening socket: connections to its port are refused.
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            backoff = CountingBackoff(initial=0.001, maximum=0.004)
            stop = asyncio.Event()
            task = asyncio.create_task(
                serve(
                    RecordingBot(),
                    f"127.0.0.1:{sock.getsockname()[1]}",
                    TOKEN,
                    backoff=backoff,
                    stop=stop,
                )
            )
            await asyncio.wait_for(backoff.third.wait(), TIMEOUT)
            stop.set()
            await asyncio.wait_for(task, TIMEOUT)
        assert backoff.attempts[:3] == [0, 1, 2]

    run_async(main())


class Connected(logging.Handler):
    """Sets `event` when the SDK logs that it is connected: the bot has read the referee's
    Welcome (runner.py logs it right after)."""

    def __init__(self, event: asyncio.Event) -> None:
        super().__init__(logging.INFO)
        self.event = event

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("connected to "):
            self.event.set()  # the SDK logs from the event loop's own thread


def test_a_refusal_for_capacity_is_retried_soon_whatever_the_backoff() -> None:
    # The referee refuses the first two streams for capacity (as server.py says it); the bot's
    # backoff would wait 15 to 30 s, then 30 s: it retries within CAPACITY_RETRY_S instead.
    # Timed to the bot's reading of the Welcome, on the bot's side: the fake referee's own
    # write of it, in the same process and event loop as the bot, was seen to complete only
    # tens of seconds after the bot had read it (a grpc.aio server and client sharing one
    # loop), which is not what this test is about.
    async def main() -> None:
        async def script(r: Referee, s: Session) -> None:
            if s.number <= 2:
                await s.context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "8 streams from ipv4:127.0.0.1 are already waiting to say Hello; this "
                    "stream is refused for capacity, not for anything it did: retry in a "
                    "second or two",
                )
            await s.send(welcome=pb.Welcome(bot_name="b", protocol_version=1, max_concurrent=1))

        connected = asyncio.Event()
        handler = Connected(connected)
        sdk_log = logging.getLogger("arena_sdk")
        level = sdk_log.level
        sdk_log.addHandler(handler)
        sdk_log.setLevel(logging.INFO)
        backoff = CountingBackoff(initial=30.0, maximum=30.0)
        try:
            async with serving(Referee(script)) as address:
                stop = asyncio.Event()
                task = asyncio.create_task(
                    serve(RecordingBot(), address, TOKEN, backoff=backoff, stop=stop)
                )
                started = asyncio.get_running_loop().time()
                await asyncio.wait_for(connected.wait(), 3 * CAPACITY_RETRY_S + 2)
                took = asyncio.get_running_loop().time() - started
                stop.set()
                await asyncio.wait_for(task, TIMEOUT)
        finally:
            sdk_log.removeHandler(handler)
            sdk_log.setLevel(level)
        assert backoff.attempts == [0, 1]
        assert took < 2 * CAPACITY_RETRY_S + 1

    run_async(main())


def test_backoff_grows_exponentially_with_jitter_up_to_its_maximum() -> None:
    backoff, rng = Backoff(initial=0.5, factor=2.0, maximum=30.0), random.Random(1)
    for attempt, ceiling in [(0, 0.5), (1, 1.0), (3, 4.0), (6, 30.0), (40, 30.0)]:
        delays = {backoff.delay(attempt, rng) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays) and len(delays) > 1


def test_a_bot_without_act_is_refused_before_connecting() -> None:
    with pytest.raises(TypeError, match="must implement act"):
        run_async(serve(Bot(), "127.0.0.1:9", TOKEN))


def test_an_unsupported_protocol_version_is_a_refusal_naming_the_versions() -> None:
    async def main() -> None:
        async def script(r: Referee, s: Session) -> None:
            raise AssertionError("a refused bot must not be served")

        async with serving(Referee(script, versions=(2, 3))) as address:
            with pytest.raises(RefusedError) as refused:
                await serve(RecordingBot(), address, TOKEN, backoff=FAST)
        assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert "protocol version 1" in str(refused.value)
        assert "speaks: 2, 3" in str(refused.value)

    run_async(main())


def test_random_bot_process_plays_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    async def main() -> None:
        referee, done = referee_playing(moves=8)
        cmd = [sys.executable, "example_bots/random_bot.py"]
        async with (
            serving(referee) as address,
            bot_process(cmd, address, TOKEN, tmp_path / "bot.log") as proc,
        ):
            await asyncio.wait_for(done.wait(), TIMEOUT)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
        assert referee.problems == []
        assert referee.hellos[0].name == "random"
        assert len(referee.replies) == 8 * len(MATCHES)
        assert "Traceback" not in (tmp_path / "bot.log").read_text()

    run_async(main())


def test_random_bot_process_connects_over_tls_with_the_given_root_certificate(
    tmp_path: Path,
) -> None:
    cert, key = self_signed_loopback_certificate()
    (tmp_path / "ca.pem").write_bytes(cert)

    async def main() -> None:
        referee, done = referee_playing(moves=2)
        tls = grpc.ssl_server_credentials([(key, cert)])
        cmd = [sys.executable, "example_bots/random_bot.py"]
        async with (
            serving(referee, tls) as address,
            bot_process(
                cmd, address, TOKEN, tmp_path / "bot.log", ARENA_TLS_CA=str(tmp_path / "ca.pem")
            ) as proc,
        ):
            await asyncio.wait_for(done.wait(), TIMEOUT)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
        assert referee.problems == [] and len(referee.replies) == 2 * len(MATCHES)

    run_async(main())


def test_unknown_token_ends_the_bot_process_with_a_clear_message(tmp_path: Path) -> None:
    async def main() -> int:
        async def script(r: Referee, s: Session) -> None:
            raise AssertionError("an unknown token must not be served")

        cmd = [sys.executable, "example_bots/random_bot.py"]
        async with (
            serving(Referee(script)) as address,
            bot_process(cmd, address, "stolen-token", tmp_path / "bot.log") as proc,
        ):
            return await asyncio.wait_for(proc.wait(), TIMEOUT)

    assert run_async(main()) == 1
    log = (tmp_path / "bot.log").read_text()
    assert "does not know this bot's token" in log and "'stolen-token'" in log
    assert "Traceback" not in log


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_bot_process_plays_both_games(tmp_path: Path) -> None:
    assert (NODE_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir(), (
        f"the Node.js bot's packages are missing: run `npm ci` in {NODE_BOT}"
    )

    async def main() -> None:
        referee, done = referee_playing(moves=8, reject=True, batched_as_asked=True)
        async with (
            serving(referee) as address,
            bot_process(
                ["node", str(NODE_BOT / "index.js")], address, TOKEN, tmp_path / "bot.log"
            ) as proc,
        ):
            await asyncio.wait_for(done.wait(), TIMEOUT)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
        assert referee.problems == [], (tmp_path / "bot.log").read_text()
        assert referee.hellos[0].name == "node-random" and referee.hellos[0].batches
        assert len(referee.replies) == 8 * len(MATCHES)
        assert referee.batches == [2]  # the batch of two first requests, answered as one

    run_async(main())
