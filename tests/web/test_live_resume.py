"""A match's event stream resumed with Last-Event-ID, on a real server (uvicorn on a socket,
the demo database, a live match): the id the server sent resumes the stream from there; a
header that is no id this server sends (5,000 digits, a non-ASCII byte, a digit of another
script) is a 400 saying what the header is for, with nothing logged as an error."""

from __future__ import annotations

import http.client
import json
import logging

import httpx
import pytest

from arena.web.routes.live import MAX_FRAMES


class Errors(logging.Handler):
    """What the server logs at ERROR or above (uvicorn's logger does not propagate to root)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def errors():
    handler = Errors()
    loggers = [logging.getLogger(n) for n in ("", "uvicorn", "uvicorn.error", "arena")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)


def get_raw(server, path: str, last_event_id: bytes) -> tuple[int, bytes]:
    """GET `path` with the Last-Event-ID header's bytes as given (httpx sends only ASCII)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.putrequest("GET", path)
        conn.putheader("Last-Event-ID", last_event_id)
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def first_frames(server, path: str, last_event_id: str) -> dict:
    headers = {"Last-Event-ID": last_event_id}
    with httpx.stream("GET", server.url + path, headers=headers, timeout=30) as r:
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if line.startswith("data: "):
                return json.loads(line[6:])
    raise AssertionError(f"{path} ended without an event")


@pytest.mark.parametrize(
    "header",
    [
        b"7" * 5000,  # int() refuses more than 4,300 digits
        str(MAX_FRAMES + 1).encode(),
        b"\xb2",  # latin-1's superscript two: str.isdigit() says yes, int() says no
        "\u0663".encode(),  # ARABIC-INDIC DIGIT THREE, as UTF-8 bytes
        b"12\xff",
        b"-1",
        b"1.5",
    ],
)
def test_a_last_event_id_this_server_never_sent_is_a_400_with_nothing_logged(
    server, live, errors, header
):
    path = f"/api/ladders/{live.ladder}/matches/{live.index}/events"
    status, body = get_raw(server, path, header)
    assert status == 400, body[:300]
    message = json.loads(body)["error"]["message"]
    assert "the Last-Event-ID header is" in message and "send it back as received" in message
    assert len(message) < 400  # the header is not echoed whole
    assert errors.records == []


def test_the_id_the_server_sent_resumes_the_stream_from_there(server, live, errors):
    live.advance(6)
    path = f"/api/ladders/{live.ladder}/matches/{live.index}/events"
    whole = first_frames(server, path, "")
    assert whole["since"] == 0 and len(whole["frames"]) >= 3
    resumed = first_frames(server, path, "2")
    assert resumed["since"] == 2 and resumed["frames"] == whole["frames"][2:]
    # Larger than what there is (a stream of a match replayed shorter): nothing to send again.
    past = first_frames(server, path, str(MAX_FRAMES))
    assert past["since"] == MAX_FRAMES and past["frames"] == []
    assert errors.records == []
