"""Every game, variant and player count the environments offer, for parametrized tests."""

from __future__ import annotations

import itertools

BOOM_VARIANTS = [
    dict(zip(("advanced", "ruse", "series"), flags))
    for flags in itertools.product((False, True), repeat=3)
]
CASES = [("balloon", n, {}) for n in (2, 3, 4, 5)] + [
    ("boom", n, v) for n in (2, 3, 4, 5) for v in BOOM_VARIANTS
]


def label(case) -> str:
    game, n, options = case
    return f"{game}-{n}p" + "".join(f"-{k}" for k, v in options.items() if v)
