"""What the public may see of a match, and when: the one rule that every public view goes
through (the web pages, the JSON API, the live feed and `arena report`).

The rule (in SQL for the match lists: arena.store.browse.SET_FINISHED_SQL). A match's hidden
parts — its seed, every seat's hand, the actions in words and the fault details — are public
once its whole duplicate set is finished: every rotation of the set completed or abandoned
(failed for good). Until then the public sees what a spectator at the table sees: the public
frames (the public picture and the public events, no hand, no action), the seats, scores and
fault kinds, and no seed.

Why the whole set. The engines are public and deterministic, so a seed is the whole deal; and
a set plays one deal k times with the seats rotated, so a finished rotation's hands (or a
Balloon illegal-action fault, whose detail lists the hand) give away the hands of the rotations
still being played. A rotation's public events give nothing away to the others: the same bots
sit at every rotation of a set and see those events themselves.

Not public, so not ruled here: a seat's own view (the referee sends each seat its own
observations) and the admin API, which asks for `Disclosure(full=True)` with its key.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from arena import replay as replay_mod
from arena.store import COMPLETED, FINISHED, RUNNING

from .frames import build_frames

if TYPE_CHECKING:
    from arena.store.browse import FaultRow, MatchDetail

    from .site import LiveSource


WITHHELD_DETAIL = "withheld until the match's set is finished"


def withheld_note(detail: "MatchDetail") -> str:
    """What the match page and the API say about a match whose deal is not public yet."""
    k = len(detail.set_matches)
    if k <= 1:
        return "the deal is shown when the match is finished"
    left = sum(1 for s in detail.set_matches if s.status not in FINISHED)
    return f"the deal is shown when its {k} rotations are finished ({left} still to finish)"


@dataclass(slots=True)
class MatchView:
    """A match as one viewer may see it: `detail` with the seed (None), the stored replay
    (None) and fault details withheld if they are; `frames` (None unless asked for) with
    hands and actions only if `full`; `withheld` says why the deal is not shown (None when it
    is); `moves`, how many moves the stored replay has (not a secret: the frames count them)."""

    detail: "MatchDetail"
    frames: list[dict[str, Any]] | None
    full: bool
    withheld: str | None
    moves: int | None
    replay_error: str | None = None


class Disclosure:
    """The rule, applied: the public's (`full=False`) or the admin's (`full=True`).

    `frames_cache` builds (and may keep) a completed match's full frames; it is only asked for
    matches whose frames are shown in full, so a cache never hands public viewers hands."""

    def __init__(
        self,
        *,
        full: bool = False,
        frames_cache: Callable[["MatchDetail"], list[dict]] | None = None,
    ):
        self.full = full
        self.frames_cache = frames_cache

    def hidden(self, set_is_finished: bool) -> bool:
        """Whether the hidden parts of a match of a set so far are withheld from this viewer."""
        return not (self.full or set_is_finished)

    # ------------------------------------------------------------------------ records

    def match(
        self, detail: "MatchDetail", *, frames: bool = False, live: "LiveSource | None" = None
    ) -> MatchView:
        """The match as this viewer may see it; with `frames`, its replay frames: the stored
        replay's, the live moves so far for a running match (from `live`), or the deal."""
        hidden = self.hidden(detail.set_finished)
        shown = detail
        if hidden:
            shown = dataclasses.replace(
                detail, seed=None, replay=None, faults=self.faults(detail.faults)
            )
        view = MatchView(
            detail=shown,
            frames=None,
            full=not hidden,
            withheld=withheld_note(detail) if hidden else None,
            moves=len(detail.replay["moves"]) if detail.replay else None,
        )
        if frames:
            try:
                view.frames = self._frames(detail, hidden, live)
            except replay_mod.ReplayError as err:
                view.replay_error = str(err)
        return view

    def faults(self, rows: Sequence["FaultRow"]) -> list["FaultRow"]:
        """Fault rows with the details of matches of unfinished sets withheld (a detail may
        name a card: Balloon's illegal-action message lists the seat's hand)."""
        return [
            r if not self.hidden(r.set_finished) else dataclasses.replace(r, detail=WITHHELD_DETAIL)
            for r in rows
        ]

    # ------------------------------------------------------------------------- frames

    def _frames(
        self, detail: "MatchDetail", hidden: bool, live: "LiveSource | None"
    ) -> list[dict[str, Any]]:
        m = detail.match
        if m.status == COMPLETED and detail.replay is not None:
            if not hidden and self.frames_cache is not None:
                return self.frames_cache(detail)
            return build_frames(detail.replay, with_hands=not hidden)
        doc = live.live_replay(m.ladder, m.index) if live and m.status == RUNNING else None
        if doc is None:
            if hidden and m.status != RUNNING:
                # Not dealt at any table (pending, to be retried) or never played (abandoned):
                # nothing of it is public.
                return []
            doc = {
                "config": {
                    "game": detail.game,
                    "num_players": detail.table_size,
                    "options": detail.options,
                },
                "seed": detail.seed,
                "seat_names": [s.bot for s in m.seats],
                "moves": [],
            }
        return build_frames(partial_doc(doc), with_hands=not hidden)

    def live_frames(
        self,
        status: str,
        detail: "Callable[[], MatchDetail]",
        live: "LiveSource | None",
        ladder: str,
        index: int,
        since: int,
    ) -> tuple[list[dict[str, Any]], str]:
        """The live feed of a match: public frames from `since` on, from the referee's moves
        so far while it runs (`live`), from the stored replay once completed; and where they
        came from ("live" or "store"). Public for everyone: the feed never carries hands."""
        doc = live.live_replay(ladder, index) if live and status == RUNNING else None
        if doc is not None:
            return build_frames(partial_doc(doc), with_hands=False, since=since), "live"
        if status == COMPLETED:
            stored = detail()
            if stored.replay is not None:
                return build_frames(stored.replay, with_hands=False, since=since), "store"
        return [], "store"


def partial_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """A live match's replay so far, completed with what replay.check needs."""
    out = {
        "format": replay_mod.FORMAT,
        "version": replay_mod.VERSION,
        "faults": [],
        "scores": [],
        "ranks": [],
    }
    out.update(doc)
    return out
