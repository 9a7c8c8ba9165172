"""cartfuse against gymnasium itself, for every environment: the same calls on
``gym.make_vec("cartfuse/<id>", vectorization_mode="vector_entry_point")`` and on gymnasium's
``SyncVectorEnv`` of its own envs (and on ``gym.make`` of both), compared on everything that
is deterministic: spaces and metadata, the types and shapes of every output and info key in
each autoreset mode, masked resets (which rows change, infos, errors), reset options (errors,
bounds), constructor arguments, time limits, frames, and trajectories from the same states
and actions. Random draws differ (each side has its own generator), so states are pinned
(``set_state`` / ``env.unwrapped.state``) where values are compared; what only cartfuse
promises (each env's episodes depend on its own seed, whatever the batch) is checked on
cartfuse alone."""

from __future__ import annotations

import importlib.util
import inspect
import logging
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import cartfuse
from cartfuse import CartfuseVectorEnv, env_class, env_info, render, vector_env_class

ENV_IDS = [i for i in cartfuse.ENV_IDS if i in gym.registry]
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]
HAS_PYGAME = importlib.util.find_spec("pygame") is not None
# Where a mountain car reaches its goal from (position, velocity) in one push.
GOALS = {"MountainCar-v0": (0.5, 2), "MountainCarContinuous-v0": (0.45, [1.0])}


def test_every_cartfuse_environment_is_one_gymnasium_has() -> None:
    assert list(cartfuse.ENV_IDS) == ENV_IDS
    assert len(ENV_IDS) >= 5


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


# --- constructor arguments --------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_constructor_arguments_are_gymnasiums(env_id: str) -> None:
    info = env_info(env_id)
    gym_signature = inspect.signature(gym_class(env_id))
    theirs_names = set(gym_signature.parameters) - {"render_mode"}
    assert {name for name, _, _ in info.kwargs} == theirs_names
    for cls in (env_class(env_id), vector_env_class(env_id)):
        parameters = inspect.signature(cls).parameters
        for name, kind, default in info.kwargs:
            assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
            assert parameters[name].default == (bool(default) if kind == "bool" else default)
            assert parameters[name].default == gym_signature.parameters[name].default
        assert "num_threads" in parameters
    for name, kind, default in info.kwargs:
        value = (not default) if kind == "bool" else default + 0.5
        given: dict[str, Any] = {name: value}
        single = gym.make(f"cartfuse/{env_id}", **given)
        assert single.unwrapped.env_kwargs[name] == value  # type: ignore[attr-defined]
        gym.make(env_id, **given)  # gymnasium's takes it too
        vector = ours(env_id, 2, **given)
        assert vector.env_kwargs[name] == value
        vector.close()
    # An argument the environment does not take: a TypeError on both sides.
    mine_error = raised(lambda: gym.make(f"cartfuse/{env_id}", bogus=1))
    gym_error = raised(lambda: gym.make(env_id, bogus=1))
    assert type(mine_error) is type(gym_error) is TypeError
    assert "unexpected keyword argument 'bogus'" in str(mine_error)
    assert "unexpected keyword argument 'bogus'" in str(gym_error)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ours(env_id, 2, bogus=1)


