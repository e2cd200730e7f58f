"""Make the example bots (example_bots/, not a package) and the duel harness importable."""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for path in (_HERE, _HERE.parents[1] / "example_bots"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
