"""Live updates pushed to open pages as server-sent events: one feed per thing watched (a
match's public frames, a ladder's standings and matches being played), shared by all its
watchers.

A feed exists while someone watches it. Its one poller reads the store (and the live source)
on a worker thread about once a second — whatever the number of watchers — through the same
public queries and the same Disclosure as the pages, and wakes the watchers when what it read
changed; each watcher's stream then sends what that watcher has not had yet. So a hundred
spectators of a match cost one re-run of its moves a second, not a hundred, plus each one's
share of the sending (measured in docs/benchmarks.md). Nothing is pushed that the page itself
would not show at that moment.

A stream ends after `lifetime` seconds (the browser's EventSource reconnects by itself, with
Last-Event-ID for a match), when its watcher is too slow to keep up, or at `close()`, so that a
server that stops is never held up by open streams.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

import anyio.to_thread

from arena.deadlines import within

log = logging.getLogger("arena.web.live")

KEEPALIVE = 15.0  # seconds between comments on a quiet stream (proxies drop silent ones)
RETRY_MS = 1000  # how soon the browser reconnects after a stream ends


@dataclass
class Snapshot:
    """What a feed read last: `frames` (a match's public frames, all of them so far) or `html`
    (a ladder's live part), `status`, and `done` once nothing more will change."""

    version: int = 0
    status: str | None = None
    done: bool = False
    frames: list[dict[str, Any]] = field(default_factory=list)
    html: str | None = None


class Feed:
    """One watched thing: its poller and the events of its watchers."""

    def __init__(self, key: tuple, read: Callable[[Snapshot], Snapshot | None]):
        self.key = key
        self.read = read  # blocking: the next snapshot from the last one, or None if unchanged
        self.snapshot = Snapshot()
        self.watchers: set[asyncio.Event] = set()
        self.task: asyncio.Task | None = None
        self.failed: str | None = None
        self._encoded: dict[tuple[int, int], str] = {}  # (from frame, version) -> event text

    def frames_event(self, have: int) -> str:
        """The SSE event with the frames from `have` on; encoded once for all the watchers at
        the same place."""
        snap = self.snapshot
        key = (have, snap.version)
        text = self._encoded.get(key)
        if text is None:
            body = {
                "status": snap.status,
                "done": snap.done,
                "since": have,
                "frames": snap.frames[have:],
            }
            text = (
                f"id: {len(snap.frames)}\nevent: frames\n"
                f"data: {json.dumps(body, separators=(',', ':'))}\n\n"
            )
            if len(self._encoded) > 64:
                self._encoded.clear()
            self._encoded[key] = text
        return text

    def html_event(self) -> str:
        key = (-1, self.snapshot.version)
        text = self._encoded.get(key)
        if text is None:
            body = json.dumps({"html": self.snapshot.html}, separators=(",", ":"))
            text = f"event: ladder\ndata: {body}\n\n"
            self._encoded.clear()
            self._encoded[key] = text
        return text


class Feeds:
    """The app's feeds (create_app makes one; no module-level state)."""

    def __init__(self, *, interval: float = 1.0, lifetime: float = 30.0, max_watchers: int = 2000):
        self.interval = interval
        self.lifetime = lifetime
        self.max_watchers = max_watchers
        self.closed = False
        self._feeds: dict[tuple, Feed] = {}

    def close(self) -> None:
        """End every stream within a second (thread-safe: a flag each stream looks at)."""
        self.closed = True

    def watchers(self) -> int:
        return sum(len(f.watchers) for f in self._feeds.values())

    async def stream(
        self,
        key: tuple,
        read: Callable[[Snapshot], Snapshot | None],
        encode: Callable[[Feed, int], tuple[str, int] | None],
        have: int = 0,
    ) -> AsyncIterator[str]:
        """The events of the feed `key` for one watcher that has `have` (frames) already.
        `encode(feed, have)` gives the event to send now and the new `have`, or None if the
        watcher is up to date."""
        if self.watchers() >= self.max_watchers:
            yield f"retry: {RETRY_MS * 10}\nevent: busy\ndata: {{}}\n\n"
            return
        feed = self._feeds.get(key)
        if feed is None:
            feed = self._feeds[key] = Feed(key, read)
        wake = asyncio.Event()
        feed.watchers.add(wake)
        if feed.task is None or feed.task.done():
            feed.task = asyncio.ensure_future(self._poll(feed))
        try:
            yield f"retry: {RETRY_MS}\n\n"
            if feed.snapshot.version:
                wake.set()  # someone else's poller already read it: send it at once
            started = last_sent = time.monotonic()
            while not self.closed and time.monotonic() - started < self.lifetime:
                try:
                    await within(wake.wait(), 1.0)
                except TimeoutError:
                    if time.monotonic() - last_sent > KEEPALIVE:
                        last_sent = time.monotonic()
                        yield ": keepalive\n\n"
                    continue
                wake.clear()
                if feed.failed:
                    yield f"event: failed\ndata: {json.dumps({'error': feed.failed})}\n\n"
                    return
                sent = encode(feed, have)
                if sent is not None:
                    text, have = sent
                    last_sent = time.monotonic()
                    yield text
                if feed.snapshot.done:
                    return
        finally:
            feed.watchers.discard(wake)
            if not feed.watchers:
                if feed.task is not None:
                    feed.task.cancel()
                if self._feeds.get(key) is feed:
                    del self._feeds[key]

    async def _poll(self, feed: Feed) -> None:
        while feed.watchers and not self.closed:
            try:
                new = await anyio.to_thread.run_sync(feed.read, feed.snapshot)
            except Exception as err:  # the store unreadable, a replay that does not re-run
                log.warning("live feed %s: %s", feed.key, err)
                feed.failed = str(err)
                new = None
            if new is not None or feed.failed:
                if new is not None:
                    new.version = feed.snapshot.version + 1
                    feed.snapshot = new
                for wake in feed.watchers:
                    wake.set()
                if feed.snapshot.done or feed.failed:
                    return
            await asyncio.sleep(self.interval)