@pytest.mark.skipif("CartPole-v1" not in ENV_IDS, reason="no CartPole-v1")
@pytest.mark.parametrize("sutton", [False, True])
def test_cartpole_rewards_with_and_without_sutton_barto_reward(sutton: bool) -> None:
    kwargs: dict[str, Any] = {"sutton_barto_reward": sutton}
    mine = gym.make("cartfuse/CartPole-v1", **kwargs).unwrapped
    gyms = gym.make("CartPole-v1", **kwargs).unwrapped
    rewards: dict[str, list[float]] = {"ours": [], "theirs": []}
    caught: dict[str, list[str]] = {}
    for name, env in (("ours", mine), ("theirs", gyms)):
        env.reset(seed=0)
        env.state = np.array([0.0, 0.0, 0.0, 0.0])  # type: ignore[attr-defined]
        _, reward, terminated, _, _ = env.step(1)  # upright: not terminated
        assert not terminated
        rewards[name].append(float(reward))
        # theta 0.19 turning at 1 rad/s passes 12 degrees on the next step.
        env.state = np.array([0.0, 0.0, 0.19, 1.0])  # type: ignore[attr-defined]
        with warnings.catch_warnings(record=True) as log:
            warnings.simplefilter("always")
            for _ in range(4):  # terminated, then three steps without a reset
                _, reward, terminated, _, _ = env.step(1)
                assert terminated
                rewards[name].append(float(reward))
        caught[name] = [str(w.message) for w in log if "already returned terminated" in str(w)]
        env.reset(seed=1)  # a reset starts counting again
        env.state = np.array([0.0, 0.0, 0.19, 1.0])  # type: ignore[attr-defined]
        rewards[name].append(float(env.step(1)[1]))
    assert rewards["ours"] == rewards["theirs"]
    step, end, beyond = (0.0, -1.0, -1.0) if sutton else (1.0, 1.0, 0.0)
    assert rewards["ours"] == [step, end, beyond, beyond, beyond, end]
    assert len(caught["ours"]) == len(caught["theirs"]) == 1  # warned once
    assert caught["ours"] == caught["theirs"]

    # The vector env: 0 per step and -1 on termination (sutton), as gymnasium's env gives.
    n = 4
    vector, gyms_vector = ours("CartPole-v1", n, **kwargs), theirs("CartPole-v1", n, **kwargs)
    vector.reset(seed=0)
    gyms_vector.reset(seed=0)
    # Upright; three about to cross 12 degrees or 2.4 (terminated next step, then reset).
    states = np.array([[0, 0, 0, 0], [0, 0, 0.19, 1.0], [0, 0, -0.19, -1.0], [2.39, 1, 0, 0]])
    pin(vector, gyms_vector, states)
    for step in range(2):
        actions = np.array([0, 1, 0, 1])
        _, rewards_now, ended, _, _ = vector.step(actions)
        _, g_rewards, g_ended, _, _ = gyms_vector.step(actions)
        np.testing.assert_array_equal(ended, g_ended)
        np.testing.assert_array_equal(ended, [False, True, True, True] if step == 0 else False)
        np.testing.assert_array_equal(rewards_now, g_rewards)
    vector.close()


@pytest.mark.skipif("Pendulum-v1" not in ENV_IDS, reason="no Pendulum-v1")
def test_pendulum_without_gravity_stays_where_it_is() -> None:
    for g, moves in ((0.0, False), (10.0, True)):
        mine = gym.make("cartfuse/Pendulum-v1", g=g).unwrapped
        gyms = gym.make("Pendulum-v1", g=g).unwrapped
        for env in (mine, gyms):
            env.reset(seed=0)
            env.state = np.array([1.0, 0.0])  # type: ignore[attr-defined]
        for _ in range(10):
            obs, reward, *_ = mine.step(np.array([0.0], dtype=np.float32))
            g_obs, g_reward, *_ = gyms.step(np.array([0.0], dtype=np.float32))
            np.testing.assert_allclose(obs, g_obs, atol=1e-5)
            assert reward == pytest.approx(g_reward, rel=1e-5, abs=1e-6)
        theta = float(mine.state[0])  # type: ignore[attr-defined]
        assert (abs(theta - 1.0) > 0.01) == moves, (g, theta)


@pytest.mark.parametrize("env_id", [i for i in ENV_IDS if i in GOALS])
def test_goal_velocity_decides_termination_at_the_goal(env_id: str) -> None:
    goal, push = GOALS[env_id]
    action = np.array(push, dtype=np.float32) if isinstance(push, list) else push
    for goal_velocity, ends in ((0.0, True), (0.05, False)):
        outcomes = []
        for make_id in (f"cartfuse/{env_id}", env_id):
            env = gym.make(make_id, goal_velocity=goal_velocity).unwrapped
            env.reset(seed=0)
            env.state = np.array([goal - 0.01, 0.02])  # type: ignore[attr-defined]
            _, reward, terminated, _, _ = env.step(action)
            outcomes.append((terminated, round(float(reward), 4)))
        assert outcomes[0] == outcomes[1]
        assert outcomes[0][0] == ends


