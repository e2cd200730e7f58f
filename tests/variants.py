"""The variants a test covers when it must cover them all but cannot afford every combination
(tests/games/test_conformance.py plays every one): every player count of each game, and each of
Boom's options alone, together and at more than one player count."""

from __future__ import annotations

from arena.games import make_game

VARIANTS: list[tuple[str, int, dict]] = (
    [("balloon", n, {}) for n in range(2, 6)]
    + [("boom", n, {}) for n in range(2, 6)]
    + [("boom", n, {"advanced": True}) for n in (2, 4)]
    + [("boom", n, {"ruse": True}) for n in (3, 5)]
    + [
        ("boom", 3, {"advanced": True, "ruse": True}),
        ("boom", 2, {"series": True}),
        ("boom", 3, {"advanced": True, "ruse": True, "series": True}),
    ]
)


def variant_id(variant: tuple[str, int, dict]) -> str:
    name, n, options = variant
    return "-".join([name, str(n), *sorted(k for k, v in options.items() if v)])


def game_of(variant: tuple[str, int, dict]):
    name, n, options = variant
    return make_game(name, n, **options)
