"""Competitions: from open submissions to published, verifiable final standings
(docs/competitions.md).

    config.py     the config file (TOML), validated: CompetitionConfig
    phases.py     the phase machine, pure: open -> frozen -> finals -> published
    lifecycle.py  the steps on a Store: create, advance, the clock's tick, the finals' rounds
                  and the publication
    archive.py    the results archive: written at publication, checked again by `verify`

The rows are arena.store's (competitions.py); `arena serve` runs competitions
(arena/service/competitions.py); `arena competition` is the organiser's command.
"""
