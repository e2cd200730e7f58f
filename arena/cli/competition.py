"""`arena competition`: the organiser's commands (create, list, show, advance, archive) and
anyone's `verify` of a published results archive (docs/competitions.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from .common import db_option, open_store


@click.group("competition")
def competition_group() -> None:
    """Competitions: open uploads, a freeze, finals with fresh deals, published standings."""


@competition_group.command("create")
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@db_option
def create_cmd(config, db):
    """Create the competition CONFIG (a TOML file) describes; it is open from now. Run it
    with `arena serve --competition NAME`."""
    from arena.competitions import lifecycle
    from arena.competitions.config import CompetitionConfigError, load

    try:
        parsed = load(config)
    except CompetitionConfigError as err:
        raise click.ClickException(str(err)) from None
    with open_store(db, write=True) as store:
        try:
            comp = lifecycle.create(store, parsed, time.time())
        except CompetitionConfigError as err:
            raise click.ClickException(f"{config}: {err}") from None
    click.echo(
        f"competition {comp.name} is open: uploads until {_utc(comp.freeze_at)}, finals from "
        f"{_utc(comp.finals_at)}. Run it with: arena serve --competition {comp.name}"
    )


@competition_group.command("list")
@db_option
def list_cmd(db):
    """The competitions and their phases."""
    with open_store(db) as store:
        comps = store.list_competitions()
    if not comps:
        click.echo("no competitions yet; create one with arena competition create CONFIG")
    for c in comps:
        click.echo(f"{c.name:<24} {c.game}:{c.table_size}  {c.phase}")


@competition_group.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@db_option
def show_cmd(name, as_json, db):
    """A competition: its phase and times, its entrants, and once published its standings."""
    with open_store(db) as store:
        c = store.get_competition(name)
    if as_json:
        click.echo(json.dumps(c.summary(), indent=2))
        return
    click.echo(f"{c.name}: {c.game}, tables of {c.table_size}; {c.phase}")
    click.echo(f"  uploads close {_utc(c.freeze_at)}; finals from {_utc(c.finals_at)}")
    if c.entrants:
        click.echo(f"  entrants: {', '.join(c.entrants)}")
    if c.standings:
        click.echo(f"  final standings ({c.finals_end}):")
        for s in c.standings:
            better = "-" if s["p_better_than_next"] is None else f"{s['p_better_than_next']:.2f}"
            click.echo(
                f"  {s['rank']:>4}  {s['bot']:<24} [{s['low']:6.2f}, {s['high']:6.2f}]  "
                f"P(> next) {better}  {s['matches']} matches"
            )


@competition_group.command("advance")
@click.argument("name")
@db_option
def advance_cmd(name, db):
    """Move the competition on one phase now: open -> frozen -> finals (the finals are
    published by arena serve once they end by their rule)."""
    from arena.competitions import lifecycle

    with open_store(db, write=True) as store:
        before = store.get_competition(name).phase
        after = lifecycle.advance(store, name)
    click.echo(f"competition {name}: {before} -> {after.phase}")
    if after.entrants:
        click.echo(f"entrants: {', '.join(after.entrants)}")


@competition_group.command("archive")
@click.argument("name")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write it [default: NAME-results.zip].",
)
@db_option
def archive_cmd(name, output, db):
    """Write a published competition's results archive (standings, crosstable, every final
    match's replay and seed); check it with arena competition verify."""
    with open_store(db) as store:
        data = store.competition_archive(name)
        phase = store.get_competition(name).phase
    if data is None:
        raise click.ClickException(
            f"competition {name!r} is {phase}; its archive exists once it is published"
        )
    out = output or Path(f"{name}-results.zip")
    out.write_bytes(data)
    click.echo(f"wrote {out} ({len(data)} bytes)")


@competition_group.command("verify")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def verify_cmd(archive):
    """Check a results archive again: replay every match with the engines, recompute every
    rating, and say whether the standings follow. Exit 0 accepted, 1 rejected."""
    from arena.competitions.archive import ArchiveError, verify

    try:
        result = verify(archive.read_bytes())
    except ArchiveError as err:
        raise click.ClickException(f"{archive}: {err}") from None
    if result.accepted:
        click.echo(
            f"accepted: {result.matches} matches replayed, the ratings recomputed; the "
            "standings follow from the results"
        )
        return
    click.echo(f"rejected: {len(result.problems)} problems", err=True)
    for problem in result.problems[:20]:
        click.echo(f"  {problem}", err=True)
    raise SystemExit(1)


def _utc(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))
