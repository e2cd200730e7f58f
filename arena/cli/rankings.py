"""`arena rankings`: kept apart from the ladder commands so that it imports only the store."""

from __future__ import annotations

import json

import click

from arena.ratings import MARGINS_MODE, SETTLED_CONFIDENCE

from .common import db_option, open_store


@click.command("rankings")
@click.argument("ladder", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 1.0, max_open=True),
    default=SETTLED_CONFIDENCE,
    show_default=True,
    help="A rank is settled when its bot is better than the next one, and worse than "
    "the one before, with at least this probability.",
)
@db_option
def rankings_cmd(ladder, as_json, confidence, db):
    """Show a ladder's rankings (default: the newest ladder)."""
    with open_store(db) as store:
        rankings = store.rankings(ladder, confidence)
    if as_json:
        click.echo(json.dumps(rankings.to_dict(), indent=2))
    else:
        print_rankings(rankings)


def print_rankings(rankings) -> None:
    opts = " ".join(k for k, v in rankings.options.items() if v)
    click.echo(
        f"\n{rankings.ladder}: {rankings.game}{' ' + opts if opts else ''}, tables of "
        f"{rankings.table_size}, {rankings.completed}/{rankings.scheduled} matches played, "
        f"{rankings.rated} rated ({rankings.rating_mode} rating)"
    )
    opening = rankings.opening_round
    if opening is not None:
        click.echo(opening.describe())
    header = (
        f"{'rank':>5}  {'bot':<24} {'rating':>7} {'mu':>7} {'sigma':>6} {'> next':>6} "
        f"{'matches':>7} {'mean score':>10} {'wins':>5} {'faults':>6}"
    )
    click.echo(header)
    click.echo("-" * len(header))
    for s in rankings.standings:
        mean = f"{s.mean_score:.2f}" if s.mean_score is not None else "-"
        rank = f"{s.rank}{'' if s.settled else '?'}"
        better = f"{s.p_better_than_next:.2f}" if s.p_better_than_next is not None else "-"
        click.echo(
            f"{rank:>5}  {s.bot:<24} {s.conservative:>7.2f} {s.mu:>7.2f} "
            f"{s.sigma:>6.2f} {better:>6} {s.matches:>7} {mean:>10} {s.wins:>5} "
            f"{s.faults:>6}"
        )
    if not rankings.all_settled:
        source = (
            "the score-margin model, their covariance included"
            if rankings.rating_mode == MARGINS_MODE
            else "TrueSkill posteriors"
        )
        click.echo(
            f"?: not settled. '> next' is the probability that the bot is better than "
            f"the next one ({source}); a rank is settled when that and the "
            f"previous bot's are at least {rankings.confidence:g}."
        )
