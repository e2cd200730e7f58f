"""Running the `arena` command as a user who may not write a folder the test made read-only."""

from __future__ import annotations

import os
import sys

NOBODY = 65534


def unprivileged(args: list[str]) -> list[str]:
    """The arena command as a user who may not write the folder: `nobody` when we are root
    (root writes anything), else ourselves (the folder is not writable to us)."""
    command = [sys.executable, "-m", "arena", *args]
    if os.geteuid() != 0:
        return command
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
