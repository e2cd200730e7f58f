"""A hostile bot for the lanes test (tests/reliability/test_lanes.py): it records every hand it
is dealt (in memory, in its work directory and in /tmp) and, in each match, guesses that every
hand it recorded before is some other seat's hand now. A process that plays two rotations of a
duplicate set (one deal, seats rotated) would hit exactly; a lane plays one rotation of a set.

It plays the first legal action (it must play without fault) and prints one line per match
to its log, which the test reads from outside the sandbox:
    HANDS {"seats": [...], "seat": s, "hand": [...], "guesses": [[...], ...]}
The hand is the first one it is dealt in the match (Balloon's round 1, Boom's deal)."""

import json
import os
import tempfile
from pathlib import Path

from arena_sdk import Bot, run

STORES = (Path.home() / "hands.jsonl", Path(tempfile.gettempdir()) / "hands.jsonl")


class HandRecorder(Bot):
    name = "hand-recorder"
    quick = True

    def __init__(self):
        self.seen: set[tuple[int, ...]] = set()
        self.started: set[str] = set()

    def recorded(self) -> set[tuple[int, ...]]:
        hands = set(self.seen)
        for store in STORES:
            try:
                hands |= {tuple(json.loads(line)) for line in store.read_text().splitlines()}
            except (OSError, ValueError):
                continue
        return hands

    def act(self, observation, legal_actions, match):
        if match.match_id not in self.started:
            self.started.add(match.match_id)
            hand = tuple(sorted(card.id for card in observation.hand))
            guesses = sorted(self.recorded() - {hand})
            self.seen.add(hand)
            for store in STORES:
                with open(store, "a") as f:
                    f.write(json.dumps(hand) + "\n")
            line = {
                "seats": list(match.seat_names),
                "seat": match.seat,
                "hand": list(hand),
                "guesses": [list(g) for g in guesses],
            }
            print("HANDS " + json.dumps(line), flush=True)
        return legal_actions[0]

    def on_match_end(self, match, result):
        self.started.discard(match.match_id)


if __name__ == "__main__":
    os.umask(0o077)
    run(HandRecorder())
