"""gymnasium's own checker on every ``gym.make("cartfuse/<id>")``, and ``rgb_array`` frames
of the size, layout and colours of gymnasium's renderers (compared pixel by pixel with
gymnasium's own frames of the same state where pygame is installed)."""

from __future__ import annotations

import importlib.util
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from cartfuse import ENV_IDS, CartfuseVectorEnv, env_class, env_info, render, vector_env_class
from cartfuse.render import frame

SIZES = {
    "CartPole-v1": (400, 600),
    "MountainCar-v0": (400, 600),
    "MountainCarContinuous-v0": (400, 600),
    "Acrobot-v1": (500, 500),
    "Pendulum-v1": (500, 500),
}
HAS_PYGAME = importlib.util.find_spec("pygame") is not None


def _checker_warnings(env: gym.Env) -> set[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    return {str(w.message) for w in caught}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasiums_checker_passes_with_rendering(env_id: str) -> None:
    env = gym.make(f"cartfuse/{env_id}", render_mode="rgb_array")
    ours = _checker_warnings(env.unwrapped)
    # Only warnings gymnasium's own env draws too (infinite bounds, Pendulum's [-2, 2] box).
    theirs = _checker_warnings(gym.make(env_id, render_mode="rgb_array").unwrapped)
    assert ours <= theirs, ours - theirs
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_rgb_array_frames_have_gymnasiums_size_and_change_with_the_state(env_id: str) -> None:
    env = gym.make(f"cartfuse/{env_id}", render_mode="rgb_array")
    env.reset(seed=0)
    # Seeded: unseeded draws left MountainCarContinuous, which starts near the valley's
    # bottom, within a pixel of its start in about 1.5% of runs.
    env.action_space.seed(0)
    first = env.render()
    assert isinstance(first, np.ndarray)
    assert first.shape == (*SIZES[env_id], 3)
    assert first.dtype == np.uint8
    assert env.metadata["render_fps"] == gym.make(env_id).metadata["render_fps"]
    for _ in range(15):
        env.step(env.action_space.sample())
    assert not np.array_equal(env.render(), first)
    env.close()


def test_without_a_render_mode_render_returns_none() -> None:
    env = gym.make("cartfuse/CartPole-v1")
    env.reset(seed=0)
    assert env.unwrapped.render() is None


def test_an_unknown_render_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        gym.make("cartfuse/CartPole-v1", render_mode="ascii")


def test_the_cart_is_drawn_where_gymnasium_draws_it() -> None:
    # x = 1.2 puts the cart's centre at 300 + 1.2 * 125 = 450 px, its top at row
    # 400 - 100 - 15 = 285 and bottom at 315 (image rows grow downwards), black.
    picture = frame("CartPole-v1", np.array([1.2, 0.0, 0.0, 0.0]))
    assert tuple(picture[305, 450]) == (0, 0, 0)
    assert tuple(picture[305, 420]) == (255, 255, 255)
    # The pole stands up from the axle at 300 - 7.5 rows, in gymnasium's pole colour.
    assert tuple(picture[200, 450]) == (202, 152, 101)


def _gymnasium_frame(env_id: str, state: np.ndarray, action: object) -> np.ndarray:
    theirs = gym.make(env_id, render_mode="rgb_array").unwrapped
    theirs.reset(seed=0)
    theirs.state = np.array(state, dtype=np.float64)
    if env_id == "Pendulum-v1":
        theirs.last_u = None if action is None else float(np.asarray(action).reshape(-1)[0])
    picture = theirs.render()
    theirs.close()
    return picture


STATES = {
    "CartPole-v1": [np.array([0.3, 0.0, 0.15, 0.0]), np.array([-1.7, 0.0, -0.2, 0.0])],
    "MountainCar-v0": [np.array([-0.5, 0.0]), np.array([0.3, 0.02])],
    "MountainCarContinuous-v0": [np.array([-1.0, 0.0]), np.array([0.4, 0.01])],
    "Acrobot-v1": [np.array([0.4, -1.1, 0.0, 0.0]), np.array([2.5, 0.7, 0.0, 0.0])],
    "Pendulum-v1": [np.array([0.5, 0.0]), np.array([-2.0, 1.0])],
}


def _unexplained(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Pixels of ours unlike every pixel of theirs within one pixel: gymnasium's edges are
    anti-aliased (a line between two pixels is two half-tones) and its vertices rounded its
    own way, so an edge may sit a pixel away."""
    height, width = ours.shape[:2]
    padded = np.pad(theirs.astype(np.int16), ((1, 1), (1, 1), (0, 0)), mode="edge")
    near = np.zeros((height, width), dtype=bool)
    for dy in range(3):
        for dx in range(3):
            window = padded[dy : dy + height, dx : dx + width]
            near |= np.abs(ours.astype(np.int16) - window).max(axis=2) <= 128
    return ~near


@pytest.mark.skipif(not HAS_PYGAME, reason="gymnasium's renderer needs pygame")
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_frames_match_gymnasiums_but_for_the_edges(env_id: str) -> None:
    for k, state in enumerate(STATES[env_id]):
        action = np.array([1.5 if k else -0.8], dtype=np.float32)
        ours = frame(env_id, state, action)
        theirs = _gymnasium_frame(env_id, state, action)
        assert ours.shape == theirs.shape
        drawn_ours = (ours != 255).any(axis=2)
        drawn_theirs = (theirs != 255).any(axis=2)
        # Every pixel we draw is one gymnasium draws (within a pixel), and the shapes cover
        # the same ground (gymnasium adds anti-aliased rims; Pendulum's arrow is a PNG there).
        unexplained = _unexplained(ours, theirs).sum()
        # Pendulum's arrow is gymnasium's PNG, smooth-scaled; ours redraws it from measures.
        share = 0.05 if env_id == "Pendulum-v1" else 0.02
        assert unexplained <= share * drawn_ours.sum(), (env_id, k, unexplained)
        overlap = (drawn_ours & drawn_theirs).sum() / (drawn_ours | drawn_theirs).sum()
        assert overlap > 0.7, (env_id, k, overlap)


def test_a_frame_of_an_id_without_a_scene_is_refused_by_name() -> None:
    # An environment the Rust registry adds steps without a scene; only its frames raise.
    with pytest.raises(ValueError, match="env_id: no renderer for 'Nope-v0'"):
        frame("Nope-v0", np.zeros(2))
    assert not hasattr(render, "RENDER_FPS")  # the frame rate is the native module's


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_render_fps_comes_from_the_native_module_on_classes_and_instances(env_id: str) -> None:
    fps = env_info(env_id).render_fps
    assert fps == gym.make(env_id).metadata["render_fps"]
    for cls in (env_class(env_id), vector_env_class(env_id)):
        assert cls.metadata["render_fps"] == fps  # before any instance exists
    vector = gym.make_vec(f"cartfuse/{env_id}", num_envs=2, vectorization_mode="vector_entry_point")
    assert type(vector) is vector_env_class(env_id)
    assert vector.metadata["render_fps"] == fps
    assert vector.metadata["render_modes"] == ["rgb_array"]
    assert gym.make(f"cartfuse/{env_id}").metadata["render_fps"] == fps
    vector.close()


@pytest.mark.skipif("Pendulum-v1" not in ENV_IDS, reason="no Pendulum-v1")
def test_vector_pendulum_frames_draw_each_envs_last_torque_until_it_resets() -> None:
    envs = CartfuseVectorEnv("Pendulum-v1", 2, render_mode="rgb_array", max_episode_steps=1)
    envs.reset(seed=0)
    states = envs.get_state()
    frames = envs.render()
    assert frames is not None
    for i in range(2):  # no torque yet
        np.testing.assert_array_equal(frames[i], frame("Pendulum-v1", states[i], None))
    actions = np.array([[2.0], [-1.5]], dtype=np.float32)
    envs.step(actions)  # truncates both (max_episode_steps=1)
    frames, states = envs.render(), envs.get_state()
    assert frames is not None
    for i in range(2):
        np.testing.assert_array_equal(frames[i], frame("Pendulum-v1", states[i], actions[i]))
        assert not np.array_equal(frames[i], frame("Pendulum-v1", states[i], None))
    envs.step(actions)  # NEXT_STEP: the reset step, no torque applied
    frames, states = envs.render(), envs.get_state()
    assert frames is not None
    for i in range(2):
        np.testing.assert_array_equal(frames[i], frame("Pendulum-v1", states[i], None))
    envs.close()
