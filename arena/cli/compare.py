"""`arena compare NEW BASE`: is NEW better than BASE? A paired, sequential A/B test."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from .common import (
    build_game,
    db_option,
    exit_if_interrupted,
    game_options,
    open_store,
    report_run,
    resumable_run,
    run_options,
    table_options,
)

ROOT = Path(__file__).resolve().parents[2]


def error_rate_option(name: str, help: str):
    """One of the test's two error rates (docs/compare.md)."""
    return click.option(
        name,
        type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
        default=0.05,
        show_default=True,
        help=help,
    )


def default_name(new: str, base: str, game: str, k: int) -> str:
    """A comparison's name from its bots: '@' (a version) becomes '.v'."""
    clean = lambda s: re.sub(r"[^A-Za-z0-9_.-]", "_", s.replace("@", ".v"))  # noqa: E731
    return f"compare-{clean(new)}-vs-{clean(base)}-{game}{k}"[:64]


@click.command("compare")
@click.argument("new")
@click.argument("base")
@table_options("Players per table: NEW (or BASE) and k-1 opponents.")
@click.option(
    "--opponents",
    help="Comma-separated registered bots to play against (at least k-1; default: the "
    "example bots of the game, registered as example-* if they are not yet).",
)
@click.option(
    "--min-gain",
    type=click.FloatRange(0, min_open=True),
    default=1.0,
    show_default=True,
    metavar="D",
    help="The test asks: does NEW score at least D points per match more than BASE? (With "
    "--non-regression: does NEW lose D points per match or nothing?)",
)
@click.option(
    "--non-regression",
    is_flag=True,
    help="Test that NEW is no worse, as fishtest's non-regression tests: H0 'NEW loses D "
    "points per match' against H1 'NEW loses nothing'; the verdict is 'not worse' or 'worse'.",
)
@error_rate_option("--alpha", "The chance of saying 'better' when NEW is no better.")
@error_rate_option("--beta", "The chance of saying 'not better' when NEW is better by D.")
@click.option(
    "--max-matches",
    type=click.IntRange(4, 10**6),
    default=2000,
    show_default=True,
    help="Stop undecided after this many matches.",
)
@click.option(
    "--name",
    help="The comparison's name (default: from NEW, BASE and the game); the "
    "same command again resumes it.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**53 - 1),
    help="The comparison's seed: its deals follow from it (random for a new one).",
)
@game_options
@run_options()
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@db_option
def compare_cmd(
    new,
    base,
    game,
    table_size,
    opponents,
    min_gain,
    non_regression,
    alpha,
    beta,
    max_matches,
    name,
    seed,
    variant,
    as_json,
    db,
    run,
):
    """Is NEW better than BASE? Both play the same deals, in the same seats, against the same
    opponents; a sequential test on the paired score differences stops as soon as it can say
    "better" (by at least --min-gain points per match) or "not better", at the error rates
    asked for (docs/compare.md)."""
    from arena.compare.runner import CompareSettings, run_comparison
    from arena.compare.verdict import outcome_json
    from arena.ladder.runner import ExecutorSetupError
    from arena.schedule import random_seed
    from arena.store import UnknownLadder

    the_game = build_game(game, table_size, variant)
    name = name or default_name(new, base, game, table_size)
    with open_store(db, write=True) as store:
        # NAME@N is that version, NAME the latest (arena bot update)
        new_bot, base_bot = store.resolve_bot(new).name, store.resolve_bot(base).name
        if opponents is None:
            names = _example_opponents(store, game)
        else:
            names = tuple(
                store.resolve_bot(b.strip()).name  # UnknownBot says what to do
                for b in opponents.split(",")
                if b.strip()
            )
        if seed is None:
            try:
                seed = store.get_ladder(name).seed
            except UnknownLadder:
                seed = random_seed()
    if new_bot == base_bot:
        raise click.UsageError(
            f"NEW and BASE are the same bot ({new_bot}); compare two bots or "
            "two versions of one (NAME@N)"
        )
    if {new_bot, base_bot} & set(names):
        raise click.UsageError(
            "NEW and BASE cannot also be opponents; leave them out of --opponents"
        )
    if len(set(names)) < table_size - 1:
        raise click.UsageError(
            f"tables of {table_size} need at least {table_size - 1} distinct "
            f"opponents; --opponents names {len(set(names))}"
        )
    settings = CompareSettings(
        db=db,
        name=name,
        new=new_bot,
        base=base_bot,
        opponents=tuple(dict.fromkeys(names)),
        game=game,
        table_size=table_size,
        options=dict(the_game.options),
        min_gain=min_gain,
        non_regression=non_regression,
        alpha=alpha,
        beta=beta,
        max_matches=max_matches,
        seed=seed,
        run=run,
    )
    click.echo(
        f"comparing {new_bot} (NEW) with {base_bot} (BASE) as {name}: {game}, tables of "
        f"{table_size}, against {', '.join(settings.opponents)}",
        err=True,
    )
    with resumable_run(ExecutorSetupError):
        result = run_comparison(
            settings, on_progress=lambda o: click.echo(progress_line(settings, o), err=True)
        )
    report_run(result.errors)
    if as_json:
        click.echo(json.dumps(outcome_json(settings, result), indent=2))
    else:
        click.echo(verdict_line(settings, result))
    exit_if_interrupted(result.interrupted)


