"""A bot trained by reinforcement learning in `arena.envs`, then entered in matches as is.

The policy is linear and small: one weight per (action, observation value), a softmax over the
legal actions' scores while training and the best legal action when playing. It is trained by
REINFORCE (the return is the rank reward at the end of the match, less a running average)
against the random and heuristic bots, through the same PettingZoo environment and the same
numpy layout (`arena_sdk.features`) the bot reads in a real match; docs/rl.md walks through it.

    python example_bots/rl_linear.py --train              # a few minutes on one core
    arena match balloon "python example_bots/rl_linear.py" "python example_bots/random_bot.py"

Playing needs numpy (the rl extra); training needs arena.envs too. The weights are kept next to
this file, in rl_linear.json (trained for Balloon Challenge with two players).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from arena_sdk import features, policy_bot, run

WEIGHTS = Path(__file__).with_name("rl_linear.json")


class LinearPolicy:
    """Scores = W @ [observation, 1]; the best legal action, or one drawn by softmax."""

    def __init__(self, weights: np.ndarray, game: str, num_players: int):
        self.weights = weights
        self.game = game
        self.num_players = num_players

    @classmethod
    def fresh(cls, game: str, num_players: int) -> "LinearPolicy":
        shape = (features.action_count(game), features.observation_size(game, num_players) + 1)
        return cls(np.zeros(shape), game, num_players)

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> "LinearPolicy":
        try:
            doc = json.loads(path.read_text())
        except OSError as err:
            raise SystemExit(
                f"rl_linear: no weights at {path} ({err.strerror}); train them "
                f"with: python {Path(__file__).name} --train"
            ) from None
        return cls(np.array(doc["weights"], dtype=np.float64), doc["game"], doc["num_players"])

    def save(self, path: Path = WEIGHTS) -> None:
        doc = {
            "game": self.game,
            "num_players": self.num_players,
            "layout": "arena_sdk.features",
            "weights": np.round(self.weights, 3).tolist(),
        }
        path.write_text(json.dumps(doc, separators=(",", ":")))

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        scores = self.weights @ np.append(observation, 1.0)
        scores = np.where(mask.astype(bool), scores, -np.inf)
        scores -= scores.max()
        p = np.exp(scores)
        return p / p.sum()

    def __call__(self, observation: np.ndarray, mask) -> int:
        """The policy a bot plays: the legal action with the highest score."""
        if len(observation) + 1 != self.weights.shape[1]:
            raise ValueError(
                f"this policy was trained for {self.game} with {self.num_players} "
                f"players; the observation does not fit (enter it in such matches)"
            )
        scores = self.weights @ np.append(observation, 1.0)
        return int(np.argmax(np.where(np.asarray(mask, dtype=bool), scores, -np.inf)))


# ------------------------------------------------------------------------------ training


def opponents(game: str):
    """The bots it trains against, as functions (env, agent, observation dict, rng) -> action
    number: random, and the heuristic example bot through the engine's own observation."""
    sys.path.insert(0, str(Path(__file__).parent))
    heuristic = __import__(f"{game}_heuristic").choose

    def random_bot(env, agent, obs, rng):
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))

    def heuristic_bot(env, agent, obs, rng):
        seat = env.possible_agents.index(agent)
        state = env.engine_state
        choice = heuristic(env.game, state.observation(seat), state.legal_actions(seat), rng)
        return features.action_index(game, choice)

    return {"random": random_bot, "heuristic": heuristic_bot}


