"""1e7 env-steps keep the resident set stable (no leak per step)."""

from __future__ import annotations

import os
import resource

import numpy as np
import pytest

from cartfuse import CartPoleVectorEnv


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_ten_million_env_steps_keep_rss_stable() -> None:
    n = 4096
    steps = int(os.environ.get("CARTFUSE_LONG_RUN_STEPS", "2500"))
    env = CartPoleVectorEnv(n)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, size=(16, n))
    for i in range(200):  # warm up: JIT, allocator pools
        env.step(actions[i % 16])
    start = rss_mib()
    for i in range(steps):
        obs, *_ = env.step(actions[i % 16])
    growth = rss_mib() - start
    assert obs.shape == (n, 4)
    # Each step hands ~100 KiB to numpy; a leak would grow by GiBs over 2500 steps.
    assert growth < 32, f"RSS grew {growth:.1f} MiB over {steps} steps of {n} envs"
