"""PettingZoo environments over Arena's rules engines, for training bots (docs/rl.md).
Needs the `rl` extra: pip install 'arena[rl]'.

    from arena.envs import env, parallel_env
    e = env("balloon", 4)                       # AEC, every game, variant and player count
    p = parallel_env(4, advanced=True)          # Boom's simultaneous steps, all seats at once
"""

from __future__ import annotations

from typing import Any

try:
    import pettingzoo  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the install
    raise ImportError(
        "arena.envs needs the rl extra: pip install 'arena[rl]' (pettingzoo, gymnasium, numpy)"
    ) from err

from pettingzoo.utils import wrappers

from .aec import REWARDS, ArenaEnv, agent_name
from .parallel import BoomParallelEnv


def env(game: str = "balloon", num_players: int = 2, **kwargs: Any):
    """ArenaEnv wrapped as PettingZoo's own environments are (OrderEnforcingWrapper: a step
    before reset, or an unknown attribute, is a clear error)."""
    return wrappers.OrderEnforcingWrapper(ArenaEnv(game, num_players, **kwargs))


def parallel_env(num_players: int = 4, **kwargs: Any) -> BoomParallelEnv:
    """Boom: Runaway as a ParallelEnv (the only game with simultaneous steps)."""
    return BoomParallelEnv(num_players, **kwargs)


raw_env = ArenaEnv

__all__ = ["REWARDS", "ArenaEnv", "BoomParallelEnv", "agent_name", "env", "parallel_env", "raw_env"]
