"""Every bad input raises an error naming the argument, before anything is stepped."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from gymnasium.error import ClosedEnvironmentError
from gymnasium.vector import AutoresetMode

from cartfuse import CartPoleEnv, CartPoleVectorEnv, PendulumEnv, PendulumVectorEnv


@pytest.fixture
def env() -> CartPoleVectorEnv:
    env = CartPoleVectorEnv(4)
    env.reset(seed=0)
    return env


@pytest.mark.parametrize(
    ("actions", "error", "words"),
    [
        (np.zeros(3, dtype=np.int64), ValueError, "shape (4,)"),
        (np.zeros((4, 1), dtype=np.int64), ValueError, "shape (4,)"),
        (np.zeros(4, dtype=np.float32), TypeError, "integer dtype"),
        (np.zeros(4, dtype=np.float64), TypeError, "integer dtype"),
        (np.array([0, 1, -1, 0]), ValueError, "actions[2] = -1"),
        (np.array([0, 2, 0, 0], dtype=np.uint8), ValueError, "actions[1] = 2"),
        (np.array(["a", "b", "c", "d"]), TypeError, "integer dtype"),
        ([0, 1, 0.5, 1], TypeError, "integer dtype"),
    ],
)
def test_bad_actions(env: CartPoleVectorEnv, actions: object, error: type, words: str) -> None:
    before = env.get_state()
    with pytest.raises(error, match="actions") as raised:
        env.step(actions)  # type: ignore[arg-type]
    assert words in str(raised.value)
    np.testing.assert_array_equal(env.get_state(), before)  # nothing was stepped


def test_accepted_action_forms(env: CartPoleVectorEnv) -> None:
    for actions in (
        np.array([0, 1, 1, 0], dtype=np.int32),
        np.array([0, 1, 1, 0], dtype=np.uint8),
        np.array([True, False, True, False]),
        [0, 1, 1, 0],
        np.array([0, 0, 1, 1, 0, 1, 0, 1])[::2],  # strided
    ):
        env.step(actions)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seed", "error", "words"),
    [
        ([1, 2, 3], ValueError, "must match num_envs=4 but got length=3"),
        (-1, ValueError, "[0, 2**64)"),
        ([1, 2, -3, 4], ValueError, "seed[2]"),
        ([1, 2, "x", 4], ValueError, "seed[2]"),
        ("7", TypeError, "expected None, an int or a list"),
        (1.5, TypeError, "expected None, an int or a list"),
        (2**64, ValueError, "[0, 2**64)"),
    ],
)
def test_bad_seeds(env: CartPoleVectorEnv, seed: object, error: type, words: str) -> None:
    with pytest.raises(error, match="seed") as raised:
        env.reset(seed=seed)  # type: ignore[arg-type]
    assert words in str(raised.value)


@pytest.mark.parametrize(
    "mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]
)
def test_bad_reset_masks(mode: AutoresetMode) -> None:
    # gymnasium's SyncVectorEnv's checks, order and messages, in every autoreset mode.
    env = CartPoleVectorEnv(4, autoreset_mode=mode)
    env.reset(seed=0)
    cases = [
        ([True, False, True, False], TypeError, "must be a numpy array, got <class 'list'>"),
        (np.array([True, False]), ValueError, "must have shape `(4,)`, got (2,)"),
        (np.array([1, 0, 1, 0]), TypeError, "must have `dtype=np.bool_`, got int64"),
        (np.zeros(4, dtype=bool), ValueError, "with at least one True value"),
    ]
    for mask, error, words in cases:
        options = {"reset_mask": mask}
        with pytest.raises(error, match="reset_mask") as raised:
            env.reset(options=options)
        assert words in str(raised.value)
        assert options == {}  # popped, as gymnasium does
    with pytest.raises(TypeError, match="options"):
        env.reset(options=[("reset_mask", np.ones(4, dtype=bool))])  # type: ignore[arg-type]
    obs, info = env.reset(options={"reset_mask": np.ones(4, dtype=bool)})
    assert obs.shape == (4, 4) and info == {}


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"low": None}, "An option (None) could not be converted to a float."),
        ({"high": "x"}, "An option (x) could not be converted to a float."),
        ({"low": 1, "high": 0}, "Lower bound (1.0) must be lower than higher bound (0.0)."),
        ({"low": "nan"}, "options['low']: expected a finite number, got nan"),
        ({"high": float("inf")}, "options['high']: expected a finite number, got inf"),
    ],
)
def test_bad_reset_options(env: CartPoleVectorEnv, options: dict[str, object], words: str) -> None:
    before = env.get_state()
    with pytest.raises(ValueError, match=re.escape(words)):
        env.reset(options=options)
    np.testing.assert_array_equal(env.get_state(), before)  # nothing was reset


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"device": "tpu"}, ValueError, "device"),
        ({"device": 3}, TypeError, "device"),
        ({"plan": "fastest"}, ValueError, "unknown plan"),
        ({"plan": "fused-x10"}, ValueError, "steps per call"),
        ({"autoreset_mode": "sometimes"}, ValueError, "autoreset_mode"),
        ({"max_episode_steps": 0}, ValueError, "max_episode_steps"),
        ({"max_episode_steps": 1.5}, TypeError, "max_episode_steps"),
        ({"render_mode": "human"}, ValueError, "render_mode"),
        ({"render_mode": "rgb_array_list"}, ValueError, "render_mode"),
        ({"copy": 1}, TypeError, "copy"),
        ({"num_threads": 0}, ValueError, "num_threads"),
        ({"num_threads": 2**64}, ValueError, "num_threads"),
        ({"num_threads": 1.5}, TypeError, "num_threads"),
        ({"bogus": 1}, TypeError, "unexpected keyword argument 'bogus'"),
        ({"g": 9.81}, TypeError, "unexpected keyword argument 'g'"),
        ({"sutton_barto_reward": 1}, TypeError, "sutton_barto_reward: expected a bool"),
        ({"sutton_barto_reward": "yes"}, TypeError, "sutton_barto_reward: expected a bool"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict[str, object], error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        CartPoleVectorEnv(4, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "error", "words"),
    [
        ("9.8", TypeError, "g: expected a real number, got str"),
        (True, TypeError, "g: expected a real number, got bool"),
        (None, TypeError, "g: expected a real number, got NoneType"),
        (float("nan"), ValueError, "g: expected a finite number, got nan"),
        (-float("inf"), ValueError, "g: expected a finite number, got -inf"),
    ],
)
def test_bad_float_keyword_arguments(value: object, error: type, words: str) -> None:
    with pytest.raises(error) as raised:
        PendulumVectorEnv(2, g=value)
    assert words in str(raised.value)
    with pytest.raises(error) as raised:
        PendulumEnv(g=value)
    assert words in str(raised.value)
    with pytest.raises(TypeError) as raised:
        PendulumEnv(sutton_barto_reward=True)
    assert "PendulumEnv.__init__() got an unexpected keyword" in str(raised.value)
    # Numbers of any real type are taken.
    for good in (9, np.float32(9.5), np.int64(3)):
        PendulumVectorEnv(2, g=good).close()


def test_bad_num_envs() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        CartPoleVectorEnv(0)
    with pytest.raises(TypeError, match="num_envs"):
        CartPoleVectorEnv(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_envs"):
        CartPoleVectorEnv(2**40)
    with pytest.raises(ValueError, match="num_envs"):
        CartPoleVectorEnv(2**64)  # too large for any device, and for a native int


def test_bad_states(env: CartPoleVectorEnv) -> None:
    with pytest.raises(ValueError, match=r"states: expected shape \(4, 4\)"):
        env.set_state(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="finite"):
        env.set_state(np.full((4, 4), np.nan))
    with pytest.raises(TypeError, match="states"):
        env.set_state(np.array([["a"] * 4] * 4))


def test_step_before_reset_is_an_error_not_a_crash() -> None:
    env = CartPoleVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))


def test_a_batch_larger_than_memory_is_refused_at_once() -> None:
    start = time.monotonic()
    with pytest.raises(ValueError, match="num_envs") as raised:
        CartPoleVectorEnv(10**9)
    message = str(raised.value)
    assert "1000000000 envs need at least" in message
    assert "are available" in message and "bytes (" in message
    assert "host memory" in message
    assert time.monotonic() - start < 30


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("CARTFUSE_CPU_SIMD", "avx9000", "scalar, avx2 or avx512"),
        ("CARTFUSE_CPU_ENGINE", "jit", "compiled or interpreted"),
        ("CARTFUSE_CPU_LAZY_SELECTS", "sometimes", "on, off, 1, 0, true or false"),
        ("CARTFUSE_DEVICE_THREAD", "main", "caller or server"),
    ],
)
def test_an_unknown_cartfuse_variable_value_is_an_error(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, accepted: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=name) as raised:
        CartPoleVectorEnv(4)
    assert accepted in str(raised.value)
    monkeypatch.delenv(name)
    CartPoleVectorEnv(4).close()


def test_using_an_env_after_close_is_a_clear_error() -> None:
    env = CartPoleVectorEnv(4)
    env.reset(seed=0)
    env.close()
    env.close()  # closing twice is fine, as in gymnasium
    calls = {
        "step": lambda: env.step(np.zeros(4, dtype=np.int64)),
        "step_async": lambda: env.step_async(np.zeros(4, dtype=np.int64)),
        "step_wait": env.step_wait,
        "reset": lambda: env.reset(seed=0),
        "get_state": env.get_state,
    }
    for name, call in calls.items():
        with pytest.raises(ClosedEnvironmentError, match="closed") as raised:
            call()
        assert "CartPoleVectorEnv" in str(raised.value), name
    assert repr(env) == "CartPoleVectorEnv(closed)"


def test_an_env_refused_while_it_was_built_still_has_a_repr() -> None:
    half_built = CartPoleVectorEnv.__new__(CartPoleVectorEnv)  # as a traceback shows it
    assert repr(half_built) == "CartPoleVectorEnv(not built)"


def test_a_single_env_after_close_is_a_clear_error() -> None:
    env = CartPoleEnv()
    env.reset(seed=0)
    env.close()
    with pytest.raises(ClosedEnvironmentError, match="closed"):
        env.step(0)


@pytest.mark.parametrize(
    ("seed", "error", "words"),
    [
        ("7", TypeError, "seed: expected None or an int, got str"),
        (1.5, TypeError, "seed: expected None or an int, got float"),
        ([1], TypeError, "seed: expected None or an int, got list"),
        (True, TypeError, "seed: expected None or an int, got bool"),
        (-1, ValueError, "[0, 2**64)"),
        (2**64, ValueError, "[0, 2**64)"),
    ],
)
def test_a_single_env_refuses_bad_seeds_before_resetting(
    seed: object, error: type, words: str
) -> None:
    env = CartPoleEnv()
    env.reset(seed=3)
    before = env.state.copy()
    with pytest.raises(error, match="seed") as raised:
        env.reset(seed=seed)  # type: ignore[arg-type]
    assert words in str(raised.value)
    np.testing.assert_array_equal(env.state, before)  # nothing was reset
    env.reset(seed=np.int64(3))  # numpy integers are ints
    np.testing.assert_array_equal(env.state, before)
