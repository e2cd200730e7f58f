"""The public export of finished sets' matches (issue 33, item 2): JSON Lines, one completed
match a line, for training and analysis (docs/rl.md, docs/web.md#the-public-export). Only
matches of finished sets are in it, as only they are public (disclosure.py): the query is
BrowseQueries.finished_replays, under the same rule as the pages. Written by `arena export` and
served by GET /api/ladders/{ladder}/export.jsonl; no web framework here.

The same matches can be written as Parquet (`write_parquet`, `arena export --format parquet`,
GET /api/ladders/{ladder}/export.parquet): a column per field of the line (`finished` a UTC
timestamp, `replay` the same JSON text, since its moves mix numbers and lists, which no one
Arrow type holds) and, for filtering without parsing it, the replay's `seat_names`, `scores` and
`ranks` (PARQUET_COLUMNS). It needs pyarrow, Arena's optional `export` extra; without it,
ParquetUnavailable says how to install it.

Each line (SCHEMA, version EXPORT_VERSION) holds the match's place (ladder, index, set, round,
rotation), when it finished (UTC, ISO 8601) and its replay in arena.replay's format (`config`,
`seed`, `seat_names`, `moves` as [seat, action, ms, by the referee], `faults`, `scores`,
`ranks`, ...), which `arena replay` and arena.replay.rerun re-run through the engine.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import IO, Any, BinaryIO, Iterator

from arena.store.browse import BrowseQueries, ExportRow

EXPORT_FORMAT = "arena-export"
EXPORT_VERSION = 1

# The JSON Schema (2020-12) of one line.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "One match of Arena's public export",
    "type": "object",
    "required": [
        "format",
        "version",
        "ladder",
        "index",
        "set",
        "round",
        "rotation",
        "finished",
        "replay",
    ],
    "additionalProperties": False,
    "properties": {
        "format": {"const": EXPORT_FORMAT},
        "version": {"const": EXPORT_VERSION},
        "ladder": {"type": "string"},
        "index": {"type": "integer", "minimum": 0},
        "set": {"type": "integer", "minimum": 0, "description": "its duplicate set"},
        "round": {"type": "integer", "minimum": 0},
        "rotation": {"type": "integer", "minimum": 0},
        "finished": {"type": "string", "description": "when it finished, UTC, ISO 8601"},
        "replay": {
            "type": "object",
            "required": ["format", "config", "seed", "seat_names", "moves", "scores", "ranks"],
            "properties": {
                "config": {
                    "type": "object",
                    "required": ["game", "num_players", "options"],
                },
                "seed": {"type": "integer"},
                "seat_names": {"type": "array", "items": {"type": "string"}},
                "moves": {
                    "type": "array",
                    "items": {"type": "array", "minItems": 4, "maxItems": 4},
                },
                "scores": {"type": "array", "items": {"type": "integer"}},
                "ranks": {"type": "array", "items": {"type": "integer"}},
                "faults": {"type": "array"},
            },
        },
    },
}


def day(text: str) -> float:
    """YYYY-MM-DD (UTC midnight) or a full ISO 8601 time, as a Unix time; ValueError saying
    what to give otherwise."""
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a date: give YYYY-MM-DD (UTC) or an ISO 8601 time"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def line(row: ExportRow) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "ladder": row.ladder,
        "index": row.index,
        "set": row.set_index,
        "round": row.round,
        "rotation": row.rotation,
        "finished": dt.datetime.fromtimestamp(row.finished, dt.UTC).isoformat(),
        "replay": row.replay,
    }


def lines(
    q: BrowseQueries,
    ladder: str,
    since: float | None = None,
    until: float | None = None,
    **page: Any,
) -> Iterator[tuple[int, str]]:
    """The export of `ladder`: (match index, its JSON line, newline included), one at a time;
    `page` is finished_replays' after and limit. Raises UnknownLadder."""
    for row in q.finished_replays(ladder, since, until, **page):
        yield row.index, json.dumps(line(row), separators=(",", ":")) + "\n"


def write(
    q: BrowseQueries,
    ladder: str,
    out: IO[str],
    since: float | None = None,
    until: float | None = None,
) -> int:
    """Write the export of `ladder` to `out`; how many matches."""
    n = 0
    for _, text in lines(q, ladder, since, until):
        out.write(text)
        n += 1
    return n


# The Parquet export's columns (write_parquet): the line's fields, then the replay's results.
PARQUET_COLUMNS = (*SCHEMA["required"], "seat_names", "scores", "ranks")
PARQUET_ROW_GROUP = 1000  # matches a row group: a few MB of replays, read and written at once
PARQUET_EXTRA = "pip install 'arena[export]' (scripts/setup installs it)"


class ParquetUnavailable(RuntimeError):
    """pyarrow, which writes Parquet, is not installed (Arena's optional `export` extra)."""


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ParquetUnavailable(
            f"the Parquet export needs pyarrow, Arena's optional `export` extra: {PARQUET_EXTRA}; "
            "or export JSON Lines, which needs nothing more"
        ) from None
    return pyarrow, pyarrow.parquet


def parquet_schema() -> Any:
    """The Parquet export's Arrow schema (PARQUET_COLUMNS); ParquetUnavailable without pyarrow."""
    pa, _ = _pyarrow()

    def list_of(kind: Any) -> Any:  # named as Parquet names a list's items: read back the same
        return pa.list_(pa.field("element", kind))

    return pa.schema(
        [
            ("format", pa.string()),
            ("version", pa.int32()),
            ("ladder", pa.string()),
            ("index", pa.int64()),
            ("set", pa.int64()),
            ("round", pa.int64()),
            ("rotation", pa.int64()),
            ("finished", pa.timestamp("us", tz="UTC")),
            ("replay", pa.string()),  # JSON: the line's `replay`
            ("seat_names", list_of(pa.string())),
            ("scores", list_of(pa.int64())),
            ("ranks", list_of(pa.int64())),
        ],
        metadata={"format": EXPORT_FORMAT, "version": str(EXPORT_VERSION)},
    )


def _parquet_row(row: ExportRow) -> dict[str, Any]:
    doc = line(row)
    doc["finished"] = dt.datetime.fromtimestamp(row.finished, dt.UTC)
    doc["replay"] = json.dumps(row.replay, separators=(",", ":"))
    doc["seat_names"] = row.replay["seat_names"]
    doc["scores"] = row.replay["scores"]
    doc["ranks"] = row.replay["ranks"]
    return doc


def write_parquet(
    q: BrowseQueries,
    ladder: str,
    out: str | BinaryIO,
    since: float | None = None,
    until: float | None = None,
    **page: Any,
) -> tuple[int, int]:
    """Write the export of `ladder` to `out` (a path or a binary file) as Parquet, a row group
    at a time; `page` is finished_replays' after and limit. (How many matches, the last one's
    index or -1.) Raises ParquetUnavailable without pyarrow (before reading anything),
    UnknownLadder."""
    pa, pq = _pyarrow()
    schema = parquet_schema()
    n, last = 0, -1
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        batch: list[dict[str, Any]] = []
        for row in q.finished_replays(ladder, since, until, **page):
            batch.append(_parquet_row(row))
            n, last = n + 1, row.index
            if len(batch) == PARQUET_ROW_GROUP:
                writer.write_table(pa.Table.from_pylist(batch, schema))
                batch = []
        if batch or not n:  # an empty export is a file with the schema and no rows
            writer.write_table(pa.Table.from_pylist(batch, schema))
    return n, last
