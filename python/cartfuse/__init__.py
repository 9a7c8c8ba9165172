"""cartfuse: batched CartPole-v1 stepped by CubeCL kernels, as gymnasium environments.

Importing ``cartfuse`` registers ``cartfuse/CartPole-v1`` with gymnasium::

    import gymnasium as gym
    import cartfuse  # noqa: F401

    envs = gym.make_vec("cartfuse/CartPole-v1", num_envs=4096,
                        vectorization_mode="vector_entry_point")
    env = gym.make("cartfuse/CartPole-v1")  # one env over a 1-env vector env
"""

from __future__ import annotations

import gymnasium as gym

from cartfuse._native import __version__
from cartfuse.env import CartPoleEnv
from cartfuse.vector import DEVICES, PLANS, CartPoleVectorEnv, compiled_devices

__all__ = [
    "DEVICES",
    "ENV_ID",
    "PLANS",
    "CartPoleEnv",
    "CartPoleVectorEnv",
    "__version__",
    "compiled_devices",
    "register_envs",
]

#: The gymnasium id cartfuse registers.
ENV_ID = "cartfuse/CartPole-v1"


def register_envs() -> None:
    """Registers ``cartfuse/CartPole-v1`` (idempotent)."""
    if ENV_ID in gym.registry:
        return
    gym.register(
        id=ENV_ID,
        entry_point="cartfuse.env:CartPoleEnv",
        vector_entry_point="cartfuse.vector:CartPoleVectorEnv",
        max_episode_steps=500,
        reward_threshold=475.0,
    )


register_envs()
