"""The tests' own game, high card (tests/games/highcard), registered for the tests under
tests/games: the one registration line a game needs (docs/architecture.md)."""

from arena.games import register

register("tests.games.highcard")
