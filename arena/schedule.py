"""The ladder schedule: which bots meet at which table, in which seats, with which seed, in which
order. Pure: the whole schedule follows from (bots, table size, rounds, seed), so a resumed run or
another executor computes exactly the same list.

Round-robin. Every bot meets every other bot equally often:
- when the k-subsets of the N bots are few (at most `max_full_tables`, or no more than a balanced
  design would need) every k-subset is a table;
- otherwise a cyclic design: the bots are labelled with the residues mod N and each of m base
  blocks {d_1..d_k} is developed into the N tables {i+d_1, ..., i+d_k} (i = 0..N-1). Two bots
  labelled x and y then meet as often as x-y occurs among the blocks' differences, so balancing
  pair counts only needs the difference multiset balanced, a small search (hill climbing over
  the block elements) that ends when every difference occurs lambda or lambda+1 times. Every bot
  plays exactly m*k tables per round. Later rounds keep the labelling and balance the cumulative
  differences, so pair counts stay within one of each other over the whole schedule, not only
  per round.

Every table is a duplicate set: one deal seed, played k times with the seats rotated through all
k positions, so deal and seat luck cancel. The matches of a set are consecutive in the schedule.
`rounds` repeats the whole round-robin with fresh seeds (and, in the design case, fresh blocks);
a schedule with more rounds starts with the schedule with fewer.

Opening round (`opening_round`, the default of `arena ladder run`'s new ladders): before the
duplicate sets, one round of single matches, each table of the first round once, in that round's
order, with a fresh deal and the seats in random order (drawn from their own stream,
random.Random(f"{seed}/opening"), so the sets that follow are exactly those of the schedule
without an opening). Each opening match is a set of one (rotation 0, round 0), so a set-rated
ladder rates it on its own: the first ratings spread from k times fewer matches, then the sets
cancel the luck (docs/benchmarks.md#rating: fewer matches to the right ranking, on wide and close
pools).

Order within a round: random, or with `spread` the same sets reordered by `spread_order` so that
every bot is seated within the round's first few tables and pairs meet evenly early on (a
leaderboard read before the round ends then rests on every bot; scripts/benchsuites/rating.py
measures what that is worth). Spreading draws nothing from the random stream: the sets, their
seatings and seeds are the same either way.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Generic, Sequence, TypeVar

MIN_TABLE_SIZE = 2
MAX_TABLE_SIZE = 5
DEFAULT_MAX_FULL_TABLES = 1000
# Seeds stay below 2**53 so that they survive JSON in any language (JavaScript numbers included).
SEED_BOUND = 2**53
# Hill-climbing moves allowed per attempt before a design search retries with one more block.
_SEARCH_BUDGET = 20_000

B = TypeVar("B")


class ScheduleError(ValueError):
    """A ladder that cannot be scheduled (too few bots, a table size out of range...)."""


@dataclass(frozen=True, slots=True)
class ScheduledMatch(Generic[B]):
    """One match of a ladder. `index` is its place in schedule order (ratings are applied in that
    order); `set_index` numbers its duplicate set (its table); `rotation` (0..k-1) is how far the
    set's seating is rotated; `seats` holds the bot of each seat."""

    index: int
    set_index: int
    round: int
    rotation: int
    seed: int
    seats: tuple[B, ...]


def random_seed() -> int:
    """A fresh seed for a ladder (or a comparison) given none, from the system's randomness (as
    `secrets` draws; the schedule is then a function of it)."""
    return random.SystemRandom().randrange(SEED_BOUND)


def rotate(table: Sequence[B], rotation: int) -> tuple[B, ...]:
    """The seating of a set's match `rotation`: seat s gets the table's bot (s + rotation) mod k,
    so over the k rotations every bot sits in every seat once."""
    k = len(table)
    return tuple(table[(seat + rotation) % k] for seat in range(k))


