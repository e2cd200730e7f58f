"""The public export of finished sets (issue 33, item 2): JSON Lines read back against its
documented schema, with every completed match of a finished set in it and no match of a set
still being played, through `arena export` and GET /api/ladders/{ladder}/export.jsonl; each line's
replay re-runs to its result; dates and pages select as they say."""

from __future__ import annotations

import datetime as dt
import json
import sys

import jsonschema
from click.testing import CliRunner

from arena import replay
from arena.cli import main
from arena.store import FINISHED, Store
from arena.web.export import SCHEMA


def _expected(db, ladder: str) -> tuple[set[int], set[int]]:
    """(completed matches of finished sets, matches of sets not finished) of the ladder."""
    with Store(db, readonly=True) as store:
        matches = store.matches(ladder)
    sets: dict[int, list] = {}
    for m in matches:
        sets.setdefault(m.set_index, []).append(m)
    done = {
        m.index
        for ms in sets.values()
        if all(x.status in FINISHED for x in ms)
        for m in ms
        if m.status == "completed"
    }
    open_ = {
        m.index for ms in sets.values() if any(x.status not in FINISHED for x in ms) for m in ms
    }
    return done, open_


VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _read(text: str) -> list[dict]:
    docs = [json.loads(line) for line in text.splitlines()]
    for doc in docs:
        VALIDATOR.validate(doc)
    return docs


def test_the_export_holds_every_finished_set_and_nothing_of_an_open_one(web_db, client, tmp_path):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    for ladder in ("balloon3", "boom4"):
        done, open_ = _expected(web_db, ladder)
        assert done and open_, "the demo has both"  # a set is still being played
        out = tmp_path / f"{ladder}.jsonl"
        result = CliRunner().invoke(
            main, ["export", "--db", str(web_db), "--ladder", ladder, "--out", str(out)]
        )
        assert result.exit_code == 0, result.output
        docs = _read(out.read_text())
        indexes = [d["index"] for d in docs]
        assert indexes == sorted(done)  # all of them, in schedule order, once each
        assert not set(indexes) & open_
        for d in docs[:3]:  # a line's replay is a replay: it re-runs to its recorded result
            replay.verify(replay.check(d["replay"]))
        # The web's export is the same, a page at a time (Link: rel="next").
        lines, url = [], f"/api/ladders/{ladder}/export.jsonl?limit=25"
        while url:
            r = client.get(url)
            assert r.status_code == 200 and r.headers["content-type"] == "application/jsonl"
            lines += _read(r.text)
            link = r.headers.get("link")
            url = link[1 : link.index(">")].removeprefix("http://testserver") if link else ""
        assert lines == docs


