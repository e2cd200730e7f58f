"""BoomParallelEnv: Boom: Runaway as a PettingZoo ParallelEnv, every seat's escape choice of a
step given at once, as the referee takes them (docs/rl.md).

It plays through ArenaEnv (arena.envs.aec), so observations, masks, seeding and rewards are the
AEC environment's. A seat that need not choose in a step (none, in the rules as they are today:
every seat chooses in every escape step) has an all-zero mask; its action is ignored.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import ParallelEnv

from .aec import ArenaEnv


class BoomParallelEnv(ParallelEnv):
    metadata = {"name": "arena_boom_parallel_v0", "render_modes": ["ansi"]}

    def __init__(
        self,
        num_players: int = 4,
        *,
        reward: str = "score",
        render_mode: str | None = None,
        **options: Any,
    ):
        self.aec = ArenaEnv("boom", num_players, reward=reward, render_mode=render_mode, **options)
        self.render_mode = render_mode
        self.possible_agents = self.aec.possible_agents[:]
        self.agents: list[str] = []

    def observation_space(self, agent: str):
        return self.aec.observation_space(agent)

    def action_space(self, agent: str):
        return self.aec.action_space(agent)

    @property
    def engine_state(self) -> Any:
        return self.aec.engine_state

    @property
    def seed_played(self) -> int | None:
        return self.aec.seed_played

    def reset(self, seed: int | None = None, options: dict | None = None):
        self.aec.reset(seed=seed, options=options)
        self.agents = self.aec.agents[:]
        return {a: self.aec.observe(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]):
        aec = self.aec
        if not self.agents:
            raise ValueError("the match is over: call reset() before step()")
        for agent in aec.pending_agents():
            if agent not in actions or actions[agent] is None:
                raise ValueError(
                    f"{agent} must choose in this step: give an action for it "
                    f"(a number where its action_mask is 1)"
                )
            aec.step(actions[agent])
        observations = {a: aec.observe(a) for a in self.agents}
        rewards = {a: aec.rewards[a] for a in self.agents}
        terminations = {a: aec.terminations[a] for a in self.agents}
        truncations = {a: False for a in self.agents}
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        if aec.engine_state.is_over():
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
