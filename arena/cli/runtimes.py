"""`arena runtime list`: the runtimes a bot uploaded to this server may name (arena.runtimes),
and whether the server has what each needs."""

from __future__ import annotations

from pathlib import Path

import click

from arena.runtimes import Runtimes, RuntimesFileError

RUNTIMES_FILE_HELP = (
    "The organiser's runtimes file (TOML: Python runtimes with packages from a wheelhouse), "
    "as given to arena serve --runtimes."
)


def load_runtimes(path: Path | None) -> Runtimes:
    """The built-in runtimes and the organiser's file's, or a usage error saying what to fix."""
    try:
        return Runtimes.load(path)
    except RuntimesFileError as err:
        raise click.BadParameter(str(err), param_hint="--runtimes") from None


@click.group("runtime")
def runtime_group() -> None:
    """The runtimes a submitted bot may name in its arena-bot.toml."""


@runtime_group.command("list")
@click.option(
    "--runtimes",
    "runtimes_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help=RUNTIMES_FILE_HELP,
)
def list_cmd(runtimes_file: Path | None) -> None:
    """Each runtime: its name, what it has, and what this machine lacks of it."""
    for runtime in load_runtimes(runtimes_file).by_name.values():
        row = runtime.listing()
        state = "ready" if not row["missing"] else "missing " + "; ".join(row["missing"])
        packages = f" [packages: {', '.join(row['packages'])}]" if row["packages"] else ""
        click.echo(f"{row['name']:<12} {row['kind']:<7} {state}")
        click.echo(f"    {row['description']}{packages}")
