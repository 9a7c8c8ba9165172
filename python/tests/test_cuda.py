"""``device="cuda"``: on a machine without NVIDIA's driver, a clear ``ValueError`` from every
constructor; with one, the envs step there (the wheel includes the CUDA runtime)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from cartfuse import CartPoleVectorEnv, PendulumEnv, compiled_devices


def _has_nvidia_driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


CONSTRUCTORS: list[tuple[str, Callable[[], Any]]] = [
    ("CartPoleVectorEnv", lambda: CartPoleVectorEnv(4, device="cuda")),
    (
        "gym.make_vec",
        lambda: gym.make_vec(
            "cartfuse/CartPole-v1",
            num_envs=4,
            vectorization_mode="vector_entry_point",
            device="cuda",
        ),
    ),
    ("PendulumEnv", lambda: PendulumEnv(device="cuda")),
]

needs_cuda_build = pytest.mark.skipif(
    "cuda" not in compiled_devices(), reason="this wheel was built without CUDA"
)


@needs_cuda_build
@pytest.mark.skipif(_has_nvidia_driver(), reason="this machine has NVIDIA's driver")
@pytest.mark.parametrize(("name", "make"), CONSTRUCTORS, ids=[n for n, _ in CONSTRUCTORS])
def test_cuda_without_a_driver_says_so(name: str, make: Callable[[], Any]) -> None:
    with pytest.raises(ValueError, match="device") as raised:
        make()
    message = str(raised.value)
    assert "no NVIDIA driver" in message, f"{name}: {message}"
    assert 'device="cpu"' in message, f"{name}: {message}"


@needs_cuda_build
@pytest.mark.skipif(not _has_nvidia_driver(), reason="needs NVIDIA's driver and a GPU")
def test_cuda_steps_as_the_cpu_does() -> None:
    cuda = CartPoleVectorEnv(64, device="cuda")
    cpu = CartPoleVectorEnv(64, device="cpu")
    obs_cuda, _ = cuda.reset(seed=3)
    obs_cpu, _ = cpu.reset(seed=3)
    np.testing.assert_array_equal(obs_cuda, obs_cpu)
    actions = np.arange(64) % 2
    for _ in range(20):
        obs_cuda, reward_cuda, *_ = cuda.step(actions)
        obs_cpu, reward_cpu, *_ = cpu.step(actions)
        np.testing.assert_allclose(obs_cuda, obs_cpu, atol=1e-5)
        np.testing.assert_array_equal(reward_cuda, reward_cpu)
