"""`arena rankings`: kept apart from the ladder commands so that it imports only the store."""

from __future__ import annotations

import json

import click

from .common import db_option, open_store


@click.command("rankings")
@click.argument("ladder", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@db_option
def rankings_cmd(ladder, as_json, db):
    """Show a ladder's rankings (default: the newest ladder)."""
    with open_store(db) as store:
        rankings = store.rankings(ladder)
    if as_json:
        click.echo(json.dumps(rankings.to_dict(), indent=2))
    else:
        print_rankings(rankings)


def print_rankings(rankings) -> None:
    opts = " ".join(k for k, v in rankings.options.items() if v)
    click.echo(f"\n{rankings.ladder}: {rankings.game}{' ' + opts if opts else ''}, tables of "
               f"{rankings.table_size}, {rankings.completed}/{rankings.scheduled} matches played, "
               f"{rankings.rated} rated ({rankings.rating_mode} rating)")
    header = (f"{'rank':>4}  {'bot':<24} {'rating':>7} {'mu':>7} {'sigma':>6} {'matches':>7} "
              f"{'mean score':>10} {'wins':>5} {'faults':>6}")
    click.echo(header)
    click.echo("-" * len(header))
    for s in rankings.standings:
        mean = f"{s.mean_score:.2f}" if s.mean_score is not None else "-"
        click.echo(f"{s.rank:>4}  {s.bot:<24} {s.conservative:>7.2f} {s.mu:>7.2f} "
                   f"{s.sigma:>6.2f} {s.matches:>7} {mean:>10} {s.wins:>5} {s.faults:>6}")


