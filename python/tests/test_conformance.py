"""cartfuse against gymnasium itself, for every environment: the same calls on
``gym.make_vec("cartfuse/<id>", vectorization_mode="vector_entry_point")`` and on gymnasium's
``SyncVectorEnv`` of its own envs, compared on what a vector env is before it steps far:
spaces and metadata, the types and shapes of every output and info key in each autoreset
mode, masked resets (which rows change, infos, errors) and reset options (errors, bounds).
Random draws differ (each side has its own generator), so states are pinned (``set_state`` /
``env.unwrapped.state``) where values are compared. Episodes (constructor arguments, time
limits, frames, seeds, trajectories): ``test_conformance_episodes.py``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import cartfuse
from cartfuse import env_class, env_info, vector_env_class

from gym_pairs import (
    ENV_IDS,
    MODES,
    actions_for,
    assert_same_error,
    constant_options,
    gym_class,
    ours,
    pin,
    quiet_states,
    raised,
    theirs,
)


def test_every_cartfuse_environment_is_one_gymnasium_has() -> None:
    assert list(cartfuse.ENV_IDS) == ENV_IDS
    assert len(ENV_IDS) >= 5


# --- spaces and metadata ---------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spaces_and_metadata(env_id: str) -> None:
    fps = gym_class(env_id).metadata["render_fps"]
    # Class-level, without an instance (gymnasium's make reads the class's).
    assert env_class(env_id).metadata["render_fps"] == fps
    assert vector_env_class(env_id).metadata["render_fps"] == fps
    assert env_info(env_id).render_fps == fps
    for mode in MODES:
        mine, gyms = ours(env_id, 3, autoreset_mode=mode), theirs(env_id, 3, mode)
        assert mine.single_observation_space == gyms.single_observation_space
        assert mine.single_action_space == gyms.single_action_space
        assert mine.observation_space == gyms.observation_space
        assert mine.action_space == gyms.action_space
        assert mine.metadata["autoreset_mode"] is gyms.metadata["autoreset_mode"] is mode
        assert mine.metadata["render_fps"] == gyms.metadata["render_fps"] == fps
        assert mine.metadata["render_modes"] == ["rgb_array"]
        mine.close()
    single = gym.make(f"cartfuse/{env_id}")
    assert single.metadata["render_fps"] == fps
    assert set(single.metadata["render_modes"]) == set(gym_class(env_id).metadata["render_modes"])


# --- outputs of every mode --------------------------------------------------------------------


def structure(value: object) -> object:
    """What a value is made of: dtypes and shapes, recursively (not values)."""
    if isinstance(value, np.ndarray):
        if value.dtype == object:  # final_obs: None where an env did not end
            inner = {repr(structure(v)) for v in value if v is not None}
            return ("object", value.shape, sorted(inner))
        return (value.dtype.str, value.shape)
    if isinstance(value, dict):
        return {k: structure(v) for k, v in value.items()}
    return type(value).__name__


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_outputs_have_gymnasiums_types_and_shapes(env_id: str, mode: AutoresetMode) -> None:
    n, limit = 4, 5
    mine = ours(env_id, n, autoreset_mode=mode, max_episode_steps=limit)
    gyms = theirs(env_id, n, mode, max_episode_steps=limit)
    rng = np.random.default_rng(0)
    kinds: dict[str, set[str]] = {"ours": set(), "theirs": set()}
    for name, env in (("ours", mine), ("theirs", gyms)):
        obs, info = env.reset(seed=1)
        kinds[name].add(repr(("reset", structure(obs), structure(info))))
    for _ in range(3 * limit):
        actions = actions_for(mine.action_space, rng)
        for name, env in (("ours", mine), ("theirs", gyms)):
            obs, reward, terminated, truncated, info = env.step(actions)
            # gymnasium's SyncVectorEnv rewards are float64, cartfuse's float32 (gymnasium's
            # own CartPoleVectorEnv's too): only the shape and kind are compared.
            assert reward.shape == (n,) and reward.dtype.kind == "f"
            kinds[name].add(
                repr(("step", structure(obs), structure(terminated), structure(truncated)))
            )
            kinds[name].add(repr(("info", structure(info))))
            ended = terminated | truncated
            if mode == AutoresetMode.DISABLED and ended.any():
                obs, info = env.reset(options={"reset_mask": ended.copy()})
                kinds[name].add(repr(("masked reset", structure(obs), structure(info))))
    assert kinds["ours"] == kinds["theirs"]
    if mode == AutoresetMode.SAME_STEP:  # episodes ended, so the final_obs layout was seen
        assert any("final_obs" in k for k in kinds["ours"])
    mine.close()


# --- masked resets ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_masked_resets_match_sync_vector_env(env_id: str, mode: AutoresetMode) -> None:
    n, limit = 4, 4
    mine = ours(env_id, n, autoreset_mode=mode, max_episode_steps=limit)
    gyms = theirs(env_id, n, mode, max_episode_steps=limit)
    rng = np.random.default_rng(3)
    mine.reset(seed=0)
    gyms.reset(seed=0)
    pin(mine, gyms, quiet_states(env_id, n, rng))
    same_step = mode == AutoresetMode.SAME_STEP

    def step_both() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        actions = actions_for(mine.action_space, rng)
        return mine.step(actions), gyms.step(actions)

    # `limit` steps from the same states: every env truncates on the last one.
    for step in range(1, limit + 1):
        (obs, reward, term, trunc, info), (g_obs, g_reward, g_term, g_trunc, g_info) = step_both()
        np.testing.assert_array_equal(term, g_term)
        np.testing.assert_array_equal(trunc, g_trunc)
        np.testing.assert_array_equal(trunc, step == limit)
        np.testing.assert_allclose(reward, g_reward, rtol=1e-5, atol=1e-5)
        assert set(info) == set(g_info)
        if same_step and step == limit:  # the returned rows are already reset ones
            np.testing.assert_allclose(
                np.stack(info["final_obs"]), np.stack(g_info["final_obs"]), atol=1e-5
            )
        else:
            np.testing.assert_allclose(obs, g_obs, atol=1e-5)
    last_obs = obs

    # Bad masks: gymnasium's errors, in gymnasium's order, in every mode; the mask is popped.
    for bad in (
        [True, False, True, False],
        np.array([True, False]),
        np.array([1, 0, 1, 0]),
        np.zeros((n, 1), dtype=bool),
        np.zeros(n, dtype=bool),
    ):
        bad_mine: dict[str, Any] = {"reset_mask": bad}
        bad_gym: dict[str, Any] = {"reset_mask": bad}
        assert_same_error(
            lambda o=bad_mine: mine.reset(options=o),  # type: ignore[misc]
            lambda o=bad_gym: gyms.reset(options=o),  # type: ignore[misc]
        )
        assert bad_mine == bad_gym == {}
    # A seed list of the wrong length is refused first (before the mask), as gymnasium does.
    assert_same_error(
        lambda: mine.reset(seed=[1, 2], options={"reset_mask": "no"}),
        lambda: gyms.reset(seed=[1, 2], options={"reset_mask": "no"}),
    )

    # A masked reset to one exact state: masked rows are that state on both sides, the
    # others keep their current observation; infos are the same (empty); the mask is popped.
    # (Env 0 is left out: stepping it under DISABLED fails before any env is stepped.)
    constant, state = constant_options(env_id)
    mask = np.array([False, True, False, True])
    mine_options: dict[str, Any] = {"reset_mask": mask, **constant}
    gym_options: dict[str, Any] = {"reset_mask": mask, **constant}
    obs, info = mine.reset(seed=[5, 6, 7, 8], options=mine_options)
    g_obs, g_info = gyms.reset(seed=[5, 6, 7, 8], options=gym_options)
    assert mine_options == gym_options == constant
    assert info == g_info == {}
    np.testing.assert_allclose(obs[mask], g_obs[mask], atol=1e-6)
    np.testing.assert_allclose(mine.get_state()[mask], np.tile(state, (2, 1)), atol=1e-7)
    np.testing.assert_allclose(obs[~mask], last_obs[~mask], atol=1e-6, rtol=0)
    if not same_step:  # NEXT_STEP, DISABLED: the final observations of the unmasked envs
        np.testing.assert_allclose(obs[~mask], g_obs[~mask], atol=1e-5)

    if mode == AutoresetMode.DISABLED:
        # The unmasked envs ended and were not reset: both refuse to step.
        actions = actions_for(mine.action_space, rng)
        assert isinstance(raised(lambda: mine.step(actions)), AssertionError)
        assert isinstance(raised(lambda: gyms.step(actions)), AssertionError)
        obs, _ = mine.reset(options={"reset_mask": ~mask, **constant})
        g_obs, _ = gyms.reset(options={"reset_mask": ~mask, **constant})
        np.testing.assert_allclose(obs, g_obs, atol=1e-6)

    (obs, reward, term, trunc, info), (g_obs, g_reward, g_term, g_trunc, g_info) = step_both()
    np.testing.assert_array_equal(term, g_term)
    np.testing.assert_array_equal(trunc, g_trunc)
    # SAME_STEP: the unmasked envs were autoreset to random states (each side's own RNG),
    # so only the masked envs' rewards, stepped from the exact state, compare.
    stepped = mask if same_step else np.ones(n, dtype=bool)
    np.testing.assert_allclose(reward[stepped], g_reward[stepped], rtol=1e-5, atol=1e-5)
    assert set(info) == set(g_info)
    if mode == AutoresetMode.NEXT_STEP:
        # Unmasked envs still had their autoreset pending: this step resets them (reward 0,
        # no flags) on both sides; masked ones stepped from the exact state.
        np.testing.assert_array_equal(reward[~mask], 0.0)
        np.testing.assert_array_equal(g_reward[~mask], 0.0)
        np.testing.assert_allclose(obs[mask], g_obs[mask], atol=1e-5)
    elif same_step:
        np.testing.assert_allclose(obs[mask], g_obs[mask], atol=1e-5)
    else:
        np.testing.assert_allclose(obs, g_obs, atol=1e-5)
    mine.close()


# --- reset options ----------------------------------------------------------------------------


def bad_options(env_id: str) -> list[dict[str, object]]:
    names = list(env_info(env_id).reset_option_names)
    if names == ["low", "high"]:
        return [
            {"low": None},
            {"high": "x"},
            {"low": [1, 2]},
            {"low": None, "high": None},
            {"low": 1, "high": 0},
            {"low": 0.2, "high": 0.1},
        ]
    return [{names[0]: None}, {names[-1]: "x"}, {names[0]: [1.0, 2.0]}]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_bad_reset_options_raise_gymnasiums_errors(env_id: str) -> None:
    mine, gyms = ours(env_id, 2), theirs(env_id, 2)
    single, gym_single = gym.make(f"cartfuse/{env_id}"), gym.make(env_id)
    for options in bad_options(env_id):
        assert_same_error(
            lambda o=options: mine.reset(options=dict(o)),  # type: ignore[misc]
            lambda o=options: gyms.reset(options=dict(o)),  # type: ignore[misc]
        )
        assert_same_error(
            lambda o=options: single.reset(options=dict(o)),  # type: ignore[misc]
            lambda o=options: gym_single.reset(options=dict(o)),  # type: ignore[misc]
        )
    # Options the environment does not read are ignored, on both sides.
    for env in (mine, gyms, single, gym_single):
        env.reset(seed=0, options={"foo": 1})
    # A symmetric option below 0: numpy's draw raises in gymnasium's env, cartfuse's check.
    names = list(env_info(env_id).reset_option_names)
    if names != ["low", "high"]:
        for env in (mine, gyms, single, gym_single):
            with pytest.raises(ValueError, match="high - low < 0"):
                env.reset(options={names[0]: -0.5})
    # gymnasium's parsing lets NaN through (numpy's draw then fails or gives a NaN state);
    # cartfuse's states are finite, so it refuses it, naming the option.
    name = env_info(env_id).reset_option_names[0]
    for env in (mine, single):
        with pytest.raises(ValueError, match=rf"options\['{name}'\]: expected a finite number"):
            env.reset(options={name: float("nan")})
    mine.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_bounds_are_respected(env_id: str) -> None:
    info = env_info(env_id)
    names = list(info.reset_option_names)
    drawn = len(info.reset_bounds)
    constant, state = constant_options(env_id)
    # One exact state on every side: gym.make and the vector env, ours and gymnasium's.
    single, gym_single = gym.make(f"cartfuse/{env_id}"), gym.make(env_id)
    mine, gyms = ours(env_id, 3), theirs(env_id, 3)
    single.reset(seed=0, options=dict(constant))
    gym_single.reset(seed=0, options=dict(constant))
    np.testing.assert_allclose(single.unwrapped.state, state, atol=1e-7)  # type: ignore[attr-defined]
    np.testing.assert_allclose(gym_single.unwrapped.state, state, atol=1e-7)  # type: ignore[attr-defined]
    obs, _ = mine.reset(seed=0, options=dict(constant))
    g_obs, _ = gyms.reset(seed=0, options=dict(constant))
    np.testing.assert_allclose(obs, g_obs, atol=1e-6)
    np.testing.assert_allclose(mine.get_state(), np.tile(state, (3, 1)), atol=1e-7)

    # A narrower range: every draw inside it (and the undrawn components 0).
    n = 256
    mine = ours(env_id, n)
    if names == ["low", "high"]:
        low, high = info.reset_bounds[0]
        low, high = low + (high - low) / 4, high - (high - low) / 4
        options: dict[str, float] = {"low": low, "high": high}
        bounds = [(low, high)] * drawn
    else:
        halves = [(h - lo) / 4 for lo, h in info.reset_bounds]
        options = dict(zip(names, halves, strict=True))
        bounds = [(-h, h) for h in halves]
    mine.reset(seed=1, options=dict(options))
    states = mine.get_state()
    eps = 1e-6  # cartfuse draws in float32
    for k, (low, high) in enumerate(bounds):
        assert (states[:, k] >= low - eps).all() and (states[:, k] <= high + eps).all()
        assert states[:, k].std() > (high - low) / 10  # drawn, not constant
    np.testing.assert_array_equal(states[:, drawn:], 0.0)
    for env in gyms.envs:  # gymnasium's own draws fall in the same ranges
        env.reset(options=dict(options))
        drawn_state = np.asarray(env.unwrapped.state)  # type: ignore[attr-defined]
        for k, (low, high) in enumerate(bounds):
            assert low <= drawn_state[k] <= high

    # Autoresets draw from the defaults (SyncVectorEnv resets its envs without options).
    mine = ours(env_id, 64, max_episode_steps=1)
    mine.reset(seed=2, options=dict(constant))
    rng = np.random.default_rng(0)
    mine.step(actions_for(mine.action_space, rng))
    mine.step(actions_for(mine.action_space, rng))  # NEXT_STEP: the autoreset step
    states = mine.get_state()
    for k, (low, high) in enumerate(info.reset_bounds):
        assert (states[:, k] >= low - eps).all() and (states[:, k] <= high + eps).all()
    assert states[:, :drawn].std() > 0
