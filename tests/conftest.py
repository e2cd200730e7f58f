"""Make the repository's packages importable when the project is not installed."""

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
for path in (_ROOT, _ROOT / "sdk"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
