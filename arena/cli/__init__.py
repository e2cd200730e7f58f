"""The `arena` command line. Each command group lives in its own module; commands parse and
validate their input, then hand over to arena.app (the composition root)."""

from __future__ import annotations

import importlib

import click

# Modules that add commands to `main`, each owning one area.
COMMAND_MODULES = ("match", "ladder", "bots", "web", "serve")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="arena")
def main() -> None:
    """Arena: bots play Balloon Challenge and Boom: Runaway; ladders rate them with TrueSkill."""


for _name in COMMAND_MODULES:
    try:
        _module = importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as err:
        if err.name != f"{__name__}.{_name}":
            raise
        continue
    _module.register(main)
