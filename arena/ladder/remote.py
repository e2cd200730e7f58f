"""Remote bots in duplicate ladders: what the platform says of them, and refusing them.

A remote bot (registered with --remote: no command, it connects by itself with its token) runs
on its owner's machine, where the platform can enforce nothing: one process may play every
rotation of a duplicate set, remember its hands, and so know every hand of the set's deal. So a
ladder or `arena serve` that seats one says so (the run's warning, the ladder's page), and an
organiser can refuse them: `arena ladder run --no-remote`, and `arena serve` unless it is given
--allow-remote (docs/protocol.md, "Remote bots and fair play").
"""

from __future__ import annotations

from typing import Iterable

from arena.store import Bot

# docs/protocol.md says the same, word for word.
UNFAIR = (
    "a remote bot can see every hand of a set over its rotations: results are fair only "
    "among trusted remote bots"
)
# Why a connection with a bot's registered token is refused where remote bots are.
REFUSED_AT_HELLO = (
    "this server seats no remote bots: a bot plays here only as the process the server "
    "launches{how}. Ask the organiser, or submit the bot (arena submit)"
)


def is_remote(bot: Bot) -> bool:
    """Whether the bot runs on its owner's machine (no command for the platform to launch)."""
    return bot.remote or not bot.command


def remote_names(bots: Iterable[Bot]) -> list[str]:
    return sorted(b.name for b in bots if is_remote(b))


def warning(where: str, names: Iterable[str], to_refuse: str) -> str:
    """What a run that seats the remote bots `names` says of it; `to_refuse`: how not to."""
    return f"{where} seats remote bots ({', '.join(names)}); {UNFAIR}. To refuse them: {to_refuse}"


def refusal(where: str, names: Iterable[str], option: str) -> str:
    """Why a run that refuses remote bots (`option`) does not start."""
    return (
        f"{where} would seat remote bots ({', '.join(names)}), and {option} refuses "
        f"them ({UNFAIR}). Leave them out of --bots, or register them with a command "
        "(arena bot add NAME --command ...) so that the platform launches them"
    )


def refused_at_hello(option: str) -> str:
    return REFUSED_AT_HELLO.format(how=f" (its organiser did not pass {option})" if option else "")
