"""ArenaEnv: a PettingZoo AEC environment over Arena's own rules engines (docs/rl.md).

One match of a registered game (arena.games: Balloon Challenge, Boom: Runaway, ...) per
episode, dealt by `Game.new_match(seed)` exactly as the referee deals `arena match --seed`.
Agents are "seat_0".."seat_{n-1}". A seat's observation is a dict: "observation",
`arena_sdk.features.encode` of what the seat may see (the engine's `observation(seat)`, the
content the referee sends it; built by the game's fast path where it has one,
arena.envs.arrays), and "action_mask", the legal actions in `features`' numbering.
`bot_observation(agent)` gives the same thing as a bot receives it in a match (arena_sdk.types),
through the referee's own wire encoding.

Boom's escape steps are simultaneous: here the seats choose one after another, and the env holds
each choice until the last seat of the step has chosen, then plays them all. The engine does not
change until then, so every seat of a step observes exactly what the referee sends it at the
step's start, and no seat sees another's pending choice.

Rewards are 0 until the match ends; then each seat gets its final score (reward="score") or
1 - 2 * rank / (n - 1) (reward="rank": 1 for the best, -1 for the last, ties share).
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from arena.games import IllegalActionError, game_kit, make_game
from arena.referee import wire as referee_wire
from arena_sdk import features
from arena_sdk import wire as sdk_wire

from .arrays import arrays_function, mask_function

REWARDS = ("score", "rank")
_SEED_RANGE = 2**63  # the range `arena match --seed` accepts


def agent_name(seat: int) -> str:
    return f"seat_{seat}"


class ArenaEnv(AECEnv):
    """One game, variant and player count (see the module docstring)."""

    metadata = {"name": "arena_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self,
        game: str = "balloon",
        num_players: int = 2,
        *,
        reward: str = "score",
        render_mode: str | None = None,
        **options: Any,
    ):
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.game = make_game(game, num_players, **options)  # ConfigError says what is allowed
        self.game_name = game
        self.reward_kind = reward
        self.render_mode = render_mode
        self.metadata = dict(
            self.metadata, name=f"arena_{game}_v0", is_parallelizable=game_kit(game).simultaneous
        )
        self.possible_agents = [agent_name(s) for s in range(num_players)]
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        size = features.observation_size(game, num_players)
        count = features.action_count(game)
        space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(-np.inf, np.inf, (size,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (count,), np.int8),
            }
        )
        self._observation_spaces = {a: space for a in self.possible_agents}
        self._action_spaces = {a: gymnasium.spaces.Discrete(count) for a in self.possible_agents}
        self._no_mask = np.zeros(count, np.int8)
        self._arrays = arrays_function(game, num_players)
        self._observation_of = self._arrays.observation  # a seat's observation array
        self._mask_of = mask_function(game)
        # told of the actions applied, for the arrays it keeps up to date
        self._played = self._arrays.played
        # every action number's engine action, looked up in step (features.index_action's)
        self._actions = tuple(features.index_action(game, i) for i in range(count))
        self._seeder = random.Random()
        self.seed_played: int | None = None
        # the engine's state of the match: hidden cards included, for analysis, not a policy
        self.engine_state: Any = None

    # ---- spaces --------------------------------------------------------------------------

    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return self._action_spaces[agent]

    # ---- episode -------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new match: from `seed` exactly as `arena match --seed SEED` deals it; without
        a seed, from the next seed of the sequence the last seeded reset started."""
        if seed is not None:
            if not 0 <= int(seed) < _SEED_RANGE:
                raise ValueError(f"seed must be between 0 and 2**63 - 1, not {seed!r}")
            seed = int(seed)
            self._seeder = random.Random(seed)
        else:
            seed = self._seeder.randrange(_SEED_RANGE)
        self.seed_played = seed
        self.engine_state = self.game.new_match(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._held: list[tuple[int, Any]] = []
        self._start_step()

    def _start_step(self) -> None:
        self._queue = self.engine_state.seats_to_act()
        self._pos = 0
        self.agent_selection = self.possible_agents[self._queue[0]]

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self._seat[agent]
        state = self.engine_state
        observation = self._observation_of(state, seat)
        # the agent selected is pending while the match goes on (step selects only those);
        # once the match is over, every agent is done (or gone, after its last step)
        selected = agent == self.agent_selection and not self.terminations.get(agent, True)
        if selected or self._is_pending(seat):
            legal = state.legal_actions(seat)
            if legal:
                return {"observation": observation, "action_mask": self._mask_of(legal)}
        return {"observation": observation, "action_mask": self._no_mask.copy()}

    def pending_agents(self) -> list[str]:
        """The agents yet to choose in the step being played, in the order they are asked."""
        if self.engine_state.is_over():
            return []
        return [self.possible_agents[s] for s in self._queue[self._pos :]]

    def _is_pending(self, seat: int) -> bool:
        """Whether the seat has yet to choose in the step being played."""
        return seat in self._queue[self._pos :] and not self.engine_state.is_over()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self._seat[agent]
        state = self.engine_state
        try:
            index = int(action)
            if index < 0:
                raise IndexError
            engine_action = self._actions[index]
        except (TypeError, ValueError) as err:
            raise ValueError(f"{agent} cannot play {action!r}: {err}") from None
        except IndexError:
            raise ValueError(
                f"{agent} cannot play {action!r}: {self.game_name} action numbers "
                f"are 0..{len(self._actions) - 1}"
            ) from None
        played = self._played
        queue = self._queue
        if len(queue) == 1:  # one seat to act: the engine checks the action and plays it
            try:
                state.apply_action(seat, engine_action)
            except IllegalActionError:
                raise self._refused(agent, action, engine_action) from None
            if played is not None:
                played(state, ((seat, engine_action),))
            self._cumulative_rewards[agent] = 0
        else:  # a simultaneous step: hold the choice until the step's last seat has chosen
            if engine_action not in state.legal_actions(seat):
                raise self._refused(agent, action, engine_action)
            self._cumulative_rewards[agent] = 0
            held = self._held
            held.append((seat, engine_action))
            pos = self._pos = self._pos + 1
            if pos < len(queue):
                self.agent_selection = self.possible_agents[queue[pos]]
                return
            for held_seat, held_action in held:
                state.apply_action(held_seat, held_action)
            if played is not None:
                played(state, held)
            held.clear()
        if state.is_over():
            self._finish()
        else:
            self._start_step()

    def _refused(self, agent: str, action: Any, engine_action: Any) -> ValueError:
        legal = self.engine_state.legal_actions(self._seat[agent])
        return ValueError(
            f"{agent} cannot play action number {int(action)} "
            f"({self.game.action_to_string(engine_action)}) now; the legal numbers are "
            f"{sorted(features.legal_indices(self.game_name, legal))} (the action_mask)"
        )

    def _finish(self) -> None:
        state = self.engine_state
        if self.reward_kind == "score":
            values = state.scores()
        else:
            n = self.game.num_players
            values = [1 - 2 * r / (n - 1) for r in state.ranks()]
        for agent in self.agents:
            self.rewards[agent] = values[self._seat[agent]]
            self.terminations[agent] = True
        self._accumulate_rewards()
        self.agent_selection = self.agents[0]

    # ---- what a bot sees -----------------------------------------------------------------

    def bot_observation(self, agent: str) -> Any:
        """The agent's observation as a bot receives it in a match (arena_sdk.types), built
        through the referee's wire encoding."""
        obs = self.engine_state.observation(self._seat[agent])
        return sdk_wire.observation(referee_wire.observation_to_pb(self.game_name, obs))

    def bot_legal_actions(self, agent: str) -> tuple:
        """The agent's legal actions as a bot receives them (arena_sdk.types), () if it is not
        to choose now."""
        seat = self._seat[agent]
        legal = self.engine_state.legal_actions(seat) if self._is_pending(seat) else ()
        return tuple(sdk_wire.action(referee_wire.action_to_pb(self.game_name, a)) for a in legal)

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode (use 'ansi')")
            return None
        state = self.engine_state
        obs = state.public_observation()
        return f"{self.game_name} seed {self.seed_played}: {obs}\nscores {state.scores()}"

    def close(self) -> None:
        pass
