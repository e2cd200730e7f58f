"""The variants a test covers when it must cover them all but cannot afford every combination
(tests/games/test_conformance.py plays every one), for each game Arena ships (the registry's
GAME_PACKAGES; the tests' own game has its own tests): every player count with the default
options, each option alone at two player counts, and all of a game's options together."""

from __future__ import annotations

import importlib

from arena.games import GAME_PACKAGES, GameKit, make_game


def _variants(kit: GameKit) -> list[tuple[str, int, dict]]:
    game = kit.game
    counts = list(range(game.min_players, game.max_players + 1))
    out: list[tuple[str, int, dict]] = [(kit.name, n, {}) for n in counts]
    flags = [o.name for o in kit.options if o.values == (False, True)]
    for i, name in enumerate(flags):
        for n in sorted({counts[i % len(counts)], counts[(i + 2) % len(counts)]}):
            out.append((kit.name, n, {name: True}))
    if len(flags) > 1:
        out.append((kit.name, counts[min(1, len(counts) - 1)], dict.fromkeys(flags, True)))
    return out


VARIANTS: list[tuple[str, int, dict]] = [
    variant
    for package in GAME_PACKAGES
    for variant in _variants(importlib.import_module(package).KIT)
]


def variant_id(variant: tuple[str, int, dict]) -> str:
    name, n, options = variant
    return "-".join([name, str(n), *sorted(k for k, v in options.items() if v)])


def game_of(variant: tuple[str, int, dict]):
    name, n, options = variant
    return make_game(name, n, **options)
