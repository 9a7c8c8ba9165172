"""Registration, gymnasium's wrappers and checkers."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env
from gymnasium.utils.passive_env_checker import check_obs
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

import cartfuse
from cartfuse import CartPoleEnv, CartPoleVectorEnv


def test_make_vec_returns_the_cartfuse_vector_env_with_kwargs() -> None:
    envs = gym.make_vec(
        "cartfuse/CartPole-v1",
        num_envs=5,
        vectorization_mode="vector_entry_point",
        plan="fused",
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    assert isinstance(envs, CartPoleVectorEnv)
    assert envs.num_envs == 5
    assert envs.plan == "fused"
    assert envs.max_episode_steps == 500
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert envs.spec is not None and envs.spec.id == cartfuse.ENV_ID
    envs.close()


def test_make_gives_a_single_env_that_passes_gymnasiums_checker() -> None:
    env = gym.make("cartfuse/CartPole-v1")
    assert isinstance(env.unwrapped, CartPoleEnv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
    # gymnasium's own CartPole-v1 draws the same two warnings: its velocity bounds are inf.
    unexpected = [str(w.message) for w in caught if "infinity" not in str(w.message)]
    assert unexpected == []
    obs, _ = env.reset(seed=0)
    total = 0.0
    for _ in range(600):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        total += reward
        if terminated or truncated:
            break
    assert terminated or truncated
    assert 1 <= total <= 500
    env.close()


def test_vector_env_passes_the_passive_checks_gymnasium_has() -> None:
    # gymnasium 1.x ships no vector env checker; apply its passive observation checks and
    # the VectorEnv contract to the batched spaces.
    envs = CartPoleVectorEnv(64)
    obs, info = envs.reset(seed=123)
    check_obs(obs, envs.observation_space, "reset")
    assert isinstance(info, dict)
    for _ in range(100):
        actions = envs.action_space.sample()
        obs, reward, term, trunc, info = envs.step(actions)
        check_obs(obs, envs.observation_space, "step")
        assert reward.shape == term.shape == trunc.shape == (64,)
        assert isinstance(info, dict)
    envs.close()
    assert envs.closed


def test_record_episode_statistics_and_normalize_observation_run() -> None:
    n = 128
    envs = RecordEpisodeStatistics(NormalizeObservation(CartPoleVectorEnv(n)))
    obs, _ = envs.reset(seed=5)
    episodes = 0
    lengths: list[int] = []
    for _ in range(300):
        obs, reward, term, trunc, info = envs.step(envs.action_space.sample())
        assert obs.shape == (n, 4) and np.isfinite(obs).all()
        if "episode" in info:
            mask = info["_episode"]
            episodes += int(mask.sum())
            lengths += info["episode"]["l"][mask].tolist()
            np.testing.assert_array_equal(info["episode"]["r"][mask], info["episode"]["l"][mask])
    assert episodes > 100
    assert 8 <= float(np.mean(lengths)) <= 60  # random-policy CartPole
    # The running mean normalises observations towards zero mean.
    assert abs(float(obs.mean())) < 1.0