def test_dates_select_by_when_a_match_finished(web_db, client):
    with Store(web_db, readonly=True) as store:
        finished = {m.index: m.finished for m in store.matches("balloon3", ("completed",))}
    done, _ = _expected(web_db, "balloon3")
    days = sorted({dt.datetime.fromtimestamp(finished[i], dt.UTC).date() for i in done})
    cut = days[len(days) // 2] if len(days) > 1 else days[0]
    since = client.get(f"/api/ladders/balloon3/export.jsonl?since={cut}&limit=5000")
    until = client.get(f"/api/ladders/balloon3/export.jsonl?until={cut}&limit=5000")
    after = {d["index"] for d in _read(since.text)}
    before = {d["index"] for d in _read(until.text)}
    assert after | before == done and not after & before
    start = dt.datetime.combine(cut, dt.time(), dt.UTC).timestamp()
    assert all(finished[i] >= start for i in after) and all(finished[i] < start for i in before)
    bad = client.get("/api/ladders/balloon3/export.jsonl?since=yesterday")
    assert bad.status_code == 422 and "give YYYY-MM-DD" in bad.json()["error"]["message"]
    assert client.get("/api/ladders/nope/export.jsonl").status_code == 404
    refused = CliRunner().invoke(
        main, ["export", "--db", str(web_db), "--ladder", "nope", "--out", "x"]
    )
    assert refused.exit_code == 1 and "no ladder called 'nope'" in refused.output


def _parquet_docs(table) -> list[dict]:
    """A Parquet export's rows as the JSON Lines export's lines: the same fields, `finished` an
    ISO 8601 text again and `replay` parsed; the replay's columns checked against it."""
    docs = []
    for row in table.to_pylist():
        replay = json.loads(row["replay"])
        assert [row.pop(k) for k in ("seat_names", "scores", "ranks")] == [
            replay["seat_names"],
            replay["scores"],
            replay["ranks"],
        ]
        doc = {**row, "finished": row["finished"].isoformat(), "replay": replay}
        VALIDATOR.validate(doc)
        docs.append(doc)
    return docs


def test_the_parquet_export_holds_the_json_lines_exports_rows(
    web_db, client, tmp_path, monkeypatch
):
    """`arena export --format parquet` (or --out NAME.parquet) and export.parquet: a real
    Parquet file, read back with pyarrow, row for row the JSON Lines export."""
    import io

    import pyarrow.parquet as pq

    from arena.web import export

    monkeypatch.setattr(export, "PARQUET_ROW_GROUP", 16)  # several row groups, as a big export
    ladder = "balloon3"
    jsonl, parquet = tmp_path / "b.jsonl", tmp_path / "b.parquet"
    for args in (["--out", str(jsonl)], ["--out", str(parquet)]):
        result = CliRunner().invoke(
            main, ["export", "--db", str(web_db), "--ladder", ladder, *args]
        )
        assert result.exit_code == 0, result.output
    lines = _read(jsonl.read_text())
    done, _ = _expected(web_db, ladder)
    assert len(lines) == len(done) > 16
    table = pq.read_table(parquet)
    assert table.schema.equals(export.parquet_schema(), check_metadata=True)
    assert table.column_names == list(export.PARQUET_COLUMNS)
    assert pq.ParquetFile(parquet).metadata.num_row_groups == -(-len(lines) // 16)
    assert _parquet_docs(table) == lines
    # --format says it whatever the file's name; - writes to standard output.
    named = tmp_path / "b.bin"
    result = CliRunner().invoke(
        main,
        [
            "export",
            "--db",
            str(web_db),
            "--ladder",
            ladder,
            "--format",
            "parquet",
            "--out",
            str(named),
        ],
    )
    assert result.exit_code == 0 and named.read_bytes()[:4] == b"PAR1"
    assert _parquet_docs(pq.read_table(named)) == lines
    # The web's, a page at a time as export.jsonl's.
    rows, url = [], f"/api/ladders/{ladder}/export.parquet?limit=25"
    while url:
        r = client.get(url)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/vnd.apache.parquet"
        rows += _parquet_docs(pq.read_table(io.BytesIO(r.content)))
        link = r.headers.get("link")
        url = link[1 : link.index(">")].removeprefix("http://testserver") if link else ""
    assert rows == lines
    # Nothing finished in the window: a file with the schema and no rows.
    r = client.get(f"/api/ladders/{ladder}/export.parquet?since=2100-01-01")
    empty = pq.read_table(io.BytesIO(r.content))
    assert empty.num_rows == 0 and empty.schema.equals(export.parquet_schema())


def test_without_pyarrow_parquet_is_refused_naming_the_extra(web_db, client, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` fails as if absent
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    out = tmp_path / "b.parquet"
    result = CliRunner().invoke(
        main, ["export", "--db", str(web_db), "--ladder", "balloon3", "--out", str(out)]
    )
    assert result.exit_code == 1 and "pip install 'arena[export]'" in result.output
    assert list(tmp_path.iterdir()) == []  # no file, not even a part
    r = client.get("/api/ladders/balloon3/export.parquet")
    assert r.status_code == 501 and "pip install 'arena[export]'" in r.json()["error"]["message"]
    # JSON Lines needs nothing more.
    assert client.get("/api/ladders/balloon3/export.jsonl?limit=1").status_code == 200