def train(
    game: str,
    num_players: int,
    seconds: float,
    seed: int,
    lr: float,
    against: tuple[str, ...] = ("random", "heuristic"),
    log=print,
) -> LinearPolicy:
    from arena.envs import ArenaEnv

    rng = random.Random(seed)
    env = ArenaEnv(game, num_players, reward="rank")
    env.reset(seed=seed)
    policy = LinearPolicy.fresh(game, num_players)
    others = {name: bot for name, bot in opponents(game).items() if name in against}
    baseline = {name: 0.0 for name in others}
    episodes = 0
    start = time.monotonic()
    last_log = start
    recent: list[float] = []
    while time.monotonic() - start < seconds:
        name = rng.choice(list(others))  # one kind of opponent per match
        opponent = others[name]
        me = rng.choice(env.possible_agents)
        env.reset()
        grads = np.zeros_like(policy.weights)
        final = 0.0
        for agent in env.agent_iter():
            obs, reward, done, _, _ = env.last()
            if done:
                if agent == me:
                    final = reward
                env.step(None)
                continue
            if agent != me:
                env.step(opponent(env, agent, obs, rng))
                continue
            x = np.append(obs["observation"], 1.0)
            p = policy.probabilities(obs["observation"], obs["action_mask"])
            action = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum()))
            action = min(action, len(p) - 1)
            if not obs["action_mask"][action]:  # rounding at the top end
                action = int(np.flatnonzero(obs["action_mask"])[-1])
            # d log p(action) / d W = (onehot(action) - p) outer x
            g = -p
            g[action] += 1.0
            grads += np.outer(g, x)
            env.step(action)
        advantage = final - baseline[name]
        baseline[name] += 0.02 * (final - baseline[name])
        policy.weights += lr * advantage * grads
        episodes += 1
        recent.append(final)
        now = time.monotonic()
        if now - last_log > 15:
            log(
                f"{now - start:5.0f} s  {episodes} matches  mean reward of the last "
                f"{len(recent)}: {np.mean(recent):+.3f}  (baselines: "
                + ", ".join(f"{k} {v:+.2f}" for k, v in baseline.items())
                + ")"
            )
            recent = []
            last_log = now
    return policy


def evaluate(policy: LinearPolicy, opponent: str, matches: int, seed: int) -> dict:
    """Matches of the policy (greedy, as it plays for real) against one opponent, the seats
    taking turns: mean rank reward, and the share of matches it ranks alone first."""
    from arena.envs import ArenaEnv

    rng = random.Random(seed)
    env = ArenaEnv(policy.game, policy.num_players, reward="rank")
    other = opponents(policy.game)[opponent]
    rewards, wins = [], 0
    for i in range(matches):
        env.reset(seed=seed + i)
        me = env.possible_agents[i % policy.num_players]
        for agent in env.agent_iter():
            obs, reward, done, _, _ = env.last()
            if done:
                if agent == me:
                    rewards.append(reward)
                    wins += reward == 1.0
                env.step(None)
            elif agent == me:
                env.step(policy(obs["observation"], obs["action_mask"]))
            else:
                env.step(other(env, agent, obs, rng))
    return {"mean_reward": float(np.mean(rewards)), "win_share": wins / matches}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", action="store_true", help="train, then save the weights")
    parser.add_argument("--game", default="balloon", choices=features.GAMES)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=180.0, help="training time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument(
        "--against",
        default="random,heuristic",
        help="the opponents to train against, by name: random, heuristic",
    )
    parser.add_argument("--weights", type=Path, default=WEIGHTS)
    args, rest = parser.parse_known_args()
    if not args.train:
        sys.argv[1:] = rest  # the SDK's own options (--address, --token)
        run(policy_bot(LinearPolicy.load(args.weights), name="rl-linear"))
        return
    against = tuple(args.against.split(","))
    if not against or not set(against) <= {"random", "heuristic"}:
        parser.error(f"--against takes random and/or heuristic, not {args.against!r}")
    policy = train(args.game, args.players, args.seconds, args.seed, args.lr, against)
    policy.save(args.weights)
    print(f"weights written to {args.weights} ({args.weights.stat().st_size // 1024} KB)")
    for opponent in ("random", "heuristic"):
        print(f"against {opponent}: {evaluate(policy, opponent, 400, 10_000)}")


if __name__ == "__main__":
    main()
