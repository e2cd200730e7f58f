"""A competition's config: a good one read whole, and each mistake refused with the key it is
about and what to write instead."""

from __future__ import annotations

import pytest

from arena.competitions.config import CompetitionConfigError, When, from_stored, parse
from tests.support.competitions import config_text


def test_a_config_is_read_whole_and_kept_as_stored():
    config = parse(
        config_text(
            top='bots = ["alice", "bob", "carol"]',
            phases='freeze = 2030-01-01T18:00:00Z\nfinals = "2h"',
            finals="confidence = 0.9\nmax_matches = 300\nqualify = 8",
            options="",
        )
    )
    assert (config.name, config.game, config.table_size) == ("cup", "balloon", 3)
    assert config.bots == ("alice", "bob", "carol")
    assert config.freeze == When(at=1893520800.0)
    assert config.finals == When(after_s=7200.0)
    assert (config.confidence, config.max_matches, config.uploads_per_day) == (0.9, 300, 3)
    assert config.qualify == 8
    assert config.times(1_800_000_000.0) == (1893520800.0, 1893528000.0)
    assert from_stored(config.stored()) == config


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"top": "prize = 3"}, "prize is not a competition setting; the settings are name, game"),
        ({"top": 'bots = ["a", "a"]'}, "bots names a bot twice"),
        ({"top": 'bots = ["a@2"]'}, "bots names a version (NAME@N); name the bot"),
        ({"top": "bots = []"}, 'bots must be a list of bot names, e.g. bots = ["alice"'),
        ({"phases": 'freeze = "soon"\nfinals = "1h"'}, "[phases] freeze is 'soon'; give a date"),
        ({"phases": 'finals = "1h"'}, "[phases] freeze is missing; give a date-time"),
        (
            {"phases": 'freeze = 2030-01-01T18:00:00\nfinals = "1h"'},
            "[phases] freeze is a date-time without a time zone; add one",
        ),
        ({"phases": 'freeze = "1h"\nfinals = "1h"\nend = "2h"'}, "[phases] end is not a setting"),
        ({"finals": "confidence = 1.5"}, "[finals] confidence must be a number above 0.5"),
        ({"finals": "max_matches = 0"}, "[finals] max_matches must be a whole number of at"),
        ({"finals": "qualify = 2"}, "[finals] qualify must be a whole number of at least 3"),
        ({"uploads": "per_day = true"}, "[uploads] per_day must be a whole number of at least 1"),
        ({"options": "no_such_option = true"}, "balloon has no option no_such_option"),
    ],
)
def test_each_mistake_names_its_key_and_what_to_write(change, message):
    with pytest.raises(CompetitionConfigError) as err:
        parse(config_text(**change), "cup.toml")
    assert str(err.value).startswith("cup.toml: ")
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "cup"\n', "game is missing; every competition names its name, game and"),
        ('name = "a cup"\ngame = "balloon"\ntable_size = 3', "name 'a cup' is not allowed"),
        ('name = "cup"\ngame = "chess"\ntable_size = 2', "game 'chess' is not a game here"),
        ('name = "cup"\ngame = "balloon"\ntable_size = 9', "table_size or [options] do not make"),
        ('name = "cup"\ngame = "balloon"\ntable_size = "3"', "table_size must be a whole number"),
        ("name = ", "the config is not valid TOML"),
    ],
)
def test_the_competition_itself_is_checked(text, message):
    with pytest.raises(CompetitionConfigError, match=None) as err:
        parse(text)
    assert message in str(err.value)


def test_phases_in_the_wrong_order_are_refused_at_creation():
    config = parse(config_text(phases='freeze = 2020-01-01T00:00:00Z\nfinals = "1h"'))
    with pytest.raises(CompetitionConfigError, match="freeze is in the past"):
        config.times(1_800_000_000.0)
    config = parse(
        config_text(phases="freeze = 2030-01-02T00:00:00Z\nfinals = 2030-01-01T00:00:00Z")
    )
    with pytest.raises(CompetitionConfigError, match="finals comes before the freeze"):
        config.times(1_800_000_000.0)
