"""What this build of the native module offers, as gymnasium sees it: the environments'
ids (:data:`ENV_IDS`), the devices and plans it knows, each environment's declaration
(:func:`env_info`) and its spaces, single and batched. :mod:`cartfuse.vector` re-exports
the public names."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from cartfuse import _native
from cartfuse._native import NativeVecEnv

#: Every device name the constructor knows (``None`` picks one automatically).
DEVICES: tuple[str, ...] = ("cpu", "wgpu", "cuda")
#: Plan names ``plan=`` accepts (``"hand-written"`` only where the environment has one).
PLANS: tuple[str, ...] = tuple(NativeVecEnv.plans())
#: gymnasium ids of every environment this build of the native module has.
ENV_IDS: tuple[str, ...] = tuple(_native.env_ids())

ObsArray = npt.NDArray[np.float32]
ActArray = npt.NDArray[Any]
Spaces = tuple[spaces.Box, spaces.Space[Any], spaces.Space[Any], spaces.Space[Any]]
StepResult = tuple[
    ObsArray,
    npt.NDArray[np.float32],
    npt.NDArray[np.bool_],
    npt.NDArray[np.bool_],
    dict[str, Any],
]


def compiled_devices() -> list[str]:
    """The devices this build of the native module can open."""
    return list(NativeVecEnv.compiled_devices())


def env_info(env_id: str) -> _native.EnvInfo:
    """The environment ``env_id`` names, as its Rust definition declares it (spaces, state
    names, ``max_episode_steps``). ``ValueError`` for an id not in :data:`ENV_IDS`."""
    if not isinstance(env_id, str):
        raise TypeError(f"env_id: expected a str, got {type(env_id).__name__}")
    return _native.env_info(env_id)


def single_spaces(info: _native.EnvInfo) -> tuple[spaces.Box, spaces.Space[Any]]:
    """The observation and action spaces of one env, built from ``info``."""
    obs = spaces.Box(
        np.array(info.observation_low, dtype=np.float32),
        np.array(info.observation_high, dtype=np.float32),
        shape=tuple(info.observation_shape),
        dtype=np.float32,
    )
    action: spaces.Space[Any]
    if info.action_kind == "discrete":
        assert info.action_n is not None
        action = spaces.Discrete(info.action_n)
    else:
        assert info.action_low is not None
        assert info.action_high is not None
        action = spaces.Box(
            np.array(info.action_low, dtype=np.float32),
            np.array(info.action_high, dtype=np.float32),
            shape=tuple(info.action_shape),
            dtype=np.float32,
        )
    return obs, action


def batched_spaces(info: _native.EnvInfo, num_envs: int) -> Spaces:
    """The single spaces and their batched forms."""
    obs, action = single_spaces(info)
    return obs, action, batch_space(obs, num_envs), batch_space(action, num_envs)
