"""The committed generated protocol code is what scripts/gen_proto makes from the .proto now."""

import filecmp
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "sdk" / "arena_sdk" / "proto"


def test_generated_code_is_not_stale(tmp_path: Path) -> None:
    out = tmp_path / "proto"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_proto"), str(out)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    fresh = sorted(p.name for p in out.iterdir())
    committed = sorted(p.name for p in COMMITTED.iterdir() if p.name != "__pycache__")
    assert committed == fresh, "run scripts/gen_proto: the generated file set changed"
    _, mismatch, errors = filecmp.cmpfiles(COMMITTED, out, fresh, shallow=False)
    assert mismatch == [] and errors == [], (
        f"{', '.join(mismatch + errors)} in sdk/arena_sdk/proto/ are stale: run scripts/gen_proto"
    )
