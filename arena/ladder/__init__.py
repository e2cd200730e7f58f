"""Ladders: the schedule (schedule.py: balanced round-robin of duplicate sets, all from the
ladder's seed), the ratings (ratings.py: one explicit TrueSkill environment, free-for-all per
match or per duplicate set), the runner (runner.py: plays the schedule through the referee),
the lease that keeps it to one run per ladder (lease.py), what runs say of remote bots and
their refusal (remote.py); and the rules the store asks for
(rules.py: schedule, rotation, ratings, and rating finished matches in schedule order inside the
store's transaction). Storage and the rankings query live in arena/store/."""

from .ratings import (
    DEFAULT_RATING_MODE,
    MATCH_MODE,
    RATING_MODES,
    SET_MODE,
    SETTLED_CONFIDENCE,
    Rater,
    RatingParams,
    RatingUpdate,
    SkillRating,
    adjacent_settled,
    p_better,
    set_ranks,
)
from .schedule import (
    MAX_TABLE_SIZE,
    MIN_TABLE_SIZE,
    ScheduledMatch,
    ScheduleError,
    check_ladder_shape,
    make_schedule,
    rotate,
    tables_per_round,
    uses_all_subsets,
)

__all__ = [
    "DEFAULT_RATING_MODE",
    "MATCH_MODE",
    "SETTLED_CONFIDENCE",
    "adjacent_settled",
    "p_better",
    "MAX_TABLE_SIZE",
    "MIN_TABLE_SIZE",
    "RATING_MODES",
    "SET_MODE",
    "Rater",
    "RatingParams",
    "RatingUpdate",
    "ScheduleError",
    "ScheduledMatch",
    "SkillRating",
    "check_ladder_shape",
    "make_schedule",
    "rotate",
    "set_ranks",
    "tables_per_round",
    "uses_all_subsets",
]