def check_ladder_shape(num_bots: int, table_size: int, rounds: int = 1) -> None:
    """Raise ScheduleError, saying what to change, if the ladder cannot be scheduled."""
    if not MIN_TABLE_SIZE <= table_size <= MAX_TABLE_SIZE:
        raise ScheduleError(
            f"table size {table_size} is not supported; choose {MIN_TABLE_SIZE} to {MAX_TABLE_SIZE}"
        )
    if num_bots < table_size:
        raise ScheduleError(
            f"a ladder at tables of {table_size} needs at least {table_size} bots, not {num_bots}; "
            "add bots or choose a smaller table size"
        )
    if rounds < 1:
        raise ScheduleError(f"rounds must be at least 1, not {rounds}")


def make_schedule(
    bots: Sequence[B],
    table_size: int,
    rounds: int = 1,
    seed: int = 0,
    *,
    max_full_tables: int = DEFAULT_MAX_FULL_TABLES,
    spread: bool = False,
    opening_round: bool = False,
) -> list[ScheduledMatch[B]]:
    """The ordered list of matches of a ladder of `bots` (distinct, in the ladder's order) at
    tables of `table_size`, repeated `rounds` times, all drawn from random.Random(seed); with
    `spread`, each round's sets in `spread_order`; with `opening_round`, after an opening round
    of single matches (the module's docstring)."""
    n, k = len(bots), table_size
    check_ladder_shape(n, k, rounds)
    if len(set(bots)) != n:
        raise ScheduleError("a ladder's bots must be distinct")
    rng = random.Random(seed)
    full = uses_all_subsets(n, k, max_full_tables)
    # Design case: which bot carries which residue. Fixed for all rounds (cumulative balance).
    label = list(range(n))
    if not full:
        rng.shuffle(label)
    differences = [0] * n  # cumulative multiplicity of each difference mod n
    blocks_per_round = _min_blocks(n, k)

    schedule: list[ScheduledMatch[B]] = []
    set_index = 0
    for round_ in range(rounds):
        if full:
            tables = [list(t) for t in itertools.combinations(range(n), k)]
        else:
            blocks = _balanced_blocks(n, k, blocks_per_round, differences, rng)
            tables = [[label[(i + d) % n] for d in block] for block in blocks for i in range(n)]
        rng.shuffle(tables)
        deals = []
        for table in tables:
            rng.shuffle(table)  # which bot starts in seat 0 carries no meaning
            deals.append(rng.randrange(SEED_BOUND))
        order = spread_order(tables, n) if spread else range(len(tables))
        for t in order:
            table, deal_seed = tables[t], deals[t]
            seated = [bots[p] for p in table]
            for rotation in range(k):
                schedule.append(
                    ScheduledMatch(
                        index=len(schedule),
                        set_index=set_index,
                        round=round_,
                        rotation=rotation,
                        seed=deal_seed,
                        seats=rotate(seated, rotation),
                    )
                )
            set_index += 1
    if opening_round:
        return _with_opening(schedule, seed)
    return schedule


def _with_opening(schedule: list[ScheduledMatch[B]], seed: int) -> list[ScheduledMatch[B]]:
    """`schedule` after its opening round: each table of its first round once, in that order,
    as a set of one with a fresh deal and shuffled seats; the sets' indexes moved on."""
    rng = random.Random(f"{seed}/opening")
    opening: list[ScheduledMatch[B]] = []
    for m in schedule:
        if m.round != 0:
            break
        if m.rotation != 0:
            continue
        seats = list(m.seats)
        rng.shuffle(seats)
        i = len(opening)
        opening.append(ScheduledMatch(i, i, 0, 0, rng.randrange(SEED_BOUND), tuple(seats)))
    n = len(opening)
    return opening + [
        ScheduledMatch(m.index + n, m.set_index + n, m.round, m.rotation, m.seed, m.seats)
        for m in schedule
    ]


