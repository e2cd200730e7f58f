"""The class a Python bot subclasses: one required method, act(), and optional hooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from .types import Action, Match, MatchResult, Observation, Rejection


class Bot:
    """A bot: subclass it, implement `act`, and hand an instance to `arena_sdk.run`.

    Threads: `act` and the hooks run in a pool of `max_concurrent` worker threads (on the event
    loop for a `quick` bot), so one bot
    instance plays several matches at once. Calls for one match never overlap and come in order
    (on_match_start, then act for each move, then on_match_end); calls for different matches
    may run at the same time, so keep per-match state keyed by `match.match_id` (or on the
    `match` object's rng) and guard anything shared. A CPU-heavy bot sets `max_concurrent = 1`
    (Python threads share one core for pure-Python work).
    """

    #: The name sent to the referee (informational: the referee knows the bot by its token).
    name: ClassVar[str] = ""
    #: How many action requests this bot works on at once; the referee never sends more.
    max_concurrent: ClassVar[int] = 4
    #: True for a bot whose act() and hooks return at once (well under a millisecond, never
    #: blocking): the SDK then calls them on its event loop instead of in worker threads, which
    #: saves a thread hop per move, about a third of the SDK's CPU per move. Calls still never
    #: overlap and come in order; but a quick bot's slow act() holds up all of its matches.
    quick: ClassVar[bool] = False

    def act(
        self, observation: Observation, legal_actions: Sequence[Action], match: Match
    ) -> Action:
        """Choose this seat's move: return one of `legal_actions` (or an equal action built by
        hand). `match.clock.remaining()` says how much of the move's deadline is left.

        If act raises, the SDK logs the traceback and sends an empty reply, which the referee
        rejects at once as a fault (it plays the game's default action for the seat and counts
        a strike): a bug costs a strike, not the move deadline plus the whole time bank.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement act()")

    def on_match_start(self, match: Match) -> None:
        """Called once when a match starts, before the first act() of that match."""

    def on_match_end(self, match: Match, result: MatchResult) -> None:
        """Called once when a match ends, after its last act()."""

    def on_rejected(self, match: Match, rejection: Rejection) -> None:
        """Called when the referee rejected a reply (or got none in time) in `match`."""