# --- time limits ------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_make_with_max_episode_steps_truncates_there_on_both(env_id: str) -> None:
    limit = 7
    rng = np.random.default_rng(0)
    start = quiet_states(env_id, 1, rng)[0]
    lengths = []
    for make_id in (f"cartfuse/{env_id}", env_id):
        env = gym.make(make_id, max_episode_steps=limit)
        assert env.spec is not None and env.spec.max_episode_steps == limit
        env.reset(seed=0)
        env.unwrapped.state = start.copy()  # type: ignore[attr-defined]
        steps, truncated, terminated = 0, False, False
        while not (truncated or terminated):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            steps += 1
        assert truncated and not terminated
        lengths.append(steps)
    assert lengths == [limit, limit]


@pytest.mark.skipif("Pendulum-v1" not in ENV_IDS, reason="no Pendulum-v1")
def test_time_limits_beyond_the_registered_one_and_none() -> None:
    registered = gym.spec("Pendulum-v1").max_episode_steps
    assert registered is not None
    action = np.array([0.5], dtype=np.float32)
    for make_id in ("cartfuse/Pendulum-v1", "Pendulum-v1"):
        # Longer than registered: the env itself does not cut it short.
        env = gym.make(make_id, max_episode_steps=registered + 50)
        env.reset(seed=0)
        truncations = [env.step(action)[3] for _ in range(registered + 50)]
        assert truncations == [False] * (registered + 49) + [True], make_id
        # -1: no TimeLimit, and no limit of the env's own.
        env = gym.make(make_id, max_episode_steps=-1)
        env.reset(seed=0)
        assert not any(env.step(action)[3] for _ in range(2 * registered)), make_id
    # make_vec's sync mode gives each sub-env the same TimeLimit.
    envs = gym.make_vec(
        "cartfuse/Pendulum-v1", num_envs=2, vectorization_mode="sync", max_episode_steps=210
    )
    envs.reset(seed=0)
    truncations = [bool(envs.step(np.tile(action, (2, 1)))[3].all()) for _ in range(210)]
    assert truncations == [False] * 209 + [True]
    # The vector entry point: the registered limit unless given.
    assert ours("Pendulum-v1", 2).max_episode_steps == registered
    assert ours("Pendulum-v1", 2, max_episode_steps=300).max_episode_steps == 300


# --- rendering --------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_frames(env_id: str) -> None:
    n = 3
    mine = ours(env_id, n, render_mode="rgb_array")
    assert mine.render_mode == "rgb_array"
    with pytest.raises(ValueError, match="reset"):
        mine.render()
    mine.reset(seed=0)
    frames = mine.render()
    gym_frame_shape = (400, 600, 3) if env_id in GOALS or env_id == "CartPole-v1" else (500, 500, 3)
    if HAS_PYGAME:
        gym_single = gym.make(env_id, render_mode="rgb_array")
        gym_single.reset(seed=0)
        gym_frame = gym_single.render()
        assert isinstance(gym_frame, np.ndarray)
        gym_frame_shape = gym_frame.shape
        gym_frames = theirs(env_id, n, render_mode="rgb_array")
        gym_frames.reset(seed=0)
        assert len(gym_frames.render()) == n
    assert isinstance(frames, list) and len(frames) == n
    for picture in frames:
        assert isinstance(picture, np.ndarray)
        assert picture.dtype == np.uint8 and picture.shape == gym_frame_shape
    # Each frame is the env's own state and last action (Pendulum draws the torque).
    rng = np.random.default_rng(0)
    actions = actions_for(mine.action_space, rng)
    mine.step(actions)
    frames = mine.render()
    assert frames is not None
    for i, state in enumerate(mine.get_state()):
        np.testing.assert_array_equal(frames[i], render.frame(env_id, state, actions[i]))
    mine.close()


