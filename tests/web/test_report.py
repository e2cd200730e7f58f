"""`arena report`: a static site whose every link resolves to a file it wrote."""

from __future__ import annotations

import re

from click.testing import CliRunner

from arena.cli import main
from arena.store import Store

LINK = re.compile(r'(?:href|src)="([^"]+)"')


def test_report_writes_every_page_with_no_dead_link(tmp_path, web_db):
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", "--db", str(web_db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with Store(web_db, readonly=True) as store:
        ladders = [lad.name for lad in store.list_ladders()]
        bots = [b.name for b in store.list_bots()]
        matches = {lad: store.matches(lad) for lad in ladders}
    played = {(lad, m.index) for lad, ms in matches.items() for m in ms if m.status != "pending"}
    # A match page links to every match of its duplicate set, pending ones included.
    linked_sets = {
        (lad, m.set_index) for lad, ms in matches.items() for m in ms if (lad, m.index) in played
    }
    expected = played | {
        (lad, m.index)
        for lad, ms in matches.items()
        for m in ms
        if (lad, m.set_index) in linked_sets
    }
    for name in ladders:
        assert (out / "ladders" / f"{name}.html").is_file()
    for name in bots:
        assert (out / "bots" / f"{name}.html").is_file()
    written = {
        (p.parent.name, int(p.stem)) for p in out.glob("matches/*/*.html") if p.stem.isdigit()
    }
    assert written == expected and expected > played
    pages = list(out.rglob("*.html"))
    for page in pages:
        text = page.read_text()
        assert "Traceback" not in text
        for link in LINK.findall(text):
            assert not link.startswith(("/", "http:", "https:")), (page, link)
            target = (page.parent / link.split("#")[0]).resolve()
            assert target.is_file(), f"{page.relative_to(out)} links to missing {link}"
    match_page = out / "matches" / sorted(written)[0][0] / f"{sorted(written)[0][1]}.html"
    assert 'id="replay-data"' in match_page.read_text()


def test_report_refuses_a_missing_database(tmp_path):
    result = CliRunner().invoke(
        main, ["report", "--db", str(tmp_path / "none.db"), "--out", str(tmp_path / "site")]
    )
    assert result.exit_code != 0 and "there is no database" in result.output
    assert not (tmp_path / "site").exists()
