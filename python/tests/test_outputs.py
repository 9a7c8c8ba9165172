"""Where a step's outputs live: fresh arrays by default (gymnasium's ``copy=True``), the env's
own arrays with ``copy=False`` (overwritten in place by each step), shared without a copy
through DLPack; the same values either way, for every environment."""

from __future__ import annotations

import importlib.util
import weakref

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from cartfuse import ENV_IDS, CartfuseVectorEnv, CartPoleVectorEnv


def _actions(env: CartfuseVectorEnv, step: int) -> np.ndarray:
    env.action_space.seed(step)
    return np.asarray(env.action_space.sample())


def test_default_steps_return_arrays_no_later_step_touches() -> None:
    env = CartfuseVectorEnv("CartPole-v1", 300)
    env.reset(seed=1)
    first = env.step(np.ones(300, dtype=np.int64))
    kept = [np.array(a, copy=True) for a in first[:4]]
    second = env.step(np.zeros(300, dtype=np.int64))
    for before, now, later in zip(kept, first[:4], second[:4], strict=True):
        np.testing.assert_array_equal(now, before)  # the next step left it alone
        assert not np.shares_memory(now, later)
    assert not np.array_equal(first[0], second[0])


def test_default_arrays_are_written_again_only_once_nothing_references_them() -> None:
    # The env recycles the arrays of earlier steps that Python dropped (saving numpy's
    # allocation); an array, a view of it, a weak reference or a buffer export keeps them.
    n = 300
    env = CartPoleVectorEnv(n)
    env.reset(seed=1)
    held: list[tuple[str, object, np.ndarray]] = []
    addresses = set()
    for step in range(16):
        obs, reward, _, _, _ = env.step(np.full(n, step % 2, dtype=np.int64))
        addresses.add(obs.__array_interface__["data"][0])
        if step == 2:
            held.append(("array", obs, obs.copy()))
        if step == 4:
            held.append(("view", obs[1:], obs[1:].copy()))
        if step == 6:
            held.append(("weak reference", weakref.ref(obs), obs.copy()))
        if step == 8:
            held.append(("memoryview", memoryview(reward), reward.copy()))
        del obs, reward
    for what, ref, snapshot in held:
        if isinstance(ref, weakref.ref):
            ref = ref()
            if ref is None:
                continue
        np.testing.assert_array_equal(np.asarray(ref), snapshot, err_msg=what)
    # 16 steps wrote 3 recycled observation arrays and one new one per held array, at most.
    assert len(addresses) <= 3 + 3, addresses


def test_default_arrays_changed_in_place_by_the_caller_are_not_handed_out_again() -> None:
    # A caller may reshape, retype or freeze an array in place before dropping it; the
    # recycler must not hand such an array to the next caller.
    n = 64
    env = CartPoleVectorEnv(n)
    env.reset(seed=2)
    actions = np.ones(n, dtype=np.int64)
    for change in range(12):
        obs, reward, terminated, _, _ = env.step(actions)
        assert obs.shape == (n, 4) and obs.dtype == np.float32, change
        assert reward.shape == (n,) and reward.dtype == np.float32, change
        assert terminated.dtype == np.bool_, change
        for array in (obs, reward, terminated):
            assert array.flags.writeable and array.flags.c_contiguous, change
        if change % 3 == 0:
            obs.shape = (n * 4,)
        elif change % 3 == 1:
            reward.dtype = np.int32
        else:
            terminated.flags.writeable = False
        del obs, reward, terminated


