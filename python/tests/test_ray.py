"""The Ray recipe (``examples/ray_rollout.py``) on a local 2-CPU Ray cluster: what its actors
return equals, bit for bit, the same envs stepped in this process with the same seeds and
actions, and different actors step different streams.

The recipe is imported from its file, so the test runs the documented code. It needs
``ray`` (not a dependency of the package): without it the test fails at import.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import ray

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "ray_rollout.py"
NUM_ENVS = 16
NUM_ACTORS = 2
BASE_SEED = 2024
KEYS = ("obs", "actions", "rewards", "terminated", "truncated")


def load_recipe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ray_rollout", RECIPE)
    assert spec is not None, RECIPE
    assert spec.loader is not None, RECIPE
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the recipe registers itself for pickling by value
    spec.loader.exec_module(module)
    return module


rr = load_recipe()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Mapping[str, float]]:
    ray.init(num_cpus=2, include_dashboard=False)
    yield ray.cluster_resources()
    ray.shutdown()


def assert_bitwise_equal(remote: Mapping[str, Any], local: Mapping[str, Any]) -> None:
    assert set(remote) == set(KEYS) == set(local)
    for key in KEYS:
        a, b = np.asarray(remote[key]), np.asarray(local[key])
        assert a.dtype == b.dtype, key
        assert a.shape == b.shape, key
        assert a.tobytes() == b.tobytes(), f"{key} differs at {np.argwhere(a != b)[:5]}"


def local_workers() -> list[Any]:
    return [
        rr.EnvWorker(NUM_ENVS, rr.actor_seed(BASE_SEED, k, NUM_ENVS)) for k in range(NUM_ACTORS)
    ]


def test_gathered_rollouts_equal_local_stepping(cluster: Mapping[str, float]) -> None:
    assert cluster["CPU"] == 2
    actors = rr.make_actors(NUM_ACTORS, NUM_ENVS, BASE_SEED)
    # The envs live in the actors' processes, not here.
    pids = ray.get([actor.__ray_call__.remote(lambda _: os.getpid()) for actor in actors])
    assert len(set(pids)) == NUM_ACTORS
    assert os.getpid() not in pids

    steps = 300
    given = np.random.default_rng(7).integers(0, 2, size=(NUM_ACTORS, steps, NUM_ENVS))
    # First chunk: each actor's own random policy; second: actions given by the driver.
    first = rr.gather_rollouts(actors, steps, [rr.RandomPolicy(2, 100 + k) for k in range(2)])
    second = rr.gather_rollouts(actors, steps, [rr.ReplayPolicy(given[k]) for k in range(2)])

    for k, worker in enumerate(local_workers()):
        local_first = worker.rollout(steps, rr.RandomPolicy(2, 100 + k))
        local_second = worker.rollout(steps, rr.ReplayPolicy(given[k]))
        assert_bitwise_equal(first[k], local_first)
        assert_bitwise_equal(second[k], local_second)
        # The second chunk continues the first (the actor keeps its env between calls).
        assert second[k]["obs"][0].tobytes() == first[k]["obs"][-1].tobytes()
        np.testing.assert_array_equal(second[k]["actions"], given[k])
        # Random play ends many episodes: the autoreset streams are compared too.
        assert first[k]["terminated"].sum() > 100
        assert first[k]["obs"].shape == (steps + 1, NUM_ENVS, 4)
        assert first[k]["obs"].dtype == np.float32

    # Different actors: different seeds, different initial states and streams.
    assert rr.actor_seed(BASE_SEED, 1, NUM_ENVS) - rr.actor_seed(BASE_SEED, 0, NUM_ENVS) == (
        NUM_ENVS
    )
    starts = [{row.tobytes() for row in first[k]["obs"][0]} for k in range(NUM_ACTORS)]
    assert len(starts[0]) == len(starts[1]) == NUM_ENVS
    assert not starts[0] & starts[1]
    # Same actions, different seeds: the trajectories still differ.
    assert not np.array_equal(second[0]["actions"], second[1]["actions"])
    assert not np.array_equal(second[0]["obs"], second[1]["obs"])
    for actor in actors:
        ray.kill(actor)


def test_lockstep_driver_policy_equals_local_stepping(cluster: Mapping[str, float]) -> None:
    actors = rr.make_actors(NUM_ACTORS, NUM_ENVS, BASE_SEED)
    policy = rr.LinearPolicy((0.0, 0.0, 1.0, 1.0))  # balances: episodes reach the 500 limit
    steps = 520
    remote = rr.lockstep_rollouts(actors, steps, policy)

    for k, worker in enumerate(local_workers()):
        local = worker.rollout(steps, policy)
        assert_bitwise_equal(remote[k], local)
        # The driver's policy chose the actions from the observations it was sent.
        np.testing.assert_array_equal(remote[k]["actions"], policy(remote[k]["obs"][:-1]))
    truncated = np.concatenate([r["truncated"] for r in remote], axis=1)
    # Episodes that started at step 0 and lasted are truncated at their 500th step, and the
    # next step is NEXT_STEP's reset (reward 0); none other can reach 500 steps by 520.
    assert truncated[499].sum() > NUM_ACTORS * NUM_ENVS // 2
    assert not np.delete(truncated, 499, axis=0).any()
    rewards = np.concatenate([r["rewards"] for r in remote], axis=1)
    assert (rewards[500][truncated[499]] == 0).all()
    assert not np.array_equal(remote[0]["obs"], remote[1]["obs"])
    for actor in actors:
        ray.kill(actor)
