"""`arena match` (one match between bot processes) and `arena replay` (re-run a replay file)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena import app, replay
from arena.games import game_names
from arena.referee.launcher import BotCommandError, resolve_command

from .common import (
    build_game,
    game_options,
    launch_limits,
    limit_options,
    run_dir_option,
    sandbox_option,
)


@click.command("match")
@click.argument("game", type=click.Choice(game_names()))
@click.argument("bots", nargs=-1, required=True)
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), help="Deal seed (random if omitted).")
@game_options
@limit_options
@click.option(
    "--replay",
    "replay_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the replay to this file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@run_dir_option(None, "Keep bot logs and work directories here (default: a temporary folder).")
@sandbox_option
def match_cmd(
    game,
    bots,
    seed,
    variant,
    limits,
    replay_path,
    as_json,
    run_dir,
    no_sandbox,
    bot_limits,
):
    """Play one GAME match between BOTS (each a command or a bot directory), one per seat.

    Example: arena match balloon "python example_bots/random_bot.py" "python example_bots/random_bot.py"
    """  # noqa: E501 (an example command, kept whole)
    the_game = build_game(game, len(bots), variant)
    try:
        commands = [resolve_command(b) for b in bots]
    except BotCommandError as err:
        raise click.UsageError(str(err)) from None
    if replay_path is not None and not replay_path.parent.exists():
        raise click.UsageError(f"cannot write the replay: {replay_path.parent} does not exist")
    names = app.seat_names_for(bots)
    resource_limits = launch_limits(no_sandbox, check_now=True, bot_limits=bot_limits)
    settings = app.MatchSettings(
        game=the_game,
        bots=tuple(zip(names, commands)),
        seed=app.random_seed() if seed is None else seed,
        limits=limits,
        resource_limits=resource_limits,
        run_dir=run_dir,
    )
    result = app.run_match(settings)
    if replay_path is not None:
        replay.write(result, replay_path)
    if as_json:
        doc = replay.to_dict(result, with_views=False)
        doc.pop("moves")
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(
        f"{the_game.name} with {the_game.num_players} players, seed {result.seed}, "
        f"{len(result.moves)} moves"
    )
    for seat, name in enumerate(result.seat_names):
        faults = [f for f in result.faults if f.seat == seat]
        note = f"  faults: {', '.join(f.kind for f in faults)}" if faults else ""
        click.echo(
            f"  rank {result.ranks[seat] + 1}  seat {seat}  {name:<24} "
            f"score {result.scores[seat]}{note}"
        )
    if replay_path is not None:
        click.echo(f"replay written to {replay_path}")


@click.command("replay")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seat", type=int, help="Show what this seat saw (default: the public view).")
@click.option("--quiet", is_flag=True, help="Only check the replay and print the result.")
def replay_cmd(path, seat, quiet):
    """Re-run a replay through the engine, check it reproduces its result, and print it."""
    try:
        doc = replay.read(path)
        n = doc["config"].get("num_players", 0)
        if seat is not None and not 0 <= seat < n:
            raise click.UsageError(f"--seat must be between 0 and {n - 1} for this replay")
        names = doc["seat_names"]
        for step in replay.rerun(doc):
            if quiet:
                continue
            who = f"seat {step.seat} ({names[step.seat]})"
            game = step.state.game
            flag = " [played by the referee]" if step.default else ""
            line = f"{step.index:4d}  {who}: {game.action_to_string(_action(step.action))}{flag}"
            if seat is not None and step.seat == seat:
                hand = getattr(step.view_before, "hand", ())
                line += f"   hand before: {' '.join(_card(game, c) for c in hand)}"
            click.echo(line)
            for event in step.events:
                if event.kind in ("play", "reveal") and seat is None:
                    continue
                data = ", ".join(f"{k}={v}" for k, v in (event.data or {}).items())
                click.echo(
                    f"        {event.kind}{'' if event.seat < 0 else f' seat {event.seat}'}"
                    f"{': ' + data if data else ''}"
                )
        replay.verify(doc)
    except replay.ReplayError as err:
        raise click.ClickException(str(err)) from None
    click.echo("the replay reproduces its recorded result:")
    for s, name in enumerate(names):
        click.echo(f"  rank {doc['ranks'][s] + 1}  seat {s}  {name:<24} score {doc['scores'][s]}")


def _action(value):
    return tuple(value) if isinstance(value, list) else value


def _card(game, card) -> str:
    to_string = getattr(game, "card_to_string", None)
    return to_string(card) if to_string else str(card)
