"""The `arena` command line. Each command group lives in its own module; commands parse and
validate their input, then hand over to arena.app (the composition root).

Commands are imported only when invoked, so that a quick one (`arena rankings`) does not pay
for the referee's, the web server's or Ray's imports.
"""

from __future__ import annotations

import importlib

import click

# command name -> (module, attribute, one-line help for `arena --help`)
COMMANDS = {
    "match": ("match", "match_cmd", "Play one match between bot processes."),
    "replay": ("match", "replay_cmd", "Re-run a replay file and check its result."),
    "bot": ("bots", "bot_group", "Register bots: launched from a command, or remote."),
    "ladder": ("ladder", "ladder_group", "Round-robin ladders with duplicate deals."),
    "rankings": ("rankings", "rankings_cmd", "Show a ladder's rankings."),
    "submit": ("submit", "submit_cmd", "Upload a bot version to a running Arena server."),
    "scrimmage": (
        "scrimmage",
        "scrimmage_cmd",
        "Ask a server for unrated duplicate sets against chosen opponents.",
    ),
    "competition": (
        "competition",
        "competition_group",
        "Competitions: open, frozen, finals, published standings.",
    ),
    "runtime": ("runtimes", "runtime_group", "The runtimes a submitted bot may name."),
    "download": ("download", "download_cmd", "Fetch a bot's replays and match logs from a server."),
    "compare": ("compare", "compare_cmd", "Is NEW better than BASE? A paired sequential test."),
    "serve": ("serve", "serve_cmd", "Run Arena as a service: continuous ladders and the web."),
    "web": ("web", "web_cmd", "Serve the web pages over a database."),
    "report": ("web", "report_cmd", "Write the web pages as a static site."),
    "export": (
        "web",
        "export_cmd",
        "Write a ladder's finished sets' matches (JSON Lines, Parquet).",
    ),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module_name, attr, _ = COMMANDS[name]
        try:
            module = importlib.import_module(f"{__name__}.{module_name}")
        except ModuleNotFoundError as err:  # an optional extra that is not installed
            if err.name and not err.name.startswith("arena"):
                return _missing(name, err.name)
            raise
        return getattr(module, attr)

    def invoke(self, ctx: click.Context):
        # The last net under every command: a SQLite error no command turned into a message of
        # its own (a damaged page met mid-query) becomes the store's message, not a traceback.
        import sqlite3

        try:
            return super().invoke(ctx)
        except sqlite3.Error as exc:
            from arena.store import describe_error

            path = str(ctx.meta.get("arena.db") or "(the database)")
            raise click.ClickException(str(describe_error(path, exc))) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in self.list_commands(ctx)])


def _missing(name: str, package: str) -> click.Command:
    @click.command(name, context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1)
    def missing(args):
        raise click.ClickException(
            f"`arena {name}` needs the Python package {package!r}, which is not installed; "
            "install Arena with its extras: pip install -e ./sdk -e '.[web,ray]'"
        )

    return missing


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="arena")
def main() -> None:
    """Arena: bots play Balloon Challenge and Boom: Runaway; ladders rate them from duplicate
    sets."""


def run() -> None:
    """The `arena` command as a process of its own (the console script, `python -m arena`):
    what the process sets up for itself, then the commands. Kept out of `main`, which tests
    and other programs also invoke in their own process (click's CliRunner), so that invoking
    a command never changes its caller's descriptor limit, logging handlers or signals."""
    from arena.startup import dump_stacks_on_signal, limit_repeats, raise_descriptor_limit

    # Every command may hold many connections (bots, spectators, web clients), and a failing
    # accept() must not fill its log.
    raise_descriptor_limit()
    limit_repeats()
    # `kill -USR1 PID` shows where a process that seems stuck is (its threads and tasks).
    dump_stacks_on_signal()
    main()
