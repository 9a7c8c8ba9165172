"""What the conformance suites (``test_conformance.py``, ``test_conformance_episodes.py``)
share: the environments and autoreset modes they cover, cartfuse's vector env and
gymnasium's ``SyncVectorEnv`` of the same id built side by side, both pinned to the same
states, states and actions to step them with, and errors compared by type and message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import cartfuse
from cartfuse import CartfuseVectorEnv, env_info

ENV_IDS = [i for i in cartfuse.ENV_IDS if i in gym.registry]
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]


def ours(env_id: str, n: int, **kwargs: Any) -> CartfuseVectorEnv:
    envs = gym.make_vec(
        f"cartfuse/{env_id}", num_envs=n, vectorization_mode="vector_entry_point", **kwargs
    )
    assert isinstance(envs, CartfuseVectorEnv)
    return envs


def theirs(
    env_id: str, n: int, mode: AutoresetMode = AutoresetMode.NEXT_STEP, **kwargs: Any
) -> SyncVectorEnv:
    def make() -> gym.Env[Any, Any]:
        return gym.make(env_id, **kwargs)

    return SyncVectorEnv([make for _ in range(n)], autoreset_mode=mode)


def pin(mine: CartfuseVectorEnv, gyms: SyncVectorEnv, states: np.ndarray) -> None:
    """Both sides in the same states (float32 values, which cartfuse stores exactly)."""
    states = np.asarray(states, dtype=np.float32).astype(np.float64)
    mine.set_state(states)
    for env, state in zip(gyms.envs, states, strict=True):
        env.unwrapped.state = state.copy()  # type: ignore[attr-defined]


def quiet_states(env_id: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """States near the environment's resting or starting point, from which no episode ends
    within a few steps: a quarter of the default reset range."""
    info = env_info(env_id)
    dim = len(info.state_names)
    states = np.zeros((n, dim))
    for k, (low, high) in enumerate(info.reset_bounds):
        middle, half = (low + high) / 2, (high - low) / 8
        states[:, k] = rng.uniform(middle - half, middle + half, size=n)
    return states


def actions_for(space: gym.Space[Any], rng: np.random.Generator) -> np.ndarray:
    if isinstance(space, gym.spaces.MultiDiscrete):
        return rng.integers(0, space.nvec)
    assert isinstance(space, gym.spaces.Box)
    return rng.uniform(space.low, space.high).astype(np.float32)


def constant_options(env_id: str) -> tuple[dict[str, float], np.ndarray]:
    """Reset options that give one exact state, and that state (drawn components at the
    constant, the others 0: MountainCar's velocity)."""
    info = env_info(env_id)
    dim = len(info.state_names)
    drawn = len(info.reset_bounds)
    state = np.zeros(dim)
    if list(info.reset_option_names) == ["low", "high"]:
        low, high = info.reset_bounds[0]
        value = float(np.float32(low + (high - low) / 4))
        state[:drawn] = value
        return {"low": value, "high": value}, state
    return {name: 0.0 for name in info.reset_option_names}, state


def gym_class(env_id: str) -> Any:
    """gymnasium's own env class of ``env_id``."""
    return load_env_creator(gym.spec(env_id).entry_point)  # type: ignore[arg-type]


def raised(call: Callable[[], object]) -> BaseException:
    with pytest.raises(Exception) as caught:  # noqa: PT011 (any error: compared below)
        call()
    return caught.value


def assert_same_error(mine: Callable[[], object], gyms: Callable[[], object]) -> None:
    a, b = raised(mine), raised(gyms)
    assert type(a) is type(b), (a, b)
    assert str(a) == str(b)
    assert type(a.__cause__) is type(b.__cause__)