def _example_opponents(store, game: str) -> tuple[str, ...]:
    """The opponents a comparison plays against when none are named: the example bots of the
    game (its GameKit.example_bots), registered under their names the first time they are
    needed."""
    from arena.games import game_kit
    from arena.store import UnknownBot

    examples = game_kit(game).example_bots
    if not examples:
        raise click.UsageError(f"{game} has no example bots: name the opponents with --opponents")
    names = []
    for bot, script in examples.items():
        try:
            store.get_bot(bot)
        except UnknownBot:
            path = ROOT / "example_bots" / script
            if not path.exists():
                raise click.UsageError(
                    f"the example bots are not here ({path} is missing); name the opponents "
                    "with --opponents"
                ) from None
            store.add_bot(bot, f"python {path}")
        names.append(bot)
    return tuple(names)


def progress_line(settings, o) -> str:
    s = o.status
    if s.n < 2:
        return f"{o.matches} matches, {s.n} deals: the test needs 2 deals before it can say more"
    return (
        f"{o.matches} matches, {s.n} deals: NEW {s.mean:+.2f} points per match "
        f"(95% interval {s.low:+.2f} to {s.high:+.2f}){_los(o)}; LLR {s.llr:.2f} "
        f"(bounds {s.lower:.2f}, {s.upper:.2f})"
    )


def _effect(o) -> str:
    effect = o.gain.effect_size()
    if effect is None:
        return ""
    d, low, high = effect
    return f", effect size d {d:+.2f} ({low:+.2f} to {high:+.2f})"


def _los(o) -> str:
    los = o.gain.los()
    return "" if los is None else f", LOS {100 * los:.1f}%"


def verdict_line(settings, o) -> str:
    from arena.compare import sprt

    s = o.status
    what = {
        sprt.BETTER: f"better: {settings.new} gains at least {settings.min_gain:g} points per "
        f"match over {settings.base}",
        sprt.NOT_BETTER: f"not better: {settings.new} does not gain {settings.min_gain:g} "
        f"points per match over {settings.base}",
        sprt.NOT_WORSE: f"not worse: {settings.new} does not lose {settings.min_gain:g} points "
        f"per match against {settings.base}",
        sprt.WORSE: f"worse: {settings.new} loses {settings.min_gain:g} points per match against "
        f"{settings.base}",
        sprt.UNDECIDED: f"undecided after {s.n} deals (--max-matches {settings.max_matches})",
    }.get(o.verdict or "", "stopped before a verdict")
    return (
        f"verdict: {what} (mean {s.mean:+.2f}, 95% interval {s.low:+.2f} to {s.high:+.2f}"
        f"{_los(o)}{_effect(o)}; "
        f"LLR {s.llr:.2f}, bounds {s.lower:.2f} and {s.upper:.2f}; {s.n} deals, "
        f"{o.matches} matches)"
    )
