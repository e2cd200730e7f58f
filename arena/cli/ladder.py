"""`arena ladder run|list` and `arena rankings`."""

from __future__ import annotations

import click

from arena.ratings import DEFAULT_RATING_MODE

from .common import (
    build_game,
    db_option,
    exit_if_interrupted,
    game_options,
    open_store,
    rating_mode_option,
    report_run,
    resumable_run,
    run_options,
    table_options,
)
from .rankings import print_rankings


@click.group("ladder")
def ladder_group():
    """Round-robin ladders with duplicate deals, each set rated by its score margins (or with
    TrueSkill: --rating-mode set or match)."""


@ladder_group.command("run")
@click.argument("name")
@table_options("Players per table.")
@click.option(
    "--bots", required=True, help="Comma-separated names of registered bots (arena bot add)."
)
@click.option(
    "--rounds",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="Repeat the round-robin with fresh seeds.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
    help="The ladder's seed: the whole schedule follows from it (random if omitted).",
)
@game_options
@rating_mode_option(
    f"Rate each duplicate set as one result by summed scores (set), or each "
    f"match on its own (match). A new ladder gets {DEFAULT_RATING_MODE} "
    "(docs/benchmarks.md#rating: fewer matches to the right ranking); an "
    "existing one keeps its own.",
)
@click.option(
    "--opening-round/--no-opening-round",
    default=None,
    help="Whether a new ladder opens with an opening round (one round of single matches, each "
    "table once with a fresh deal, rated match by match, before the duplicate sets; "
    "docs/store.md#schedule). Default: with one in the TrueSkill modes (set, match), without "
    "in margins mode, as measured (docs/benchmarks.md#rating). An existing ladder keeps what "
    "it was made with.",
)
@click.option(
    "--until-settled",
    type=click.FloatRange(0.5, 1.0, max_open=True),
    metavar="CONFIDENCE",
    help="After the rounds asked for, keep adding rounds until every bot is better "
    "than the next one at this confidence (for example 0.95), up to "
    "--max-rounds.",
)
@click.option(
    "--max-rounds",
    type=click.IntRange(1, 1000),
    help="With --until-settled: the most rounds the ladder may reach (required).",
)
@run_options()
@click.option(
    "--no-remote",
    is_flag=True,
    help="Refuse remote bots (registered with --remote): the run does not start if --bots "
    "names one. A remote bot runs on its owner's machine and can see every hand of a set "
    "over its rotations (docs/protocol.md); a ladder that seats one says so.",
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@db_option
def run_cmd(
    name,
    game,
    table_size,
    bots,
    rounds,
    seed,
    variant,
    rating_mode,
    opening_round,
    until_settled,
    max_rounds,
    no_remote,
    no_progress,
    db,
    run,
):
    """Run the ladder NAME (created on first run; the same command again resumes it)."""
    from arena import app
    from arena.ladder.runner import ExecutorSetupError

    the_game = build_game(game, table_size, variant)
    names = tuple(b.strip() for b in bots.split(",") if b.strip())
    if len(names) < table_size:
        raise click.UsageError(
            f"a ladder with tables of {table_size} needs at least "
            f"{table_size} bots; --bots names {len(names)}"
        )
    if until_settled is not None and max_rounds is None:
        raise click.UsageError(
            "--until-settled needs --max-rounds, the cap on rounds (for "
            "example --until-settled 0.95 --max-rounds 20)"
        )
    if max_rounds is not None and until_settled is None:
        raise click.UsageError("--max-rounds applies with --until-settled CONFIDENCE")
    if max_rounds is not None and max_rounds < rounds:
        raise click.UsageError(f"--max-rounds {max_rounds} is below --rounds {rounds}")
    settings = app.LadderSettings(
        db=db,
        name=name,
        game=game,
        table_size=table_size,
        bots=names,
        options=dict(the_game.options),
        rounds=rounds,
        seed=seed,
        rating_mode=rating_mode,
        opening_round=opening_round,
        until_settled=until_settled,
        max_rounds=max_rounds,
        run=run,
        progress=not no_progress,
        no_remote=no_remote,
        warn=lambda message: click.echo(f"warning: {message}", err=True),
    )
    with resumable_run(ExecutorSetupError):
        summary, rankings = app.run_ladder(settings)
    report_run(summary.errors)
    print_rankings(rankings)
    if until_settled is not None and not summary.interrupted and not summary.remaining:
        if rankings.all_settled:
            click.echo(f"every rank settled at {until_settled:g}")
        else:
            click.echo(
                f"not every rank settled at {until_settled:g} after {max_rounds} rounds "
                "(--max-rounds)",
                err=True,
            )
    exit_if_interrupted(summary.interrupted)


@ladder_group.command("list")
@db_option
def list_cmd(db):
    """List the ladders in the database."""
    with open_store(db) as store:
        ladders = store.list_ladders()
        # A ladder with an opening round: how far through it (its rankings' head counts it).
        openings = {
            ladder.name: store.rankings(ladder.name).opening_round
            for ladder in ladders
            if ladder.settings.get("opening_round")
        }
    if not ladders:
        click.echo("no ladders yet; run one with arena ladder run")
    for ladder in ladders:
        opts = " ".join(k for k, v in ladder.options.items() if v)
        if "comparison" in ladder.settings:
            opts = f"{opts} (a comparison: arena compare)".strip()
        opening = openings.get(ladder.name)
        if opening is not None:
            state = "done" if opening.done else f"{opening.completed}/{opening.matches}"
            opts = f"{opts} opening round {state}".strip()
        click.echo(
            f"{ladder.name:<24} {ladder.game:<8} k={ladder.table_size} "
            f"bots={len(ladder.bots)} matches {ladder.completed}/{ladder.num_matches}"
            f"{'  ' + opts if opts else ''}"
        )
