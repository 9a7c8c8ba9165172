"""``device="cuda"``: on a machine without NVIDIA's driver, a clear ``ValueError`` from every
constructor; with one, the envs step there (the wheel includes the CUDA runtime), and with
``copy=False`` the outputs stay on the GPU as DLPack views and CUDA tensors of actions are
taken in place (with torch)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from async_steps import step_alike
from nvidia import has_nvidia_driver

from cartfuse import (
    CartPoleVectorEnv,
    DeviceArray,
    PendulumEnv,
    PendulumVectorEnv,
    compiled_devices,
)

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
needs_cuda = pytest.mark.skipif(
    "cuda" not in compiled_devices()
    or not has_nvidia_driver()
    or importlib.util.find_spec("torch") is None,
    reason="needs a CUDA build, NVIDIA's driver, a GPU and torch",
)


@needs_cuda_build
@pytest.mark.skipif(has_nvidia_driver(), reason="this machine has NVIDIA's driver")
@pytest.mark.parametrize(("name", "make"), CONSTRUCTORS, ids=[n for n, _ in CONSTRUCTORS])
def test_cuda_without_a_driver_says_so(name: str, make: Callable[[], Any]) -> None:
    with pytest.raises(ValueError, match="device") as raised:
        make()
    message = str(raised.value)
    assert "no NVIDIA driver" in message, f"{name}: {message}"
    assert 'device="cpu"' in message, f"{name}: {message}"


@needs_cuda_build
@pytest.mark.skipif(not has_nvidia_driver(), reason="needs NVIDIA's driver and a GPU")
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


@needs_cuda_build
@pytest.mark.skipif(not has_nvidia_driver(), reason="needs NVIDIA's driver and a GPU")
def test_cuda_async_steps_equal_synchronous_ones() -> None:
    """``step_async`` runs the step on the env's background thread, where cubecl gives the
    thread a CUDA stream of its own: steps there, between steps and resets on the calling
    thread's stream, must see every earlier write and give the same bits."""
    sync = CartPoleVectorEnv(1000, device="cuda", max_episode_steps=9)
    split = CartPoleVectorEnv(1000, device="cuda", max_episode_steps=9)
    for env in (sync, split):
        env.reset(seed=5)
    rng = np.random.default_rng(1)
    for step in range(40):
        step_alike(sync, split, rng.integers(0, 2, size=1000), "step_async" if step % 3 else "step")
        if step == 20:
            for env in (sync, split):
                env.reset(seed=6)


@needs_cuda
def test_cuda_views_follow_the_host_step() -> None:
    import torch

    views = CartPoleVectorEnv(256, device="cuda", copy=False)
    host = CartPoleVectorEnv(256, device="cpu")
    obs, _ = views.reset(seed=11)
    host_obs, _ = host.reset(seed=11)
    assert isinstance(obs, DeviceArray)
    np.testing.assert_array_equal(torch.from_dlpack(obs).cpu().numpy(), host_obs)
    # Views mode keeps no host arrays of its own, and still says copy=False.
    assert views.copy is False and views._native.copy is False
    generator = torch.Generator(device="cuda").manual_seed(0)
    for step in range(300):
        actions = torch.randint(0, 2, (256,), device="cuda", generator=generator)
        # Alternate a CUDA tensor (taken in place) and a host array.
        sent = actions.int() if step % 2 == 0 else actions.cpu().numpy()
        obs, reward, terminated, truncated, _ = views.step(sent)
        host_obs, host_reward, host_terminated, host_truncated, _ = host.step(actions.cpu().numpy())
        obs_t = torch.from_dlpack(obs)
        assert obs_t.device.type == "cuda"
        assert obs_t.dtype == torch.float32
        np.testing.assert_allclose(obs_t.cpu().numpy(), host_obs, atol=1e-4)
        np.testing.assert_array_equal(torch.from_dlpack(reward).cpu().numpy(), host_reward)
        assert torch.from_dlpack(terminated).dtype == torch.int32
        np.testing.assert_array_equal(
            torch.from_dlpack(terminated).cpu().numpy().astype(bool), host_terminated
        )
        np.testing.assert_array_equal(
            torch.from_dlpack(truncated).cpu().numpy().astype(bool), host_truncated
        )


@needs_cuda
def test_cuda_actions_are_checked() -> None:
    import torch

    env = CartPoleVectorEnv(8, device="cuda", copy=False)
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"actions.*int32"):
        env.step(torch.zeros(8, dtype=torch.int64, device="cuda"))
    with pytest.raises(ValueError, match=r"actions.*shape"):
        env.step(torch.zeros(9, dtype=torch.int32, device="cuda"))
    with pytest.raises(ValueError, match=r"actions.*contiguous"):
        env.step(torch.zeros(16, dtype=torch.int32, device="cuda")[::2])
    with pytest.raises(ValueError, match="actions"):
        env.step(torch.full((8,), 2, dtype=torch.int32, device="cuda"))
    pendulum = PendulumVectorEnv(4, device="cuda", copy=False)
    pendulum.reset(seed=0)
    obs, *_ = pendulum.step(torch.zeros((4, 1), device="cuda"))
    assert obs.shape == [4, 3]


@needs_cuda
def test_cuda_views_refuse_other_autoreset_modes() -> None:
    with pytest.raises(ValueError, match=r"copy.*NEXT_STEP"):
        CartPoleVectorEnv(4, device="cuda", copy=False, autoreset_mode="same_step")


@needs_cuda_build
@pytest.mark.skipif(
    not has_nvidia_driver() or importlib.util.find_spec("jax") is None,
    reason="needs NVIDIA's driver, a GPU and JAX",
)
def test_jax_takes_the_views_and_gives_the_actions_in_place() -> None:
    """JAX, the other consumer the views are for: ``jax.dlpack.from_dlpack`` of each output
    (JAX asks for a legacy capsule with ``stream=`` only) and a JAX array of actions on the
    same GPU (taken through its ``__dlpack__``), against the CPU runtime."""
    import jax
    import jax.numpy as jnp

    gpus = [device for device in jax.devices() if device.platform == "gpu"]
    if not gpus:
        pytest.skip("this JAX has no GPU backend")
    views = CartPoleVectorEnv(256, device="cuda", copy=False)
    host = CartPoleVectorEnv(256, device="cpu")
    obs, _ = views.reset(seed=4)
    host_obs, _ = host.reset(seed=4)
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(obs)), host_obs)
    key = jax.random.key(0)
    for _ in range(50):
        key, draw = jax.random.split(key)
        actions = jax.device_put(jax.random.randint(draw, (256,), 0, 2, dtype=jnp.int32), gpus[0])
        obs, reward, terminated, truncated, _ = views.step(actions)
        want = host.step(np.asarray(actions))
        got = [jax.dlpack.from_dlpack(view) for view in (obs, reward, terminated, truncated)]
        assert got[0].devices() == {gpus[0]}
        np.testing.assert_allclose(np.asarray(got[0]), want[0], atol=1e-4)
        np.testing.assert_array_equal(np.asarray(got[1]), want[1])
        for flags, wanted in zip(got[2:], want[2:4], strict=True):
            np.testing.assert_array_equal(np.asarray(flags).astype(bool), wanted)