def test_copy_false_returns_the_envs_own_arrays_overwritten_by_each_step() -> None:
    env = CartPoleVectorEnv(300, copy=False)
    obs0, _ = env.reset(seed=1)
    first = env.step(np.ones(300, dtype=np.int64))
    snapshot = first[0].copy()
    second = env.step(np.zeros(300, dtype=np.int64))
    for a, b in zip(first[:4], second[:4], strict=True):
        assert a is b
    assert obs0 is first[0]  # reset hands out the same observation array
    assert not np.array_equal(snapshot, second[0])
    np.testing.assert_array_equal(first[0], second[0])  # the same memory, now the new values


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize(
    "mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]
)
def test_copies_and_views_hold_the_same_values(env_id: str, mode: AutoresetMode) -> None:
    n = 37  # a partial last vector at every SIMD width
    fresh = CartfuseVectorEnv(env_id, n, autoreset_mode=mode, max_episode_steps=9)
    views = CartfuseVectorEnv(env_id, n, autoreset_mode=mode, max_episode_steps=9, copy=False)
    for env in (fresh, views):
        env.reset(seed=5)
    ended = 0
    for step in range(25):
        actions = _actions(fresh, step)
        got = fresh.step(actions)
        want = views.step(actions)
        for a, b in zip(got[:4], want[:4], strict=True):
            assert a.dtype == b.dtype and a.flags.c_contiguous and b.flags.c_contiguous
            np.testing.assert_array_equal(a, b)
        assert got[1].dtype == np.float32 and got[2].dtype == np.bool_
        assert set(got[4]) == set(want[4])
        if "final_obs" in got[4]:
            ended += int(got[4]["_final_obs"].sum())
            for a, b in zip(got[4]["final_obs"], want[4]["final_obs"], strict=True):
                np.testing.assert_array_equal(a, b)
        if mode == AutoresetMode.DISABLED and (got[2] | got[3]).any():
            for env in (fresh, views):
                env.reset(options={"reset_mask": got[2] | got[3]})
    if mode == AutoresetMode.SAME_STEP:
        assert ended > 0


def test_final_observations_are_copies_in_same_step_mode() -> None:
    env = CartfuseVectorEnv(
        "CartPole-v1", 8, autoreset_mode=AutoresetMode.SAME_STEP, max_episode_steps=2, copy=False
    )
    env.reset(seed=0)
    env.step(np.zeros(8, dtype=np.int64))
    _, _, _, truncated, info = env.step(np.zeros(8, dtype=np.int64))
    assert truncated.all()
    finals = [row.copy() for row in info["final_obs"]]
    env.step(np.zeros(8, dtype=np.int64))
    for row, kept in zip(info["final_obs"], finals, strict=True):
        np.testing.assert_array_equal(row, kept)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_the_envs_own_arrays_are_aligned_for_jax(mode: str) -> None:
    # XLA's CPU client takes a DLPack buffer in place only at 64-byte alignment.
    for n in (1, 3, 64, 1000):
        env = CartfuseVectorEnv("CartPole-v1", n, copy=False, autoreset_mode=mode)
        obs, _ = env.reset(seed=3)
        outputs = env.step(np.ones(n, dtype=np.int64))
        arrays = [obs, *outputs[1:4]]
        if mode == "same_step":
            arrays.append(env._native.step(np.ones(n, dtype=np.int64))[4])
        for array in arrays:
            assert array.ctypes.data % 64 == 0, (n, array.dtype)
            assert array.flags.c_contiguous
            assert array.flags.writeable
        assert obs.shape == (n, 4)
        assert outputs[0] is obs or np.shares_memory(outputs[0], obs)
        env.close()


def test_numpy_dlpack_shares_the_envs_memory() -> None:
    env = CartfuseVectorEnv("CartPole-v1", 64, copy=False)
    obs, _ = env.reset(seed=3)
    shared = np.from_dlpack(obs)
    assert np.shares_memory(shared, obs)
    _, reward, terminated, _, _ = env.step(np.ones(64, dtype=np.int64))
    np.testing.assert_array_equal(shared, obs)  # the step's values, seen through the view
    for array in (reward, terminated):
        assert np.shares_memory(np.from_dlpack(array), array)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_torch_dlpack_shares_the_envs_memory() -> None:
    import torch

    env = CartfuseVectorEnv("CartPole-v1", 64, copy=False)
    obs, _ = env.reset(seed=3)
    tensor = torch.from_dlpack(obs)
    assert tensor.data_ptr() == obs.ctypes.data
    env.step(np.ones(64, dtype=np.int64))
    np.testing.assert_array_equal(tensor.numpy(), obs)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_jax_dlpack_shares_the_envs_memory() -> None:
    import jax

    env = CartfuseVectorEnv("CartPole-v1", 64, copy=False)
    obs, _ = env.reset(seed=3)
    array = jax.dlpack.from_dlpack(obs)
    assert array.unsafe_buffer_pointer() == obs.ctypes.data
    np.testing.assert_array_equal(np.asarray(array), obs)
