"""lowcard: a tiny policy library, packaged as a wheel that the starter bot ships (wheels/).

It stands for any dependency a bot brings: a model library, numpy, your own code kept as a
package. `choose` keeps the high cards: in Balloon Challenge it plays its lowest card (and drops
out only when nothing else is legal); in Boom it plays the legal step whose cards add up to the
least. Ties are broken by the match's seeded random generator, so a replay replays the bot.
"""

from __future__ import annotations

__version__ = "0.1.0"


def _cost(action) -> float:
    """What an action gives away: the values of the cards it plays (a drop-out: everything)."""
    play = getattr(action, "play", None)
    if play is not None:
        return play.value
    cards = getattr(action, "cards", None)
    if cards is not None:
        return sum(card.value for card in cards)
    return float("inf")


def choose(legal_actions, rng):
    """The legal action that gives away the least, ties broken by `rng`."""
    least = min(_cost(a) for a in legal_actions)
    return rng.choice([a for a in legal_actions if _cost(a) == least])
