"""Every environment the native module lists, against gymnasium's own: spaces, registration,
one-step parity from injected states, seeding and autoreset semantics."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import cartfuse
from cartfuse import CartfuseEnv, CartfuseVectorEnv, env_info, vector_env_class

ENV_IDS = list(cartfuse.ENV_IDS)
DISCRETE_IDS = [i for i in ENV_IDS if env_info(i).action_kind == "discrete"]
CONTINUOUS_IDS = [i for i in ENV_IDS if env_info(i).action_kind == "box"]
# gymnasium's registrations (envs/__init__.py).
REWARD_THRESHOLDS = {
    "CartPole-v1": 475.0,
    "MountainCar-v0": -110.0,
    "Acrobot-v1": -100.0,
    "MountainCarContinuous-v0": 90.0,
    "Pendulum-v1": None,
}


def test_the_native_module_lists_at_least_cartpole_and_mountain_car() -> None:
    assert {"CartPole-v1", "MountainCar-v0"} <= set(ENV_IDS)
    assert set(ENV_IDS) <= set(REWARD_THRESHOLDS)


def random_actions(
    space: spaces.Space[object], rng: np.random.Generator, widen: float = 1.5
) -> np.ndarray:
    """Random batched actions; Box actions reach `widen` times past the bounds (the env clips
    them, as gymnasium's do)."""
    if isinstance(space, spaces.MultiDiscrete):
        return rng.integers(0, space.nvec)
    assert isinstance(space, spaces.Box)
    return rng.uniform(space.low * widen, space.high * widen).astype(np.float32)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spaces_equal_gymnasiums(env_id: str) -> None:
    n = 5
    ours = gym.make_vec(f"cartfuse/{env_id}", num_envs=n, vectorization_mode="vector_entry_point")
    theirs = gym.make(env_id)
    theirs.reset(seed=0)
    assert isinstance(ours, CartfuseVectorEnv)
    pairs = [
        (ours.single_observation_space, theirs.observation_space),
        (ours.single_action_space, theirs.action_space),
        (ours.observation_space, batch_space(theirs.observation_space, n)),
        (ours.action_space, batch_space(theirs.action_space, n)),
    ]
    for mine, want in pairs:
        assert mine == want
        assert type(mine) is type(want)
        if isinstance(want, spaces.Box):
            # Box.__eq__ compares bounds with allclose; they are the same float32 values.
            assert mine.dtype == want.dtype == np.float32
            np.testing.assert_array_equal(mine.low, want.low)
            np.testing.assert_array_equal(mine.high, want.high)
    info = env_info(env_id)
    assert info.obs_dim == theirs.observation_space.shape[0]
    assert len(info.state_names) == len(np.asarray(theirs.unwrapped.state))  # type: ignore[attr-defined]
    ours.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_registration_matches_gymnasiums(env_id: str) -> None:
    ours, theirs = gym.spec(f"cartfuse/{env_id}"), gym.spec(env_id)
    assert ours.max_episode_steps == theirs.max_episode_steps
    assert ours.reward_threshold == theirs.reward_threshold == REWARD_THRESHOLDS[env_id]
    named = vector_env_class(env_id)
    assert named.__name__ == cartfuse._named.class_stem(env_id) + "VectorEnv"
    assert getattr(cartfuse.vector, named.__name__) is named
    assert getattr(cartfuse, named.__name__) is named
    envs = gym.make_vec(
        f"cartfuse/{env_id}",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    assert type(envs) is named
    assert envs.env_id == env_id
    assert envs.max_episode_steps == theirs.max_episode_steps
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert envs.plan == ("hand-written" if env_id == "CartPole-v1" else "fused")
    assert repr(envs).startswith(f"{named.__name__}(num_envs=3")


def checker_warnings(env: gym.Env[object, object]) -> set[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    return {str(w.message) for w in caught}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_make_gives_a_single_env_that_passes_gymnasiums_checker(env_id: str) -> None:
    env = gym.make(f"cartfuse/{env_id}")
    assert isinstance(env.unwrapped, CartfuseEnv)
    assert env.unwrapped.observation_space == gym.make(env_id).observation_space
    # No warning gymnasium's own env does not draw too (CartPole's inf velocity bounds,
    # Pendulum's unnormalised action box).
    assert checker_warnings(env.unwrapped) <= checker_warnings(gym.make(env_id).unwrapped)
    env.reset(seed=0)
    limit = gym.spec(env_id).max_episode_steps
    assert limit is not None
    steps, terminated, truncated = 0, False, False
    while not (terminated or truncated):
        _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert isinstance(reward, float)
        steps += 1
    assert terminated or steps == limit
    assert steps <= limit
    state = np.asarray(env.unwrapped.state)  # type: ignore[attr-defined]
    env.unwrapped.state = state * 0.5  # type: ignore[attr-defined]
    np.testing.assert_allclose(env.unwrapped.state, state * 0.5, rtol=1e-6)  # type: ignore[attr-defined]
    env.close()


def gymnasium_observation(env: gym.Env[np.ndarray, object], state: np.ndarray) -> np.ndarray:
    """What gymnasium's own `env` observes in `state` (its private `_get_ob`/`_get_obs`
    where the observation is not the state itself)."""
    env.state = state.copy()  # type: ignore[attr-defined]
    observe = getattr(env, "_get_ob", None) or getattr(env, "_get_obs", None)
    return np.asarray(observe() if observe else state, dtype=np.float32)


@pytest.mark.parametrize("device", ["cpu", "wgpu"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_one_step_parity_with_gymnasium(env_id: str, device: str) -> None:
    """Each step starts gymnasium's own env from the state cartfuse holds (gymnax's and
    envpool's check): obs within 1e-5, rewards within 1e-5 relative, identical flags.
    Steps on which cartfuse resets an env (NEXT_STEP) are checked for their reset
    semantics, and reset observations are gymnasium's observation of the reset state."""
    n, steps, limit = 32, 30, 12
    ours = CartfuseVectorEnv(env_id, n, device=device, max_episode_steps=limit)
    assert ours.device == device
    theirs = gym.make(env_id).unwrapped
    rng = np.random.default_rng(7)
    theirs.reset()
    obs, _ = ours.reset(seed=1)
    for i, state in enumerate(ours.get_state()):
        np.testing.assert_allclose(obs[i], gymnasium_observation(theirs, state), atol=1e-6)
    prev_done = np.zeros(n, dtype=bool)
    elapsed = np.zeros(n, dtype=int)
    compared = 0
    for _ in range(steps):
        actions = random_actions(ours.action_space, rng)
        before = ours.get_state()
        obs, reward, term, trunc, info = ours.step(actions)
        assert info == {}
        assert obs.dtype == np.float32 and obs.shape == (n, info_dim(env_id))
        assert reward.dtype == np.float32 and term.dtype == np.bool_ and trunc.dtype == np.bool_
        elapsed = np.where(prev_done, 0, elapsed + 1)
        for i in range(n):
            if prev_done[i]:
                assert reward[i] == 0.0 and not term[i] and not trunc[i]
                reset_obs = gymnasium_observation(theirs, ours.get_state()[i])
                np.testing.assert_allclose(obs[i], reset_obs, atol=1e-6)
                continue
            theirs.reset()  # clears CartPole's steps_beyond_terminated
            theirs.state = before[i].copy()  # type: ignore[attr-defined]
            g_obs, g_reward, g_term, _, _ = theirs.step(actions[i])
            np.testing.assert_allclose(obs[i], g_obs, atol=1e-5, rtol=0, err_msg=f"env {i}")
            np.testing.assert_allclose(reward[i], g_reward, rtol=1e-5, atol=1e-6)
            assert term[i] == g_term, f"env {i} from {before[i]}"
            assert trunc[i] == (elapsed[i] >= limit)
            compared += 1
        prev_done = term | trunc
    assert compared > n * steps // 2
    assert n * steps - compared >= n  # reset steps


def info_dim(env_id: str) -> int:
    return env_info(env_id).obs_dim


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_plans_agree(env_id: str) -> None:
    def run(plan: str) -> list[np.ndarray]:
        env = CartfuseVectorEnv(env_id, 16, plan=plan)
        obs, _ = env.reset(seed=77)
        rng = np.random.default_rng(0)
        out = [obs]
        for _ in range(40):
            out += list(env.step(random_actions(env.action_space, rng))[:4])
        return out

    fused = run("fused")
    for plan in ["eager", "vertical"]:
        for x, y in zip(fused, run(plan), strict=True):
            np.testing.assert_allclose(x, y, atol=1e-5)


def rollout(env: CartfuseVectorEnv, seed: int | list[int] | None, steps: int) -> list[np.ndarray]:
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = [obs]
    for _ in range(steps):
        out += list(env.step(random_actions(env.action_space, rng))[:4])
    return out


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_seeding(env_id: str) -> None:
    n = 8
    env = CartfuseVectorEnv(env_id, n, max_episode_steps=20)
    a = rollout(env, 42, 50)
    b = rollout(CartfuseVectorEnv(env_id, n, max_episode_steps=20), 42, 50)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    # An int seed s is the list [s, s + 1, ...].
    listed = rollout(env, [42 + i for i in range(n)], 50)
    for x, y in zip(a, listed, strict=True):
        np.testing.assert_array_equal(x, y)
    # Another seed, other first observations; env i's first observation is its own seed's.
    other, _ = env.reset(seed=43)
    assert not np.array_equal(a[0], other)
    np.testing.assert_array_equal(other[:-1], a[0][1:])
    single, _ = CartfuseVectorEnv(env_id, 1).reset(seed=45)
    np.testing.assert_array_equal(single[0], a[0][3])
    # None continues the streams.
    again, _ = env.reset()
    assert not np.array_equal(again, other)
    assert env.observation_space.contains(again)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_next_step_autoreset(env_id: str) -> None:
    n, limit = 16, 7
    env = CartfuseVectorEnv(env_id, n, max_episode_steps=limit)
    env.reset(seed=4)
    rng = np.random.default_rng(3)
    prev_done = np.zeros(n, dtype=bool)
    elapsed = np.zeros(n, dtype=int)
    resets = 0
    for _ in range(3 * limit):
        obs, reward, term, trunc, info = env.step(random_actions(env.action_space, rng))
        assert info == {}
        # The step after a done resets the env: reward 0, no flags, a fresh episode.
        np.testing.assert_array_equal(reward[prev_done], 0.0)
        assert not (term[prev_done] | trunc[prev_done]).any()
        elapsed = np.where(prev_done, 0, elapsed + 1)
        np.testing.assert_array_equal(trunc, (elapsed >= limit) & ~prev_done)
        resets += int(prev_done.sum())
        prev_done = term | trunc
    assert resets >= n


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_step_autoreset(env_id: str) -> None:
    n, limit = 16, 5
    env = CartfuseVectorEnv(env_id, n, autoreset_mode="same_step", max_episode_steps=limit)
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    seen = 0
    elapsed = np.zeros(n, dtype=int)
    for _ in range(3 * limit):
        obs, reward, term, trunc, info = env.step(random_actions(env.action_space, rng))
        elapsed += 1
        np.testing.assert_array_equal(trunc, elapsed >= limit)
        done = term | trunc
        elapsed[done] = 0  # reset in the same step
        if not done.any():
            assert info == {}
            continue
        seen += int(done.sum())
        np.testing.assert_array_equal(info["_final_obs"], done)
        for i in np.flatnonzero(done):
            final = info["final_obs"][i]
            assert final.dtype == np.float32 and final.shape == (info_dim(env_id),)
            assert not np.array_equal(final, obs[i])  # obs is already the reset one
        assert all(info["final_obs"][i] is None for i in np.flatnonzero(~done))
    assert seen >= 3 * n


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_disabled_autoreset_with_reset_mask(env_id: str) -> None:
    n, limit = 6, 4
    env = CartfuseVectorEnv(
        env_id, n, autoreset_mode=AutoresetMode.DISABLED, max_episode_steps=limit
    )
    env.reset(seed=[10 + i for i in range(n)])
    rng = np.random.default_rng(5)
    elapsed = np.zeros(n, dtype=int)
    for _ in range(1, limit):
        _, _, term, trunc, _ = env.step(random_actions(env.action_space, rng))
        elapsed += 1
        assert not trunc.any()
        if term.any():  # an episode ended early: start it again
            env.reset(options={"reset_mask": term})
            elapsed[term] = 0
    before = env.get_state()
    mask = np.array([True, False, True, False, False, True])
    obs, _ = env.reset(seed=[20 + i for i in range(n)], options={"reset_mask": mask})
    after = env.get_state()
    np.testing.assert_array_equal(after[~mask], before[~mask])
    for i in np.flatnonzero(mask):
        single, _ = CartfuseVectorEnv(env_id, 1, autoreset_mode="disabled").reset(seed=20 + i)
        np.testing.assert_array_equal(obs[i], single[0])
    _, _, term, trunc, _ = env.step(random_actions(env.action_space, rng))
    # Unmasked envs reach the limit (unless one started again early); masked ones are on
    # step 1.
    elapsed[mask] = 0
    np.testing.assert_array_equal(trunc, elapsed + 1 >= limit)
    with pytest.raises(AssertionError, match="reset"):
        env.step(random_actions(env.action_space, rng))  # DISABLED: reset the ended envs first


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_state_round_trip(env_id: str) -> None:
    env = CartfuseVectorEnv(env_id, 3)
    assert env.state_names == tuple(env_info(env_id).state_names)
    env.reset(seed=0)
    states = env.get_state()
    assert states.dtype == np.float64 and states.shape == (3, len(env.state_names))
    env.set_state(states * 0.5)
    np.testing.assert_array_equal(env.get_state(), (states * 0.5).astype(np.float32))
    with pytest.raises(ValueError, match=rf"states: expected shape \(3, {states.shape[1]}\)"):
        env.set_state(np.zeros((3, states.shape[1] + 1)))


def test_unknown_env_id_names_the_argument_and_lists_the_ids() -> None:
    for make in (lambda: CartfuseVectorEnv("Nope-v0", 2), lambda: env_info("Nope-v0")):
        with pytest.raises(ValueError, match="env_id") as raised:
            make()
        for env_id in ENV_IDS:
            assert env_id in str(raised.value)
    with pytest.raises(TypeError, match="env_id"):
        CartfuseVectorEnv(3, 2)  # type: ignore[arg-type]


@pytest.mark.parametrize("env_id", [i for i in ENV_IDS if i != "CartPole-v1"])
def test_hand_written_is_refused_where_there_is_none(env_id: str) -> None:
    with pytest.raises(ValueError, match="plan: hand-written is not available"):
        CartfuseVectorEnv(env_id, 2, plan="hand-written")


@pytest.mark.parametrize("env_id", DISCRETE_IDS)
def test_bad_discrete_actions(env_id: str) -> None:
    count = env_info(env_id).action_n
    assert count is not None
    env = CartfuseVectorEnv(env_id, 4)
    env.reset(seed=0)
    before = env.get_state()
    choices = "{" + ", ".join(str(a) for a in range(count)) + "}"
    cases = [
        (np.zeros((4, 1), dtype=np.int64), ValueError, "shape (4,)"),
        (np.zeros(4, dtype=np.float32), TypeError, "integer dtype"),
        (np.array([0, count, 0, 0]), ValueError, f"actions[1] = {count} is not in {choices}"),
        (np.array([0, 0, -1, 0]), ValueError, "actions[2] = -1"),
    ]
    for actions, error, words in cases:
        with pytest.raises(error, match="actions") as raised:
            env.step(actions)
        assert words in str(raised.value)
    np.testing.assert_array_equal(env.get_state(), before)
    env.step(np.full(4, count - 1, dtype=np.uint8))


@pytest.mark.parametrize("env_id", CONTINUOUS_IDS)
def test_continuous_actions(env_id: str) -> None:
    n = 4
    env = CartfuseVectorEnv(env_id, n)
    space = env.single_action_space
    assert isinstance(space, spaces.Box) and space.shape == (1,)
    assert env.action_space.shape == (n, 1)

    def step(actions: object) -> np.ndarray:
        env.reset(seed=3)
        return env.step(actions)[0]  # type: ignore[arg-type]

    want = step(np.full((n, 1), space.high[0], dtype=np.float32))
    # Any float dtype, shape (n, 1) or (n,), values beyond the bounds clipped.
    for actions in (
        np.full((n, 1), space.high[0], dtype=np.float64),
        np.full((n, 1), space.high[0], dtype=np.float16),
        np.full(n, space.high[0], dtype=np.float32),
        np.full((n, 1), 10 * space.high[0]),
        np.full((n, 1), 1e300),
        [[float(space.high[0])]] * n,
    ):
        np.testing.assert_array_equal(step(actions), want)
    assert not np.array_equal(step(np.full((n, 1), space.low[0])), want)
    cases = [
        (
            np.array([[0.0], [np.nan], [0.0], [0.0]]),
            ValueError,
            "actions[1, 0] = nan is not finite",
        ),
        (np.array([0.0, 0.0, np.inf, 0.0]), ValueError, "actions[2] = inf is not finite"),
        (np.zeros((n, 2)), ValueError, "shape (4, 1)"),
        (np.zeros((n + 1, 1)), ValueError, "shape (4, 1)"),
        (np.zeros((n, 1), dtype=np.int64), TypeError, "float dtype"),
        (np.zeros((n, 1), dtype=bool), TypeError, "float dtype"),
    ]
    env.reset(seed=0)
    before = env.get_state()
    for actions, error, words in cases:
        with pytest.raises(error, match="actions") as raised:
            env.step(actions)
        assert words in str(raised.value)
    np.testing.assert_array_equal(env.get_state(), before)


@pytest.mark.parametrize("env_id", CONTINUOUS_IDS)
def test_single_continuous_env_refuses_nan(env_id: str) -> None:
    env = gym.make(f"cartfuse/{env_id}").unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="finite"):
        env.step(np.array([np.nan], dtype=np.float32))
    with pytest.raises(ValueError, match="action: expected shape"):
        env.step(np.zeros(3, dtype=np.float32))
