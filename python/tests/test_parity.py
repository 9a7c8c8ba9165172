"""cartfuse against gymnasium's own vectorized CartPole, fed the same states and actions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv as GymCartPoleVectorEnv

from cartfuse import CartPoleVectorEnv

X_THRESHOLD = 2.4
THETA_THRESHOLD = 12 * 2 * math.pi / 360


def near_threshold(state: np.ndarray, tol: float = 1e-5) -> np.ndarray:
    """Envs whose f64 state sits so close to a termination bound that f32 may disagree."""
    x, theta = state[0], state[2]
    return (np.abs(np.abs(x) - X_THRESHOLD) < tol) | (np.abs(np.abs(theta) - THETA_THRESHOLD) < tol)


def test_spaces_equal_gymnasiums() -> None:
    ours = CartPoleVectorEnv(8)
    theirs = GymCartPoleVectorEnv(num_envs=8)
    assert ours.num_envs == 8
    assert ours.single_observation_space == theirs.single_observation_space
    assert ours.single_action_space == theirs.single_action_space
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space


@pytest.mark.parametrize("device", ["cpu", "wgpu"])
@pytest.mark.parametrize("plan", ["hand-written", "fused"])
@pytest.mark.parametrize("max_episode_steps", [500, 40])
def test_one_step_parity_with_gymnasium(device: str, plan: str, max_episode_steps: int) -> None:
    """Every step starts both envs from the same state (gymnax's and envpool's check), so
    f32 and f64 never drift apart: obs within 1e-4, identical rewards, terminations,
    truncations and NEXT_STEP reset steps."""
    n, steps = 512, 300
    ours = CartPoleVectorEnv(n, device=device, plan=plan, max_episode_steps=max_episode_steps)
    assert ours.device == device
    theirs = GymCartPoleVectorEnv(num_envs=n, max_episode_steps=max_episode_steps)
    ours.reset(seed=1)
    theirs.reset(seed=1)
    theirs.state = ours.get_state().T.copy()
    rng = np.random.default_rng(7)
    resets = truncations = terminations = 0
    for _ in range(steps):
        actions = rng.integers(0, 2, size=n)
        before = ours.get_state().T.copy()
        theirs.state = before.copy()
        obs, reward, term, trunc, info = ours.step(actions)
        g_obs, g_reward, g_term, g_trunc, _ = theirs.step(actions)
        assert info == {}
        assert obs.dtype == np.float32 and obs.shape == (n, 4)
        assert reward.dtype == np.float32 and term.dtype == np.bool_ and trunc.dtype == np.bool_
        reset_step = g_reward == 0.0
        ambiguous = near_threshold(theirs.state) & ~reset_step
        np.testing.assert_array_equal(reward, g_reward)
        np.testing.assert_array_equal(term[~ambiguous], g_term[~ambiguous])
        np.testing.assert_array_equal(trunc, g_trunc)
        # Reset steps draw different random states; every other step must agree.
        np.testing.assert_allclose(obs[~reset_step], g_obs[~reset_step], atol=1e-4, rtol=0)
        assert (np.abs(obs[reset_step]) <= 0.05).all()
        assert not (term[reset_step] | trunc[reset_step]).any()
        resets += int(reset_step.sum())
        terminations += int(term.sum())
        truncations += int(trunc.sum())
    assert resets > 100 and terminations > 100
    if max_episode_steps == 40:
        assert truncations > 0


def test_free_running_parity_until_divergence() -> None:
    """From the same initial states and actions, without resynchronising: obs agree within
    1e-4 over the first steps, before f32 rounding has been amplified by the dynamics."""
    n = 1024
    ours = CartPoleVectorEnv(n)
    theirs = GymCartPoleVectorEnv(num_envs=n)
    ours.reset(seed=3)
    theirs.reset(seed=3)
    theirs.state = ours.get_state().T.copy()
    rng = np.random.default_rng(11)
    same_episode = np.ones(n, dtype=bool)  # until an env resets (each side draws its own)
    for _ in range(25):
        actions = rng.integers(0, 2, size=n)
        obs, reward, term, trunc, _ = ours.step(actions)
        g_obs, g_reward, g_term, g_trunc, _ = theirs.step(actions)
        same_episode &= g_reward == 1.0
        live = same_episode
        np.testing.assert_allclose(obs[live], g_obs[live], atol=1e-4, rtol=0)
        np.testing.assert_array_equal(reward[live], g_reward[live])
        np.testing.assert_array_equal(term[live], g_term[live])
        np.testing.assert_array_equal(trunc[live], g_trunc[live])
    assert same_episode.sum() > n // 20
