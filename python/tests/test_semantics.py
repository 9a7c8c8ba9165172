"""Seeding, autoreset modes, masked resets, state injection."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from cartfuse import CartPoleVectorEnv


def rollout(env: CartPoleVectorEnv, seed: int | list[int] | None, steps: int) -> list[np.ndarray]:
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = [obs]
    for _ in range(steps):
        obs, reward, term, trunc, _ = env.step(rng.integers(0, 2, size=env.num_envs))
        out += [obs, reward, term, trunc]
    return out


def test_same_seed_same_episodes_different_seed_different() -> None:
    env = CartPoleVectorEnv(64)
    a = rollout(env, 42, 200)
    b = rollout(env, 42, 200)
    c = rollout(CartPoleVectorEnv(64), 42, 200)
    d = rollout(env, 43, 200)
    for x, y, z in zip(a, b, c, strict=True):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)
    assert not np.array_equal(a[0], d[0])
    assert not all(np.array_equal(x, y) for x, y in zip(a, d, strict=True))


def test_int_seed_is_the_list_seed_plus_index() -> None:
    env = CartPoleVectorEnv(8)
    a = rollout(env, 100, 100)
    b = rollout(env, [100 + i for i in range(8)], 100)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_list_seeds_give_each_env_its_own_first_episode() -> None:
    seeds = [5, 17, 5, 123456789012345]
    obs, _ = CartPoleVectorEnv(4).reset(seed=seeds)
    for i, seed in enumerate(seeds):
        single, _ = CartPoleVectorEnv(1).reset(seed=seed)
        np.testing.assert_array_equal(obs[i], single[0])
    np.testing.assert_array_equal(obs[0], obs[2])
    assert (np.abs(obs) <= 0.05).all()


def test_seed_none_continues_the_stream() -> None:
    env = CartPoleVectorEnv(16)
    first, _ = env.reset(seed=9)
    second, _ = env.reset()
    assert not np.array_equal(first, second)
    assert (np.abs(second) <= 0.05).all()
    unseeded_a, _ = CartPoleVectorEnv(16).reset()
    unseeded_b, _ = CartPoleVectorEnv(16).reset()
    assert not np.array_equal(unseeded_a, unseeded_b)


def test_set_state_and_get_state_round_trip_in_gymnasium_order() -> None:
    env = CartPoleVectorEnv(3)
    env.reset(seed=0)
    states = np.array([[0.1, -0.2, 0.03, 0.4], [0.0, 0.0, 0.0, 0.0], [-1.5, 2.0, -0.1, -1.0]])
    env.set_state(states)
    np.testing.assert_array_equal(env.get_state(), states.astype(np.float32).astype(np.float64))
    obs, reward, *_ = env.step(np.array([1, 0, 1]))
    # x moves by tau * x_dot: gymnasium's Euler step.
    np.testing.assert_allclose(obs[:, 0], states[:, 0] + 0.02 * states[:, 1], atol=1e-6)
    np.testing.assert_array_equal(reward, [1, 1, 1])


def test_same_step_info_matches_sync_vector_env_layout() -> None:
    n = 32
    env = CartPoleVectorEnv(n, autoreset_mode=AutoresetMode.SAME_STEP)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    seen_done = 0
    for _ in range(200):
        before = env.get_state()
        obs, reward, term, trunc, info = env.step(rng.integers(0, 2, size=n))
        done = term | trunc
        assert (reward == 1.0).all()  # SAME_STEP never spends a step on a reset
        if not done.any():
            assert info == {}
            continue
        seen_done += int(done.sum())
        assert set(info) == {"final_obs", "_final_obs", "final_info", "_final_info"}
        assert info["final_obs"].dtype == object and info["final_obs"].shape == (n,)
        np.testing.assert_array_equal(info["_final_obs"], done)
        np.testing.assert_array_equal(info["_final_info"], done)
        assert info["final_info"] == {}
        for i in range(n):
            final = info["final_obs"][i]
            if not done[i]:
                assert final is None
                continue
            assert final.dtype == np.float32 and final.shape == (4,)
            # The final observation is one Euler step from the previous state ...
            assert final[0] == pytest.approx(before[i, 0] + 0.02 * before[i, 1], abs=1e-5)
            # ... and the returned observation is already the reset one.
            assert (np.abs(obs[i]) <= 0.05).all()
            if term[i]:
                assert abs(final[0]) > 2.4 or abs(final[2]) > 12 * 2 * np.pi / 360
    assert seen_done > 50


def test_next_step_reset_step_returns_zero_reward_and_no_flags() -> None:
    n = 64
    env = CartPoleVectorEnv(n)
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    env.reset(seed=4)
    prev_done = np.zeros(n, dtype=bool)
    for _ in range(200):
        obs, reward, term, trunc, _ = env.step(np.ones(n, dtype=np.int64))
        np.testing.assert_array_equal(reward == 0.0, prev_done)
        assert not (term[prev_done] | trunc[prev_done]).any()
        assert (np.abs(obs[prev_done]) <= 0.05).all()
        prev_done = term | trunc


def test_disabled_reset_mask_resets_only_masked_envs_and_counts_truncation() -> None:
    n = 6
    env = CartPoleVectorEnv(n, autoreset_mode="disabled", max_episode_steps=5)
    assert env.metadata["autoreset_mode"] is AutoresetMode.DISABLED
    env.reset(seed=8)
    env.set_state(np.zeros((n, 4)))
    for _ in range(3):
        _, reward, _, trunc, _ = env.step(np.array([0, 1] * 3))
        assert (reward == 1.0).all() and not trunc.any()
    last_obs = env.step(np.array([0, 1] * 3))[0]
    before = env.get_state()
    mask = np.array([True, False, True, False, False, True])
    obs, info = env.reset(options={"reset_mask": mask})
    assert info == {}
    after = env.get_state()
    np.testing.assert_array_equal(after[~mask], before[~mask])
    np.testing.assert_array_equal(obs[~mask], last_obs[~mask])
    assert (np.abs(after[mask]) <= 0.05).all()
    assert not np.array_equal(after[mask], before[mask])
    _, _, _, trunc, _ = env.step(np.zeros(n, dtype=np.int64))
    # Unmasked envs reach the limit (5 steps), masked ones are on step 1.
    np.testing.assert_array_equal(trunc, ~mask)
    # An env that ended is not stepped before it is reset (gymnasium's SyncVectorEnv asserts).
    with pytest.raises(AssertionError, match="DISABLED"):
        env.step(np.zeros(n, dtype=np.int64))
    env.reset(options={"reset_mask": trunc})
    env.step(np.zeros(n, dtype=np.int64))


def test_disabled_seeded_mask_resets_are_deterministic() -> None:
    def run() -> np.ndarray:
        env = CartPoleVectorEnv(4, autoreset_mode=AutoresetMode.DISABLED)
        env.reset(seed=[1, 2, 3, 4])
        for _ in range(3):
            env.step(np.ones(4, dtype=np.int64))
        mask = np.array([False, True, False, True])
        obs, _ = env.reset(seed=[10, 20, 30, 40], options={"reset_mask": mask})
        return obs

    a, b = run(), run()
    np.testing.assert_array_equal(a, b)
    single, _ = CartPoleVectorEnv(1, autoreset_mode="disabled").reset(seed=20)
    np.testing.assert_array_equal(a[1], single[0])


def test_plans_agree() -> None:
    results = []
    for plan in ["hand-written", "fused", "vertical", "eager"]:
        env = CartPoleVectorEnv(16, plan=plan)
        assert env.plan == plan
        results.append(rollout(env, 77, 60))
    for other in results[1:]:
        for x, y in zip(results[0], other, strict=True):
            np.testing.assert_allclose(x, y, atol=1e-5)
