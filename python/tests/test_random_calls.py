"""Random call sequences with odd arguments against every environment, on the CPU runtime
and on wgpu (lavapipe without a GPU) where the wheel has it.

Every refusal must be one of the documented errors (``ValueError``/``TypeError`` naming the
argument, gymnasium's errors for async calls out of order and for a closed env,
``AssertionError`` for stepping an ended env under ``DISABLED``, ``RuntimeError`` for a step
before the first reset), never pyo3's ``PanicException`` (a ``BaseException``), an
``OverflowError`` or another error; whatever is accepted returns outputs of the declared
shapes and dtypes. The sequences are drawn from fixed seeds, so a failure replays.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gymnasium.error import AlreadyPendingCallError, ClosedEnvironmentError, NoAsyncCallError

from cartfuse import (
    ENV_IDS,
    CartfuseEnv,
    CartfuseVectorEnv,
    _native,
    compiled_devices,
    env_class,
    env_info,
    vector_env_class,
)

DOCUMENTED = (
    ValueError,
    TypeError,
    AssertionError,
    AlreadyPendingCallError,
    NoAsyncCallError,
    ClosedEnvironmentError,
    _native.PendingStepError,
    _native.NoPendingStepError,
)

#: Values of the wrong type, out of range or at a limit, for any argument.
ODD_VALUES: list[object] = [
    0, 1, -1, 3, 2**31, 2**63, 2**64 - 1, 2**64, -(2**63), 1.5, float("nan"), float("inf"),
    -0.0, "x", "", None, True, [], [1], (), {}, {"a": 1}, b"1", object(), 1j,
    np.int64(1), np.uint64(2**64 - 1), np.float32(1.0), np.array(1), np.zeros(0),
    np.zeros((2, 2)), "cpu", "wgpu", "cuda", "fused", "eager",
]  # fmt: skip

#: Constructor keywords, each given an odd value now and then.
KEYWORDS = ("plan", "max_episode_steps", "num_threads", "copy", "autoreset_mode", "render_mode")


def outcome(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)``'s result, ``None`` when it raised a documented error; any
    other error fails the test."""
    try:
        return call(*args, **kwargs)
    except RuntimeError as error:
        if "must be reset before it is stepped" not in str(error):
            raise
    except DOCUMENTED:
        pass
    return None


class Caller:
    """Draws the calls of one sequence from ``seed``."""

    def __init__(self, seed: int, device: str) -> None:
        self.device = device
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)

    def odd(self) -> object:
        return self.rng.choice(ODD_VALUES)

    def batch(self, n: int, row: tuple[int, ...]) -> object:
        """Actions or states for ``n`` envs: of every dtype, shape, layout and range."""
        shape = (n, *row)
        kind = self.rng.randrange(9)
        if kind == 0:
            return self.odd()
        if kind == 1:
            dtype = self.rng.choice(
                [np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float16, np.float32,
                 np.float64, np.bool_, np.complex64, object]
            )  # fmt: skip
            return np.ones(shape, dtype=dtype)
        if kind == 2:
            value = self.rng.choice([np.nan, np.inf, -np.inf, 1e30, 0.5, 3.0, -7.0])
            return np.full(shape, value, dtype=np.float32)
        if kind == 3:
            return np.zeros((n + self.rng.choice([-1, 1]), *row), dtype=np.float32)
        if kind == 4:
            return np.zeros((2 * n, *row), dtype=np.float32)[::2]  # strided
        if kind == 5:
            return [self.rng.choice([0, 1, 2, -1, 0.5, "a", None]) for _ in range(n)]
        if kind == 6:
            return self.np_rng.integers(-1, 4, size=shape)
        if kind == 7:
            return self.np_rng.uniform(-3.0, 3.0, size=shape).astype(np.float32)
        return np.broadcast_to(np.zeros(row or (1,), dtype=np.int64), shape)

    def env(self, env_id: str) -> tuple[CartfuseVectorEnv | CartfuseEnv | None, int]:
        """A vector env (``n`` envs) or a single one (``n = 1``) of ``env_id``, built with
        odd arguments now and then (``None`` when they were refused)."""
        kwargs: dict[str, object] = {"device": self.device}
        for name in KEYWORDS:
            if self.rng.random() < 0.2:
                kwargs[name] = self.odd()
        if self.rng.random() < 0.7:
            n = self.rng.choice([1, 2, 7, 64])
            if self.rng.random() < 0.1:
                n = self.odd()  # type: ignore[assignment]
            vector = vector_env_class(env_id)
            env = outcome(vector, n, **kwargs)
            return env, n if isinstance(n, int) else 0
        for name in ("copy", "autoreset_mode"):
            kwargs.pop(name, None)
        single = env_class(env_id)
        return outcome(single, **kwargs), 1

    def actions(self, env: CartfuseVectorEnv | CartfuseEnv, n: int) -> object:
        if self.rng.random() < 0.5:
            return env.action_space.sample()
        if isinstance(env, CartfuseEnv):
            return self.rng.choice(
                [self.odd(), np.array([self.rng.choice([np.nan, 5.0, 0.0])], np.float32), 2]
            )
        return self.batch(n, tuple(env.single_action_space.shape or ()))


def check_step(env: CartfuseVectorEnv | CartfuseEnv, result: Any) -> None:
    """An accepted step's outputs have the declared shapes and dtypes."""
    obs, reward, terminated, truncated, _ = result
    if isinstance(env, CartfuseEnv):
        assert obs.shape == env.observation_space.shape and obs.dtype == np.float32
        assert isinstance(reward, float) and isinstance(terminated, bool)
        assert isinstance(truncated, bool)
        return
    n = env.num_envs
    assert obs.shape == (n, *env.single_observation_space.shape) and obs.dtype == np.float32
    assert reward.shape == (n,) and terminated.shape == (n,) and truncated.shape == (n,)
    assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_


def run_sequence(caller: Caller, env_id: str) -> None:
    env, n = caller.env(env_id)
    if env is None:
        return
    state_dim = len(env_info(env_id).state_names)
    for _ in range(caller.rng.randrange(1, 20)):
        op = caller.rng.randrange(9)
        if op <= 3:
            result = outcome(env.step, caller.actions(env, n))
            if result is not None:
                check_step(env, result)
        elif op == 4:
            seed = caller.rng.choice([None, 0, 2**64 - 1, caller.odd()])
            options = None
            if caller.rng.random() < 0.3:
                name = caller.rng.choice(["low", "high", "x_init", "y_init", "reset_mask", "x"])
                options = {name: caller.odd()}
            outcome(env.reset, seed=seed, options=options)
        elif op == 5 and isinstance(env, CartfuseVectorEnv):
            outcome(env.step_async, caller.actions(env, n))
        elif op == 6 and isinstance(env, CartfuseVectorEnv):
            outcome(env.step_wait)
        elif op == 7:
            states = caller.batch(n, (caller.rng.choice([state_dim, state_dim - 1]),))
            if isinstance(env, CartfuseVectorEnv):
                outcome(env.set_state, states)
            else:
                outcome(setattr, env, "state", states)
        elif caller.rng.random() < 0.3:
            outcome(env.close)
        else:
            outcome(env.render)
    outcome(env.close)


@pytest.mark.parametrize("device", [d for d in ("cpu", "wgpu") if d in compiled_devices()])
@pytest.mark.parametrize("seed", range(4))
def test_random_calls_raise_only_documented_errors(seed: int, device: str) -> None:
    caller = Caller(seed, device)
    for _ in range(60):
        run_sequence(caller, caller.rng.choice(ENV_IDS))
