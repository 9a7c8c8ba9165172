"""cartfuse: batched classic-control environments stepped by CubeCL kernels (or cartfuse's
native CPU runtime), as gymnasium environments.

The environments are the ones cartfuse's Rust crate registers (:data:`ENV_IDS`):
CartPole-v1, MountainCar-v0, Acrobot-v1 (discrete actions), MountainCarContinuous-v0 and
Pendulum-v1 (continuous actions). Each follows gymnasium's definition (spaces, dynamics,
rewards, episode ends, registered ``max_episode_steps``). Importing ``cartfuse`` registers
``cartfuse/<id>`` with gymnasium for every one of them::

    import gymnasium as gym
    import cartfuse  # noqa: F401

    envs = gym.make_vec("cartfuse/CartPole-v1", num_envs=4096,
                        vectorization_mode="vector_entry_point")
    env = gym.make("cartfuse/MountainCar-v0")  # one env over a 1-env vector env

In Python: :class:`~cartfuse.vector.CartfuseVectorEnv` (``CartfuseVectorEnv("CartPole-v1",
4096)``) or a named subclass per environment (``CartPoleVectorEnv(4096)``,
``MountainCarVectorEnv``, ...), and :class:`~cartfuse.env.CartfuseEnv` for one env.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gymnasium as gym

from cartfuse._native import DeviceArray, __version__
from cartfuse.env import CartfuseEnv, env_class
from cartfuse.vector import (
    DEVICES,
    ENV_IDS,
    PLANS,
    CartfuseVectorEnv,
    compiled_devices,
    env_info,
    vector_env_class,
)

#: The gymnasium id of cartfuse's CartPole-v1 (its first environment).
ENV_ID = "cartfuse/CartPole-v1"
#: The gymnasium namespace cartfuse registers its environments in.
NAMESPACE = "cartfuse"


def registered_id(env_id: str) -> str:
    """The id gymnasium knows cartfuse's ``env_id`` by: ``"cartfuse/<env_id>"``."""
    return f"{NAMESPACE}/{env_id}"


def register_envs() -> None:
    """Registers ``cartfuse/<id>`` for every id in :data:`ENV_IDS` (idempotent), with the
    environment's ``max_episode_steps`` and gymnasium's ``reward_threshold`` for that id."""
    for env_id in ENV_IDS:
        if registered_id(env_id) in gym.registry:
            continue
        # gymnasium registers its own classic-control envs on import; its spec of the same
        # id holds the reward threshold (None for Pendulum-v1 and ids it does not have).
        theirs = gym.registry.get(env_id)
        gym.register(
            id=registered_id(env_id),
            entry_point=f"cartfuse.env:{env_class(env_id).__name__}",
            vector_entry_point=f"cartfuse.vector:{vector_env_class(env_id).__name__}",
            max_episode_steps=env_info(env_id).max_episode_steps,
            reward_threshold=None if theirs is None else theirs.reward_threshold,
        )


register_envs()

# Every named class (`CartPoleVectorEnv`, `CartPoleEnv`, ...) at the package's top level.
for _env_id in ENV_IDS:
    globals()[vector_env_class(_env_id).__name__] = vector_env_class(_env_id)
    globals()[env_class(_env_id).__name__] = env_class(_env_id)

if TYPE_CHECKING:
    # The named classes, for type checkers: `X as X` re-exports each one (a checker cannot
    # read the names `__all__` computes), so `cartfuse.CartPoleVectorEnv` passes
    # `mypy --strict` in a user's code.
    from cartfuse.env import AcrobotEnv as AcrobotEnv
    from cartfuse.env import CartPoleEnv as CartPoleEnv
    from cartfuse.env import MountainCarContinuousEnv as MountainCarContinuousEnv
    from cartfuse.env import MountainCarEnv as MountainCarEnv
    from cartfuse.env import PendulumEnv as PendulumEnv
    from cartfuse.vector import AcrobotVectorEnv as AcrobotVectorEnv
    from cartfuse.vector import CartPoleVectorEnv as CartPoleVectorEnv
    from cartfuse.vector import MountainCarContinuousVectorEnv as MountainCarContinuousVectorEnv
    from cartfuse.vector import MountainCarVectorEnv as MountainCarVectorEnv
    from cartfuse.vector import PendulumVectorEnv as PendulumVectorEnv

__all__ = [
    "DEVICES",
    "ENV_ID",
    "ENV_IDS",
    "NAMESPACE",
    "PLANS",
    "CartfuseEnv",
    "CartfuseVectorEnv",
    "DeviceArray",
    "__version__",
    "compiled_devices",
    "env_class",
    "env_info",
    "register_envs",
    "registered_id",
    "vector_env_class",
    *(vector_env_class(env_id).__name__ for env_id in ENV_IDS),
    *(env_class(env_id).__name__ for env_id in ENV_IDS),
]
