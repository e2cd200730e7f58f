"""Balloon Challenge (docs/rules/balloon.md): the game package. The rules are in `engine`
(deck, deal, turns, chips, scoring, observations, events, determinization); this module hands
out the engine that runs them, compiled or plain (arena.games.engines chooses, one log line
says which), and ends with the game's KIT. Everything else imports the engine from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..engines import load_engine
from ..kit import GameKit

__all__ = [
    "BLACK",
    "BLACK_CARD_VALUES",
    "BLACK_INDEX",
    "CARDS",
    "CARD_COLOUR",
    "CARD_VALUE",
    "CHIPS_BY_PLAYER_COUNT",
    "CHIP_POINTS_BY_ROUND",
    "COLOURS",
    "COLOUR_CARD_VALUES",
    "DROP_OUT",
    "EARLY_DROP_OUT_BASE",
    "FACE_UP_CARDS_BY_PLAYER_COUNT",
    "FIRST_DROP_OUT_CHIPS",
    "HAND_SIZE_BY_ROUND",
    "NUM_CARDS",
    "NUM_ROUNDS",
    "THIRD_CARD_CHIPS",
    "THIRD_CARD_POSITION",
    "BalloonGame",
    "BalloonObservation",
    "BalloonState",
    "Card",
    "Played",
    "action_to_string",
    "card_name",
    "cards_dealt",
    "deck_from_hands",
    "early_drop_out_chips",
    "recount_scores",
    "round_points",
    "sample_state",
    "shuffled_deck",
]

if TYPE_CHECKING:  # the names as the plain engine types them; the same at run time
    from .engine import (
        BLACK,
        BLACK_CARD_VALUES,
        BLACK_INDEX,
        CARD_COLOUR,
        CARD_VALUE,
        CARDS,
        CHIP_POINTS_BY_ROUND,
        CHIPS_BY_PLAYER_COUNT,
        COLOUR_CARD_VALUES,
        COLOURS,
        DROP_OUT,
        EARLY_DROP_OUT_BASE,
        FACE_UP_CARDS_BY_PLAYER_COUNT,
        FIRST_DROP_OUT_CHIPS,
        HAND_SIZE_BY_ROUND,
        NUM_CARDS,
        NUM_ROUNDS,
        THIRD_CARD_CHIPS,
        THIRD_CARD_POSITION,
        BalloonGame,
        BalloonObservation,
        BalloonState,
        Card,
        Played,
        action_to_string,
        card_name,
        cards_dealt,
        deck_from_hands,
        early_drop_out_chips,
        recount_scores,
        round_points,
        sample_state,
        shuffled_deck,
    )
else:
    _engine = load_engine(__name__ + ".engine")
    globals().update({name: getattr(_engine, name) for name in __all__})


KIT = GameKit(
    title="Balloon Challenge",
    game=BalloonGame,
    sample_state=sample_state,
    codec="arena.games.balloon.wire",
    arrays="arena.games.balloon.arrays",
    frames="arena.games.balloon.frames",
    example_bots={
        "example-random": "random_bot.py",
        "example-random-2": "random_bot.py",
        "example-balloon-heuristic": "balloon_heuristic.py",
        "example-balloon-strong": "balloon_strong.py",
    },
)