def test_vector_render_without_a_render_mode_warns_and_returns_none() -> None:
    env_id = ENV_IDS[0]
    mine = ours(env_id, 2)
    mine.reset(seed=0)
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        assert mine.render() is None
    assert any("without specifying any render mode" in str(w.message) for w in log)
    assert any(f'gym.make_vec("cartfuse/{env_id}"' in str(w.message) for w in log)
    with pytest.raises(ValueError, match="render_mode"):
        ours(env_id, 2, render_mode="human")


@pytest.mark.skipif(
    not HAS_PYGAME or importlib.util.find_spec("cv2") is None,
    reason="gymnasium's vector HumanRendering needs pygame and opencv",
)
def test_gymnasiums_vector_human_rendering_wraps_the_vector_env() -> None:
    from gymnasium.wrappers.vector import HumanRendering

    env_id = ENV_IDS[0]
    envs = HumanRendering(ours(env_id, 2, render_mode="rgb_array"))
    envs.reset(seed=0)
    for _ in range(2):
        envs.step(envs.action_space.sample())
    envs.close()


# --- seeds ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_each_env_follows_its_own_seed_whatever_the_batch(env_id: str, mode: AutoresetMode) -> None:
    """Env i of a 4-env batch seeded s (seed s + i) plays the same episodes, autoresets
    included, as the env holding seed s + i in an 8-env batch of other seeds, and as a
    one-env batch seeded s + i, given the same actions (cartfuse only: gymnasium's random
    generator is another)."""
    limit, steps, base = 5, 23, 100
    place = [6, 1, 3, 4]  # env i of the small batch is env place[i] of the large one
    large_seeds: list[int | None] = [900 + j for j in range(8)]
    for i, j in enumerate(place):
        large_seeds[j] = base + i
    kwargs = {"autoreset_mode": mode, "max_episode_steps": limit, "device": "cpu"}
    small, large = ours(env_id, 4, **kwargs), ours(env_id, 8, **kwargs)
    single = ours(env_id, 1, **kwargs)
    rng = np.random.default_rng(4)

    def run(
        env: CartfuseVectorEnv, seed: int | list[int | None], actions: list[np.ndarray]
    ) -> list[Any]:
        out: list[Any] = [env.reset(seed=seed)[0]]
        for a in actions:
            obs, reward, term, trunc, info = env.step(a)
            out.append((obs, reward, term, trunc, info.get("final_obs")))
            ended = term | trunc
            if mode == AutoresetMode.DISABLED and ended.any():
                out.append(env.reset(options={"reset_mask": ended.copy()})[0])
        return out

    small_actions = [actions_for(small.action_space, rng) for _ in range(steps)]
    large_actions = []
    for a in small_actions:
        b = actions_for(large.action_space, rng)
        b[place] = a
        large_actions.append(b)
    got_small = run(small, base, small_actions)
    got_large = run(large, large_seeds, large_actions)
    got_single = {i: run(single, base + i, [a[i : i + 1] for a in small_actions]) for i in (0, 2)}

    def rows(record: list[Any], index: int) -> list[Any]:
        """Env `index`'s values in each record, when the record is about it."""
        picked: list[Any] = []
        for item in record:
            if isinstance(item, np.ndarray):
                picked.append(("obs", item[index]))
            else:
                obs, reward, term, trunc, final = item
                final_row = None if final is None else final[index]
                picked.append(
                    ("step", obs[index], reward[index], term[index], trunc[index], final_row)
                )
        return picked

    def same(a: list[Any], b: list[Any]) -> None:
        # DISABLED resets only the envs that ended, so records line up per env only in the
        # other modes; compare the step records there and every record elsewhere.
        steps_a = [r for r in a if r[0] == "step"]
        steps_b = [r for r in b if r[0] == "step"]
        assert len(steps_a) == len(steps_b)
        for x, y in zip(steps_a, steps_b, strict=True):
            np.testing.assert_allclose(x[1], y[1], atol=1e-6, rtol=0)
            assert x[2] == pytest.approx(y[2], abs=1e-6)
            assert (x[3], x[4]) == (y[3], y[4])
            assert (x[5] is None) == (y[5] is None)
            if x[5] is not None:
                np.testing.assert_allclose(x[5], y[5], atol=1e-6, rtol=0)
        np.testing.assert_array_equal(a[0][1], b[0][1])  # the first observation, exactly

    episodes = 0
    for i, j in enumerate(place):
        mine = rows(got_small, i)
        same(mine, rows(got_large, j))
        if i in got_single:
            same(mine, rows(got_single[i], 0))
        episodes += sum(bool(r[3] or r[4]) for r in mine if r[0] == "step")
    assert episodes >= 4 * (steps // limit)  # several autoresets per env were compared


# --- trajectories -----------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_trajectories_from_the_same_states_and_actions(env_id: str) -> None:
    """Every step starts gymnasium's envs from the states cartfuse holds: observations
    within 1e-5, rewards within 1e-5 relative, the same flags, and NEXT_STEP reset steps
    on the same envs."""
    n, steps, limit = 8, 30, 12
    mine, gyms = (
        ours(env_id, n, max_episode_steps=limit),
        theirs(env_id, n, max_episode_steps=limit),
    )
    mine.reset(seed=1)
    gyms.reset(seed=1)
    rng = np.random.default_rng(7)
    compared = 0
    reset_step = np.zeros(n, dtype=bool)  # NEXT_STEP: the envs this step resets
    for _ in range(steps):
        for env, state in zip(gyms.envs, mine.get_state(), strict=True):
            env.unwrapped.state = state.copy()  # type: ignore[attr-defined]
        actions = actions_for(mine.action_space, rng)
        obs, reward, term, trunc, _ = mine.step(actions)
        g_obs, g_reward, g_term, g_trunc, _ = gyms.step(actions)
        np.testing.assert_array_equal(term, g_term)
        np.testing.assert_array_equal(trunc, g_trunc)
        np.testing.assert_allclose(reward, g_reward, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(reward[reset_step], 0.0)
        # Reset steps draw from each side's own generator; every other row must agree.
        np.testing.assert_allclose(obs[~reset_step], g_obs[~reset_step], atol=1e-5, rtol=0)
        compared += int((~reset_step).sum())
        reset_step = term | trunc
    assert compared > n * steps // 2
    mine.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_single_env_trajectories_from_the_same_states(env_id: str) -> None:
    mine, gyms = gym.make(f"cartfuse/{env_id}"), gym.make(env_id)
    mine.reset(seed=0)
    gyms.reset(seed=0)
    rng = np.random.default_rng(2)
    mine.action_space.seed(3)
    for _ in range(20):
        state = np.asarray(mine.unwrapped.state)  # type: ignore[attr-defined]
        gyms.unwrapped.state = state.copy()  # type: ignore[attr-defined]
        action = mine.action_space.sample()
        obs, reward, terminated, truncated, info = mine.step(action)
        g_obs, g_reward, g_terminated, g_truncated, g_info = gyms.step(action)
        assert obs.dtype == g_obs.dtype and obs.shape == g_obs.shape
        assert type(reward) is float and isinstance(g_reward, float)
        np.testing.assert_allclose(obs, g_obs, atol=1e-5)
        assert reward == pytest.approx(g_reward, rel=1e-5, abs=1e-6)
        assert (terminated, truncated, info) == (g_terminated, g_truncated, g_info)
        if terminated:
            start = quiet_states(env_id, 1, rng)[0]
            mine.reset()
            gyms.reset()
            mine.unwrapped.state = start  # type: ignore[attr-defined]


# --- device choice ----------------------------------------------------------------------------


def test_device_none_says_why(caplog: pytest.LogCaptureFixture) -> None:
    env_id = ENV_IDS[0]
    with caplog.at_level(logging.INFO, logger="cartfuse"):
        automatic = CartfuseVectorEnv(env_id, 4)
    reason = automatic.device_reason
    assert isinstance(reason, str) and reason
    assert reason in caplog.text
    named = CartfuseVectorEnv(env_id, 4, device="cpu")
    assert named.device_reason is None
    with pytest.raises(AttributeError):
        named.device_reason = "x"  # type: ignore[misc]
