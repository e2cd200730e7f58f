"""In-process duels between example bots' policies, straight through the rules engines.

Each example bot (example_bots/) is a pure policy `choose(game, observation, legal_actions,
rng, deadline)` in engine terms wrapped by a thin SDK class, so a match here calls exactly the
decision function the bot process runs, without gRPC. A duel is scored in duplicate: for every
seed the same deal is played with every arrangement of the lineup over the seats, so luck of the
deal cancels out.

Run it to measure the strength table in docs/bots.md:
    .venv/bin/python tests/strength/harness.py balloon --seeds 100
"""

from __future__ import annotations

import argparse
import functools
import itertools
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[2]
for _path in (_ROOT, _ROOT / "sdk", _ROOT / "example_bots"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from arena.games import Game, make_game  # noqa: E402

Policy = Callable[[Game, Any, Sequence[Any], random.Random, "float | None"], Any]


def random_policy(
    game: Game, obs: Any, legal: Sequence[Any], rng: random.Random, deadline: float | None = None
) -> Any:
    """example_bots/random_bot.py in engine terms."""
    return rng.choice(legal)


def policies(game: str, simulations: int | None = None) -> dict[str, Policy]:
    """The example bots of `game` by name; `simulations` overrides the strong bot's default."""
    if game == "balloon":
        import balloon_heuristic as heuristic
        import balloon_strong as strong
    elif game == "boom":
        import boom_heuristic as heuristic
        import boom_strong as strong
    else:
        raise ValueError(f"no example bots for game {game!r}")
    strong_choose: Policy = strong.choose
    if simulations is not None:
        strong_choose = functools.partial(strong.choose, simulations=simulations)
    return {"random": random_policy, "heuristic": heuristic.choose, "strong": strong_choose}


def play_match(
    game: Game, seat_policies: Sequence[Policy], seed: int, timings: list[list[float]] | None = None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Play one match; returns (scores, ranks). Every seat of a simultaneous step decides on
    its observation before any of them is applied, as with the referee. `timings[seat]`
    collects each decision's CPU seconds when given (CPU time, so that other work on the
    machine does not inflate it: on an idle core it is the wall time)."""
    state = game.new_match(seed)
    # A bot's own randomness, seeded per seat as the referee's bot_seed would be.
    rngs = [random.Random(seed * 1009 + seat) for seat in range(game.num_players)]
    while not state.is_over():
        seats = state.seats_to_act()
        chosen = []
        for seat in seats:
            obs = state.observation(seat)
            legal = state.legal_actions(seat)
            started = time.thread_time()
            action = seat_policies[seat](game, obs, legal, rngs[seat], None)
            if timings is not None:
                timings[seat].append(time.thread_time() - started)
            chosen.append((seat, action))
        for seat, action in chosen:
            state.apply_action(seat, action)
    return state.scores(), state.ranks()


@dataclass(slots=True)
class Tally:
    """Results of one bot kind over a duel."""

    seats_played: int = 0
    score_sum: int = 0
    wins: int = 0  # matches where it ranked first (ties included)
    beat: dict[str, float] = field(default_factory=dict)  # per other kind: wins + ties / 2
    meetings: dict[str, int] = field(default_factory=dict)
    decisions: list[float] = field(default_factory=list)

    @property
    def mean_score(self) -> float:
        return self.score_sum / self.seats_played

    @property
    def win_rate(self) -> float:
        return self.wins / self.seats_played

    def rate_against(self, other: str) -> float:
        """Share of head-to-head comparisons with `other` it won (a tie counts half)."""
        return self.beat[other] / self.meetings[other]


@dataclass(slots=True)
class DuelResult:
    game: str
    num_players: int
    lineup: tuple[str, ...]
    seeds: tuple[int, ...]
    matches: int
    tallies: dict[str, Tally]
    margins: list[float]  # per match: first kind's mean score minus the second's (2 kinds)


def duel(
    game_name: str,
    lineup: Sequence[str],
    seeds: Sequence[int],
    bots: Mapping[str, Policy],
    options: Mapping[str, Any] | None = None,
) -> DuelResult:
    """Play `lineup` (a bot kind per seat) over `seeds`, every distinct seat arrangement of it
    for every seed."""
    game = make_game(game_name, len(lineup), **(options or {}))
    kinds = tuple(dict.fromkeys(lineup))
    tallies = {k: Tally() for k in kinds}
    margins: list[float] = []
    arrangements = sorted(set(itertools.permutations(lineup)))
    matches = 0
    for seed in seeds:
        for arrangement in arrangements:
            timings: list[list[float]] = [[] for _ in arrangement]
            scores, ranks = play_match(game, [bots[k] for k in arrangement], seed, timings)
            matches += 1
            per_kind: dict[str, list[int]] = {k: [] for k in kinds}
            for seat, kind in enumerate(arrangement):
                t = tallies[kind]
                t.seats_played += 1
                t.score_sum += scores[seat]
                t.wins += ranks[seat] == 0
                t.decisions.extend(timings[seat])
                per_kind[kind].append(scores[seat])
                for other_seat, other_kind in enumerate(arrangement):
                    if other_kind == kind:
                        continue
                    t.meetings[other_kind] = t.meetings.get(other_kind, 0) + 1
                    mine, theirs = scores[seat], scores[other_seat]
                    won = (mine > theirs) + (mine == theirs) / 2
                    t.beat[other_kind] = t.beat.get(other_kind, 0.0) + won
            if len(kinds) == 2:
                a, b = (per_kind[k] for k in kinds)
                margins.append(sum(a) / len(a) - sum(b) / len(b))
    return DuelResult(
        game_name, len(lineup), tuple(lineup), tuple(seeds), matches, tallies, margins
    )


def describe(result: DuelResult) -> str:
    kinds = list(result.tallies)
    lines = [
        f"{result.game} {result.num_players}p {' vs '.join(result.lineup)}: "
        f"{result.matches} matches over {len(result.seeds)} seeds"
    ]
    for k in kinds:
        t = result.tallies[k]
        vs = ", ".join(f"beats {o} {t.rate_against(o):.0%}" for o in t.beat)
        ms = sorted(t.decisions)
        timing = (
            (
                f"; decision CPU mean {1000 * sum(ms) / len(ms):.2f} ms, "
                f"p99 {1000 * ms[int(len(ms) * 0.99)]:.1f} ms, max {1000 * ms[-1]:.1f} ms"
            )
            if ms
            else ""
        )
        lines.append(
            f"  {k:10} mean score {t.mean_score:7.2f}  first {t.win_rate:.0%}  {vs}{timing}"
        )
    if result.margins:
        m = result.margins
        lines.append(f"  mean margin {kinds[0]} - {kinds[1]}: {sum(m) / len(m):+.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", choices=["balloon", "boom"])
    parser.add_argument("--seeds", type=int, default=50, help="seeds 0..N-1")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument(
        "--simulations",
        type=int,
        default=None,
        help="the strong bot's simulations (default: the bot's own default)",
    )
    parser.add_argument(
        "--pairing",
        action="append",
        default=None,
        help="A:B, e.g. heuristic:random (default: heuristic:random and strong:heuristic)",
    )
    args = parser.parse_args(argv)
    bots = policies(args.game, args.simulations)
    seeds = tuple(range(args.seeds))
    for pairing in args.pairing or ["heuristic:random", "strong:heuristic"]:
        a, b = pairing.split(":")
        lineup = [a] + [b] * (args.players - 1)
        started = time.perf_counter()
        result = duel(args.game, lineup, seeds, bots)
        print(describe(result))
        print(f"  ({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
