"""A competition's steps on a Store (synchronous: the CLI calls them directly, `arena serve`
through its AsyncStore's writer thread): create one from its config, move it on by the clock or
by the organiser, and after each round of finals decide (phases.finals_verdict) whether to play
another round or to publish the standings and the archive. Each step is the store's idempotent
transaction, so taking one twice, or again after a kill -9, changes nothing."""

from __future__ import annotations

from typing import Any

from arena.ratings import RatingParams, SkillRating
from arena.results import COMPLETED, FINISHED
from arena.schedule import tables_per_round
from arena.store import Competition, CompetitionError, Store

from . import archive
from .config import CompetitionConfig, from_stored
from .phases import FINALS, FROZEN, OPEN, due, finals_verdict


def create(store: Store, config: CompetitionConfig, now: float) -> Competition:
    freeze_at, finals_at = config.times(now)
    return store.create_competition(
        config.name,
        config.game,
        config.table_size,
        config.options,
        config.stored(),
        freeze_at,
        finals_at,
        created=now,
    )


def config_of(competition: Competition) -> CompetitionConfig:
    return from_stored(competition.config)


def advance(store: Store, name: str) -> Competition:
    """The organiser's step (`arena competition advance`): open -> frozen -> finals now, whatever
    the clock says; finals -> published only once the finals have ended by their rule."""
    comp = store.get_competition(name)
    if comp.phase == OPEN:
        return _freeze(store, comp)
    if comp.phase == FROZEN:
        return store.start_finals(name)
    if comp.phase == FINALS:
        ladder = store.get_ladder(comp.finals_ladder)
        verdict = finals_round_over(store, comp)
        if verdict is None:
            raise CompetitionError(
                f"competition {name!r} is in its finals ({ladder.completed} of "
                f"{ladder.num_matches} matches played so far, budget "
                f"{config_of(comp).max_matches}); they are published when every adjacent pair "
                "is settled or the budget is spent: let arena serve play them"
            )
        return store.get_competition(name)
    raise CompetitionError(f"competition {name!r} is published already: it stays as it is")


def _freeze(store: Store, comp: Competition) -> Competition:
    config = config_of(comp)
    return store.freeze_competition(comp.name, config.finals.after_s, config.qualify)


def tick(store: Store, name: str, now: float, verifying: bool) -> Competition:
    """The clock's step, if one is due: the freeze waits while a version of its bots is still
    being verified (`verifying`: it was uploaded in time, and enters if it passes)."""
    comp = store.get_competition(name)
    step = due(comp.phase, comp.freeze_at, comp.finals_at, now)
    if step == FROZEN and not verifying:
        return _freeze(store, comp)
    if step == FINALS:
        return store.start_finals(name)
    return comp


def finals_round_over(store: Store, comp: Competition) -> str | None:
    """Once every scheduled match of the finals is over (completed, or given up): the verdict.
    None: not over, or another round was scheduled. A verdict publishes the competition."""
    config = config_of(comp)
    ladder = store.get_ladder(comp.finals_ladder)
    matches = store.matches(comp.finals_ladder)
    if any(m.status not in FINISHED for m in matches) or ladder.rated_through < len(matches):
        return None
    standings = final_standings(store, comp)
    round_matches = (
        tables_per_round(len(ladder.bots), ladder.table_size, ladder.settings["max_full_tables"])
        * ladder.table_size
    )
    verdict = finals_verdict(
        [s["p_better_than_next"] for s in standings[:-1]],
        config.confidence,
        len(matches),
        round_matches,
        config.max_matches,
    )
    if verdict is None:
        store.extend_finals(comp.name, ladder.rounds + 1)
        return None
    data = archive.write(
        archive_head(comp, config, store, verdict), standings, archive_matches(store, comp)
    )
    store.publish_competition(comp.name, verdict, standings, data)
    return verdict


def final_standings(store: Store, comp: Competition) -> list[dict[str, Any]]:
    """The finals' standings as the store rates them (its rankings), in the archive's terms."""
    ladder = store.get_ladder(comp.finals_ladder)
    ranking = store.rankings(comp.finals_ladder)
    ratings = {s.bot: SkillRating(s.mu, s.sigma) for s in ranking.standings}
    played = {s.bot: s.matches for s in ranking.standings}
    # P(better than the next) as the rankings computed it (in margins mode, from the model's
    # covariance, which the standings' mu and sigma do not hold); the order is theirs too.
    below = {
        (upper.bot, lower.bot): upper.p_better_than_next
        for upper, lower in zip(ranking.standings, ranking.standings[1:])
    }
    return archive.standings_from(
        ratings, played, ladder.rating_params, lambda a, b: below[a, b] or 0.0
    )


def archive_head(
    comp: Competition, config: CompetitionConfig, store: Store, end: str
) -> dict[str, Any]:
    ladder = store.get_ladder(comp.finals_ladder)
    return {
        "name": comp.name,
        "game": comp.game,
        "table_size": comp.table_size,
        "options": ladder.options,
        "entrants": list(ladder.bots),
        "finals": {
            "seed": ladder.seed,
            "rounds": ladder.rounds,
            "opening_round": bool(ladder.settings.get("opening_round", False)),
            "rating_mode": ladder.rating_mode,
            "rating_params": RatingParams.to_dict(ladder.rating_params),
            "max_full_tables": ladder.settings["max_full_tables"],
            "confidence": config.confidence,
            "max_matches": config.max_matches,
            "end": end,
        },
    }


def archive_matches(store: Store, comp: Competition) -> list[dict[str, Any]]:
    return [
        {
            "index": m.index,
            "set_index": m.set_index,
            "round": m.round,
            "rotation": m.rotation,
            "seed": m.seed,
            "seats": list(m.seats),
            "status": m.status,
            "replay": store.replay(comp.finals_ladder, m.index) if m.status == COMPLETED else None,
        }
        for m in store.matches(comp.finals_ladder)
    ]
