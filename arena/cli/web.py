"""`arena web` (the pages and JSON API over a database, read-only) and `arena report` (the same
pages written as a static site)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .common import db_option, listen_options, store_errors


@click.command("web")
@db_option
@listen_options(
    8000,
    "Address to listen on (0.0.0.0 for every interface).",
    "Port to listen on (0: any free port).",
)
def web_cmd(db: Path, host: str, port: int) -> None:
    """Serve the ladders, ratings, matches and replays of a database as web pages and a JSON
    API (read-only: it never writes to the database, so it can run beside a ladder).

    Example: arena web --db arena.db --port 8000, then open http://127.0.0.1:8000/
    """
    try:
        import uvicorn

        from arena.web.factory import create_app
    except ImportError as err:
        raise click.ClickException(
            f"the web pages need the web extra ({err.name} is missing); install it with "
            "pip install 'arena[web]'"
        ) from None
    with store_errors():
        app = create_app(db)
    click.echo(f"serving {db} read-only on http://{host}:{port}/ (Ctrl-C stops)")

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # Open event streams end within a second (Feeds.close), so uvicorn's graceful
            # stop, which waits for every open response, is not held up by them for 30 s.
            app.state.feeds.close()
            super().handle_exit(sig, frame)

    server = Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn raises the stopping signal again once it stopped
        pass
    if not server.started:
        raise click.ClickException(
            f"could not serve on {host}:{port} (the reason is above); choose another --port"
        )


@click.command("report")
@db_option
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the site into (created if missing).",
)
@click.option(
    "--matches",
    "max_matches",
    type=click.IntRange(0, 1_000_000),
    default=500,
    show_default=True,
    help="Newest matches per ladder to give a page.",
)
def report_cmd(db: Path, out: Path, max_matches: int) -> None:
    """Write the web pages of a database as a static site that opens with no server (from
    file:// or any static host): ladders, bots, match lists and match pages with replays.

    Example: arena report --db arena.db --out site/, then open site/index.html
    """
    try:
        from arena.web.report import write_report
    except ImportError as err:
        raise click.ClickException(
            f"the report needs the web extra ({err.name} is missing); install it with "
            "pip install 'arena[web]'"
        ) from None
    try:
        with store_errors():
            summary = write_report(db, out, max_matches=max_matches)
    except OSError as err:
        raise click.ClickException(f"cannot write the report into {out}: {err}") from None
    click.echo(
        f"wrote {summary.pages} pages ({summary.matches} matches) into {out}; "
        f"open {out / 'index.html'}"
    )


def _day(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    from arena.web.export import day

    if value is None:
        return None
    try:
        return day(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


@click.command("export")
@db_option
@click.option("--ladder", required=True, help="The ladder whose finished sets to export.")
@click.option("--since", callback=_day, help="Only matches finished on or after (YYYY-MM-DD, UTC).")
@click.option("--until", callback=_day, help="Only matches finished before (YYYY-MM-DD, UTC).")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The file to write (- for standard output).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "parquet"]),
    help="JSON Lines or Parquet (needs pyarrow: pip install 'arena[export]'); by default "
    "Parquet if --out ends in .parquet, else JSON Lines.",
)
def export_cmd(
    db: Path, ladder: str, since: float | None, until: float | None, out: Path, fmt: str | None
) -> None:
    """Write the completed matches of a ladder's finished sets (only they are public) as JSON
    Lines, one match a line with its replay, or as Parquet, one match a row
    (docs/web.md#the-public-export, schema in arena/web/export.py): for training bots
    (docs/rl.md) and analysis.

    Example: arena export --db arena.db --ladder balloon-3 --since 2026-12-01 --out b3.jsonl
    """
    import os
    import sys

    from arena.store.browse import BrowseQueries
    from arena.web import export as public_export

    from .common import open_store

    if fmt is None:
        fmt = "parquet" if out.suffix == ".parquet" else "jsonl"
    if fmt == "parquet":
        try:
            public_export.parquet_schema()  # says what to install before anything is read
        except public_export.ParquetUnavailable as err:
            raise click.ClickException(str(err)) from None

    def write(f: Any) -> int:
        if fmt == "parquet":
            return public_export.write_parquet(q, ladder, f, since, until)[0]
        return public_export.write(q, ladder, f, since, until)

    with open_store(db) as store:
        q = BrowseQueries(store)
        with store_errors():
            q.ladder(ladder)  # UnknownLadder says so before any file is made
        if str(out) == "-":
            n = write(sys.stdout.buffer if fmt == "parquet" else sys.stdout)
            click.echo(f"exported {n} matches of {ladder}", err=True)
            return
        part = out.with_name(f".{out.name}.part")
        try:
            with open(part, "wb" if fmt == "parquet" else "w") as f:
                n = write(f)
            os.replace(part, out)
        except OSError as err:
            raise click.ClickException(f"cannot write {out}: {err}") from None
        finally:
            part.unlink(missing_ok=True)
    click.echo(f"exported {n} matches of {ladder} (its finished sets) into {out}")
