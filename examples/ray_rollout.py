"""Recipe: spreading cartfuse env simulation over Ray actors.

Each Ray actor (:class:`EnvWorker`, one process, on any machine of the cluster) owns one
cartfuse vector env built through gymnasium::

    gym.make_vec("cartfuse/CartPole-v1", num_envs=n, vectorization_mode="vector_entry_point")

and keeps it between calls. The driver asks ``K`` actors at once (Ray runs them in parallel)
and gathers what they return, in one of two ways:

* :func:`gather_rollouts`: every actor steps ``num_steps`` steps with a policy the driver
  ships to it (:class:`RandomPolicy`, :class:`LinearPolicy`, :class:`ReplayPolicy` of given
  actions, or any picklable ``obs -> actions`` callable) and returns the whole trajectory:
  one round trip per chunk of steps, which is what makes Ray worth it;
* :func:`lockstep_rollouts`: the driver computes every action itself from all actors'
  observations (a policy that lives in the driver, e.g. a network on its GPU), one round trip
  per step.

A trajectory (:class:`Trajectory`) is a dict of numpy arrays: ``obs`` ``(T + 1, n, 4)``
(the observation before every step, then the last one), ``actions``, ``rewards``,
``terminated`` and ``truncated`` ``(T, n)``. The envs autoreset in gymnasium's default
``NEXT_STEP`` mode, as a local env would.

Seeds: actor ``k`` resets its env with ``actor_seed(base_seed, k, num_envs) = base_seed + k *
num_envs``, and cartfuse gives env ``i`` of that actor the seed ``actor_seed + i``: every env
of the cluster has its own seed, and the same seeds give, bit for bit, the same trajectories
as the same envs stepped locally (``python/tests/test_ray.py`` checks it).

Run, on one machine (a local Ray instance is started and stopped)::

    pip install ./python ray
    python examples/ray_rollout.py --actors 1 2 4 --num-envs 1024 --steps 256

On several machines, with cartfuse, gymnasium and the same ray version installed on each::

    ray start --head --port 6379                  # on the head machine
    ray start --address <head-ip>:6379            # on every other machine
    python examples/ray_rollout.py --address auto --actors 8 16   # on the head machine

The actors' processes need not find this file: imported as a module (even by path, as the
test does), it asks Ray's cloudpickle to ship its classes and functions by value, as it does
for a script's ``__main__``. cartfuse, gymnasium and numpy must be installed on every node.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypedDict, cast

import cartfuse  # registers cartfuse/<id> with gymnasium
import gymnasium as gym
import numpy as np
import numpy.typing as npt
import ray
from ray import cloudpickle as ray_cloudpickle
from ray.actor import ActorHandle

#: The gymnasium id the actors build.
ENV_ID = cartfuse.registered_id("CartPole-v1")

# Ship this module's code to the workers with the objects that use it, so that they do not
# have to import it (a script's `__main__` is shipped that way anyway).
if __name__ != "__main__" and __name__ in sys.modules:
    ray_cloudpickle.register_pickle_by_value(sys.modules[__name__])

ObsArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Policy = Callable[[ObsArray], IntArray]


class Trajectory(TypedDict):
    """``num_steps`` steps of ``n`` envs."""

    obs: ObsArray  # (T + 1, n, obs_dim): before each step, then after the last
    actions: IntArray  # (T, n)
    rewards: npt.NDArray[np.float32]  # (T, n)
    terminated: npt.NDArray[np.bool_]  # (T, n)
    truncated: npt.NDArray[np.bool_]  # (T, n)


class RandomPolicy:
    """Uniform random discrete actions from its own numpy stream (``seed``)."""

    def __init__(self, num_actions: int, seed: int) -> None:
        self.num_actions = num_actions
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: ObsArray) -> IntArray:
        """One action per row of ``obs``."""
        return self.rng.integers(0, self.num_actions, size=obs.shape[0], dtype=np.int64)


class LinearPolicy:
    """``action = 1 if obs @ weights > 0 else 0``: a deterministic policy given by weights
    (CartPole: ``(0, 0, 1, 1)`` pushes towards the side the pole falls to)."""

    def __init__(self, weights: Sequence[float]) -> None:
        self.weights = np.asarray(weights, dtype=np.float32)

    def __call__(self, obs: ObsArray) -> IntArray:
        """One action per row of ``obs``."""
        return (obs @ self.weights > 0).astype(np.int64)


class ReplayPolicy:
    """Replays given actions ``(T, n)``, one row per call."""

    def __init__(self, actions: npt.ArrayLike) -> None:
        self.actions = np.asarray(actions, dtype=np.int64)
        self.t = 0

    def __call__(self, obs: ObsArray) -> IntArray:
        """The next row of actions."""
        row = self.actions[self.t]
        self.t += 1
        return row


def make_envs(num_envs: int, env_id: str = ENV_ID, **env_kwargs: Any) -> gym.vector.VectorEnv:
    """A cartfuse vector env built through gymnasium's ``vector_entry_point``
    (``env_kwargs``: ``device=``, ``plan=``, ``autoreset_mode=``, ... of
    ``cartfuse.vector.CartfuseVectorEnv``; ``device="cpu"`` unless given)."""
    env_kwargs.setdefault("device", "cpu")
    # An actor's process has not necessarily imported cartfuse, which registers its ids.
    cartfuse.register_envs()
    return gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **env_kwargs
    )


def actor_seed(base_seed: int, actor_index: int, num_envs: int) -> int:
    """The reset seed of actor ``actor_index``: its envs get ``seed + i``, disjoint from
    every other actor's."""
    return base_seed + actor_index * num_envs


