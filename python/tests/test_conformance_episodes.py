"""cartfuse against gymnasium itself, episode by episode, for every environment (on
``gym.make_vec("cartfuse/<id>", vectorization_mode="vector_entry_point")``, gymnasium's
``SyncVectorEnv`` and ``gym.make`` of both): constructor arguments, time limits, frames, and
trajectories from the same states and actions; what only cartfuse promises (each env's
episodes depend on its own seed, whatever the batch) is checked on cartfuse alone; and the
device choice. Spaces, outputs, masked resets and reset options: ``test_conformance.py``."""

from __future__ import annotations

import importlib.util
import inspect
import logging
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from cartfuse import CartfuseVectorEnv, env_class, env_info, render, vector_env_class

from gym_pairs import (
    ENV_IDS,
    MODES,
    actions_for,
    gym_class,
    ours,
    pin,
    quiet_states,
    raised,
    theirs,
)

HAS_PYGAME = importlib.util.find_spec("pygame") is not None
# Where a mountain car reaches its goal from (position, velocity) in one push.
GOALS = {"MountainCar-v0": (0.5, 2), "MountainCarContinuous-v0": (0.45, [1.0])}


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
