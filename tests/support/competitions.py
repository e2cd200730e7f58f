"""Competitions for tests: a config's text, and finals played in this process by the engine
itself (seeded random legal moves, no bot processes), recorded as the runner records them."""

from __future__ import annotations

import random

from arena.games import game_from_config
from arena.results import MatchResult, MoveRecord, demote_faulted
from arena.store import RUNNABLE, Store


def config_text(name: str = "cup", top: str = "", **sections: str) -> str:
    """A competition's TOML: tables of 3 at Balloon, a freeze an hour away, finals ten
    minutes later; `top` adds top-level lines, `sections` replaces a section's body
    (phases="...", finals="...")."""
    body = {
        "phases": 'freeze = "1h"\nfinals = "10m"',
        "finals": "confidence = 0.95\nmax_matches = 24",
        "uploads": "per_day = 3",
        **sections,
    }
    head = f'name = "{name}"\ngame = "balloon"\ntable_size = 3\n{top}\n'
    return head + "".join(f"[{s}]\n{text}\n" for s, text in body.items())


def play_pending(store: Store, ladder: str, limit: int | None = None) -> int:
    """Play and record the runnable matches of `ladder` (at most `limit`) by random legal moves
    (seeded by the match): a real result and replay, as the engine gives them. Returns how
    many."""
    config = store.get_ladder(ladder).config
    played = 0
    for match in store.matches(ladder, RUNNABLE, limit=limit):
        running = store.start_match(ladder, match.index)
        state = game_from_config(config).new_match(match.seed)
        rng = random.Random(match.seed + match.rotation)
        moves = []
        while not state.is_over():
            seat = state.seats_to_act()[0]
            action = rng.choice(list(state.legal_actions(seat)))
            state.apply_action(seat, action)
            moves.append(MoveRecord(seat, action, 1.0))
        scores = tuple(state.scores())
        result = MatchResult(
            match_id=running.match_key or "",
            config=config,
            seed=match.seed,
            seat_names=match.seats,
            scores=scores,
            ranks=demote_faulted(scores, set()),
            faults=(),
            moves=tuple(moves),
            bot_seeds=running.bot_seeds,
        )
        store.record_result(ladder, match.index, result)
        played += 1
    return played