def rollout(
    envs: gym.vector.VectorEnv, obs: ObsArray, num_steps: int, policy: Policy
) -> Trajectory:
    """Steps ``envs`` (whose current observation is ``obs``) ``num_steps`` times with
    ``policy``; the actors and a local check run this same function."""
    n = envs.num_envs
    obs_buf = np.zeros((num_steps + 1, *obs.shape), dtype=np.float32)
    actions = np.zeros((num_steps, n), dtype=np.int64)
    rewards = np.zeros((num_steps, n), dtype=np.float32)
    terminated = np.zeros((num_steps, n), dtype=bool)
    truncated = np.zeros((num_steps, n), dtype=bool)
    obs_buf[0] = obs
    for t in range(num_steps):
        actions[t] = policy(obs_buf[t])
        next_obs, reward, term, trunc, _ = envs.step(actions[t])
        obs_buf[t + 1] = next_obs
        rewards[t] = reward
        terminated[t] = term
        truncated[t] = trunc
    return Trajectory(
        obs=obs_buf, actions=actions, rewards=rewards, terminated=terminated, truncated=truncated
    )


class EnvWorker:
    """What each Ray actor holds: one vector env, reset with ``seed``, and its current
    observation. Plain Python (usable locally); :data:`EnvActor` is its Ray actor class."""

    def __init__(
        self,
        num_envs: int,
        seed: int,
        env_id: str = ENV_ID,
        cpus: Sequence[int] | None = None,
        **env_kwargs: Any,
    ) -> None:
        if cpus is not None:
            # cartfuse's CPU runtime starts one thread per core this process may run on,
            # on its first step: pinning caps it, so actors sharing a node do not fight.
            os.sched_setaffinity(0, cpus)
        self.envs = make_envs(num_envs, env_id, **env_kwargs)
        obs, _ = self.envs.reset(seed=seed)
        self.obs: ObsArray = np.array(obs, dtype=np.float32)

    def observation(self) -> ObsArray:
        """The current observation ``(n, obs_dim)``."""
        return self.obs

    def step(
        self, actions: IntArray
    ) -> tuple[ObsArray, npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """One step of every env: ``(obs, rewards, terminated, truncated)``."""
        obs, reward, terminated, truncated, _ = self.envs.step(actions)
        self.obs = np.array(obs, dtype=np.float32)
        return self.obs, np.array(reward), np.array(terminated), np.array(truncated)

    def rollout(self, num_steps: int, policy: Policy) -> Trajectory:
        """``num_steps`` steps with ``policy``, continuing from the current observation."""
        trajectory = rollout(self.envs, self.obs, num_steps, policy)
        self.obs = trajectory["obs"][-1].copy()
        return trajectory

    def run(self, num_steps: int, policy: Policy) -> tuple[int, float]:
        """``num_steps`` steps with ``policy``, returning only ``(env-steps, seconds)``."""
        start = time.perf_counter()
        trajectory = rollout(self.envs, self.obs, num_steps, policy)
        seconds = time.perf_counter() - start
        self.obs = trajectory["obs"][-1].copy()
        return num_steps * self.envs.num_envs, seconds


#: The Ray actor class of :class:`EnvWorker` (one CPU each).
EnvActor = ray.remote(num_cpus=1)(EnvWorker)


def make_actors(
    num_actors: int,
    num_envs: int,
    base_seed: int = 0,
    env_id: str = ENV_ID,
    cpu_sets: Sequence[Sequence[int]] | None = None,
    **env_kwargs: Any,
) -> list[ActorHandle[EnvWorker]]:
    """``num_actors`` actors of ``num_envs`` envs each, actor ``k`` reset with
    :func:`actor_seed` and, if ``cpu_sets`` is given, pinned to the cores ``cpu_sets[k]``
    (one node); blocks until every env is built."""
    if cpu_sets is not None and len(cpu_sets) != num_actors:
        raise ValueError(f"cpu_sets: expected one per actor ({num_actors}), got {len(cpu_sets)}")
    actors = [
        cast(
            "ActorHandle[EnvWorker]",
            EnvActor.remote(
                num_envs,
                actor_seed(base_seed, k, num_envs),
                env_id,
                None if cpu_sets is None else list(cpu_sets[k]),
                **env_kwargs,
            ),
        )
        for k in range(num_actors)
    ]
    ray.get([actor.observation.remote() for actor in actors])
    return actors


def gather_rollouts(
    actors: Sequence[ActorHandle[EnvWorker]], num_steps: int, policies: Sequence[Policy]
) -> list[Trajectory]:
    """Every actor steps ``num_steps`` times with its own policy (``policies[k]``, shipped to
    it), all in parallel; their trajectories, in actor order."""
    if len(policies) != len(actors):
        raise ValueError(f"policies: expected one per actor ({len(actors)}), got {len(policies)}")
    return ray.get(
        [
            actor.rollout.remote(num_steps, policy)
            for actor, policy in zip(actors, policies, strict=True)
        ]
    )


def lockstep_rollouts(
    actors: Sequence[ActorHandle[EnvWorker]], num_steps: int, policy: Policy
) -> list[Trajectory]:
    """The driver acts: each step it evaluates ``policy`` on every actor's observation at
    once, sends each actor its actions and waits for all of them; the trajectories, in actor
    order (the same layout :func:`gather_rollouts` returns)."""
    obs = [np.asarray(o) for o in ray.get([actor.observation.remote() for actor in actors])]
    sizes = [o.shape[0] for o in obs]
    splits = np.cumsum(sizes)[:-1]
    steps: list[list[tuple[Any, ...]]] = [[] for _ in actors]
    history: list[list[ObsArray]] = [[o] for o in obs]
    for _ in range(num_steps):
        actions = np.split(policy(np.concatenate(obs)), splits)
        results = ray.get(
            [actor.step.remote(act) for actor, act in zip(actors, actions, strict=True)]
        )
        for k, (result, act) in enumerate(zip(results, actions, strict=True)):
            steps[k].append((act, *result[1:]))
            history[k].append(result[0])
        obs = [result[0] for result in results]
    trajectories: list[Trajectory] = []
    for k in range(len(actors)):
        acts, rewards, terminated, truncated = (
            np.stack(column) for column in zip(*steps[k], strict=True)
        )
        trajectories.append(
            Trajectory(
                obs=np.stack(history[k]),
                actions=acts,
                rewards=rewards,
                terminated=terminated,
                truncated=truncated,
            )
        )
    return trajectories


def throughput(
    num_actors: int,
    num_envs: int,
    num_steps: int,
    repeats: int = 3,
    lockstep_steps: int = 50,
    cpu_sets: Sequence[Sequence[int]] | None = None,
) -> dict[str, float]:
    """Env-steps/s over ``num_actors`` actors (random policy), measured at the driver:
    ``"gather"`` (:func:`gather_rollouts`, trajectories shipped back), ``"in_actor"``
    (the actors' own stepping time, summed rate), ``"lockstep"`` (:func:`lockstep_rollouts`).
    """
    actors = make_actors(num_actors, num_envs, base_seed=0, cpu_sets=cpu_sets)
    policies: list[Policy] = [RandomPolicy(2, k) for k in range(num_actors)]
    gather_rollouts(actors, 8, policies)  # warm-up: the first calls, the first transfers
    best_gather = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        gather_rollouts(actors, num_steps, policies)
        best_gather = min(best_gather, time.perf_counter() - start)
    runs: list[tuple[int, float]] = ray.get(
        [
            actor.run.remote(num_steps, policy)
            for actor, policy in zip(actors, policies, strict=True)
        ]
    )
    start = time.perf_counter()
    lockstep_rollouts(actors, lockstep_steps, RandomPolicy(2, 0))
    lockstep_seconds = time.perf_counter() - start
    for actor in actors:
        ray.kill(actor)
    total = num_actors * num_envs
    return {
        "gather": total * num_steps / best_gather,
        "in_actor": sum(steps / seconds for steps, seconds in runs),
        "lockstep": total * lockstep_steps / lockstep_seconds,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Prints env-steps/s per actor count."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--num-envs", type=int, default=1024, help="envs per actor")
    parser.add_argument("--steps", type=int, default=256, help="steps per gathered rollout")
    parser.add_argument(
        "--address",
        default=None,
        help="an existing cluster ('auto' or host:port); default: start a local Ray instance",
    )
    parser.add_argument("--num-cpus", type=int, default=None, help="local instance only")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="single node: pin actor k to the driver's k-th usable core (mod their count)",
    )
    args = parser.parse_args(argv)

    if args.address is None:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    else:
        ray.init(address=args.address)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        print(
            f"ray {ray.__version__}, {cpus} CPUs in the cluster; {args.num_envs} envs per "
            f"actor, {args.steps} steps per rollout; env-steps/s:"
        )
        print("| actors | envs | gather (driver clock) | in-actor stepping (sum) | lockstep |")
        print("|---:|---:|---:|---:|---:|")
        for num_actors in args.actors:
            if num_actors > cpus:
                print(f"| {num_actors} | skipped: more actors than the cluster's {cpus} CPUs |")
                continue
            cores = sorted(os.sched_getaffinity(0))
            cpu_sets = [[cores[k % len(cores)]] for k in range(num_actors)] if args.pin else None
            rates = throughput(num_actors, args.num_envs, args.steps, cpu_sets=cpu_sets)
            print(
                f"| {num_actors} | {num_actors * args.num_envs} | {rates['gather']:.3g} "
                f"| {rates['in_actor']:.3g} | {rates['lockstep']:.3g} |",
                flush=True,
            )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