def spread_order(tables: Sequence[Sequence[int]], num_bots: int) -> list[int]:
    """An order of one round's tables (of bots 0..num_bots-1) that spreads the bots over its
    first tables: each next table is the one whose bots have sat at the fewest tables so far (the
    sum of their squared counts), then whose pairs have met least, then the earliest. Greedy and
    deterministic; each table's two costs are kept up to date as tables are placed."""
    with_bot: list[list[int]] = [[] for _ in range(num_bots)]
    with_pair: dict[tuple[int, int], list[int]] = {}
    for t, table in enumerate(tables):
        for b in table:
            with_bot[b].append(t)
        for pair in itertools.combinations(sorted(table), 2):
            with_pair.setdefault(pair, []).append(t)
    sat = [0] * num_bots
    seated_cost = [0] * len(tables)  # sum of squared tables-so-far of the table's bots
    met_cost = [0] * len(tables)  # meetings so far of the table's pairs
    left = set(range(len(tables)))
    order = []
    while left:
        best = min(left, key=lambda t: (seated_cost[t], met_cost[t], t))
        left.discard(best)
        order.append(best)
        for b in tables[best]:
            for t in with_bot[b]:
                seated_cost[t] += 2 * sat[b] + 1  # (s + 1)^2 - s^2
            sat[b] += 1
        for pair in itertools.combinations(sorted(tables[best]), 2):
            for t in with_pair[pair]:
                met_cost[t] += 1
    return order


def uses_all_subsets(
    num_bots: int, table_size: int, max_full_tables: int = DEFAULT_MAX_FULL_TABLES
) -> bool:
    """Whether the round-robin plays every k-subset (else a cyclic balanced design)."""
    subsets = math.comb(num_bots, table_size)
    return subsets <= max_full_tables or subsets <= _min_blocks(num_bots, table_size) * num_bots


def tables_per_round(
    num_bots: int, table_size: int, max_full_tables: int = DEFAULT_MAX_FULL_TABLES
) -> int:
    """Tables in one round at the first try of the design search (a later round may need one
    more block of num_bots tables when the search does not balance within its budget)."""
    if uses_all_subsets(num_bots, table_size, max_full_tables):
        return math.comb(num_bots, table_size)
    return _min_blocks(num_bots, table_size) * num_bots


def _min_blocks(n: int, k: int) -> int:
    # Each block gives k(k-1) ordered differences; every one of the n-1 nonzero residues needs one.
    return max(1, math.ceil((n - 1) / (k * (k - 1))))


def _balanced_blocks(
    n: int, k: int, m: int, differences: list[int], rng: random.Random
) -> list[list[int]]:
    """m (or more, if the search fails within its budget) base blocks whose differences, added to
    `differences` (updated in place), leave every nonzero residue within one of every other."""
    while True:
        found = _search_blocks(n, k, m, differences, rng)
        if found is not None:
            blocks, mult = found
            differences[:] = mult
            return blocks
        m += 1


def _search_blocks(
    n: int, k: int, m: int, start: list[int], rng: random.Random
) -> tuple[list[list[int]], list[int]] | None:
    mult = list(start)
    blocks = [rng.sample(range(n), k) for _ in range(m)]
    for block in blocks:
        for x, y in itertools.permutations(block, 2):
            mult[(x - y) % n] += 1

    def balanced() -> bool:
        rest = mult[1:]
        return max(rest) - min(rest) <= 1

    moves = 0
    while not balanced():
        if moves >= _SEARCH_BUDGET:
            return None
        moves += 1
        block = blocks[rng.randrange(m)]
        pos = rng.randrange(k)
        old, new = block[pos], rng.randrange(n)
        if new in block:
            continue
        # Replace old by new; track the change of the sum of squares of the multiplicities
        # (minimising it evens them out). Plateau moves are taken: they help the walk along.
        delta = 0
        changes: list[tuple[int, int]] = []
        for y in block:
            if y == old:
                continue
            for d, s in (
                ((old - y) % n, -1),
                ((y - old) % n, -1),
                ((new - y) % n, 1),
                ((y - new) % n, 1),
            ):
                delta += 2 * s * mult[d] + 1
                mult[d] += s
                changes.append((d, s))
        if delta <= 0:
            block[pos] = new
        else:
            for d, s in reversed(changes):
                mult[d] -= s
    return blocks, mult
