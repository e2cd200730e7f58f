"""A bot made from a policy: a function from an observation and a mask of legal actions to an
action number, such as one trained in `arena.envs` (docs/rl.md).

    from arena_sdk import policy_bot, run
    run(policy_bot(my_policy, name="tabular"))

With `arrays=True` (the default) the policy gets what the environments give it: the observation
as `arena_sdk.features.encode` lays it out and a numpy int8 mask over `features.action_count`
actions (numpy needed, the `rl` extra). With `arrays=False` it gets the observation as the bot
sees it (arena_sdk.types) and the mask as a list of 0/1 ints: no numpy needed. Either way it
returns an action number (`features.action_index`), and the bot plays the legal action with
that number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from . import features
from .bot import Bot
from .types import Action, Match, Observation

Policy = Callable[[Any, Any], int]


class PolicyBot(Bot):
    """A bot that plays what `policy(observation, mask)` picks. The policy runs on the SDK's
    event loop when `quick` (a table lookup or a small matrix product: well under a
    millisecond); pass quick=False for a slower one."""

    name: ClassVar[str] = "policy"
    quick: ClassVar[bool] = True

    def __new__(
        cls, policy: Policy, *, name: str = "policy", arrays: bool = True, quick: bool = True
    ) -> PolicyBot:
        # A Bot declares its name and quick as class attributes: a PolicyBot with others is
        # one of a subclass that declares them.
        if name != cls.name or quick != cls.quick:
            cls = type(cls.__name__, (cls,), {"name": name, "quick": quick})
        return super().__new__(cls)

    def __init__(
        self, policy: Policy, *, name: str = "policy", arrays: bool = True, quick: bool = True
    ):
        if not callable(policy):
            raise TypeError(
                f"policy must be a function (observation, mask) -> action number, not {policy!r}"
            )
        self.policy = policy
        self.arrays = arrays

    def act(
        self, observation: Observation, legal_actions: Sequence[Action], match: Match
    ) -> Action:
        indices = features.legal_indices(match.game, legal_actions)
        if self.arrays:
            obs = features.encode(observation)
            mask = features.legal_mask(match.game, legal_actions)
        else:
            obs = observation
            mask = [0] * features.action_count(match.game)
            for i in indices:
                mask[i] = 1
        chosen = self.policy(obs, mask)
        try:
            return legal_actions[indices.index(int(chosen))]
        except (ValueError, TypeError):
            raise ValueError(
                f"the policy chose action number {chosen!r}, which is not legal now; the legal "
                f"numbers are {sorted(indices)} (pick one where the mask is 1)"
            ) from None


def policy_bot(
    policy: Policy, *, name: str = "policy", arrays: bool = True, quick: bool = True
) -> PolicyBot:
    """A bot that plays `policy`: hand it to `arena_sdk.run` (see the module docstring)."""
    return PolicyBot(policy, name=name, arrays=arrays, quick=quick)
