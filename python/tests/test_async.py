"""``step_async``/``step_wait`` (and EnvPool's ``send``/``recv``): the same outputs as
``step``, the step running while Python runs, and clear errors for calls out of turn."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest
from async_steps import step_alike
from gymnasium.error import AlreadyPendingCallError, NoAsyncCallError
from gymnasium.vector import AutoresetMode

from cartfuse import CartfuseVectorEnv, CartPoleVectorEnv


@pytest.mark.parametrize(
    "mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]
)
@pytest.mark.parametrize("copy", [True, False])
def test_async_steps_equal_synchronous_ones(mode: AutoresetMode, copy: bool) -> None:
    kwargs = {"autoreset_mode": mode, "max_episode_steps": 7, "copy": copy}
    sync = CartfuseVectorEnv("Acrobot-v1", 50, **kwargs)
    split = CartfuseVectorEnv("Acrobot-v1", 50, **kwargs)
    for env in (sync, split):
        env.reset(seed=9)
    rng = np.random.default_rng(0)
    for step in range(20):
        actions = rng.integers(0, 3, size=50)
        want = step_alike(sync, split, actions, "step_async" if step % 2 else "send")
        ended = want[2] | want[3]
        if mode == AutoresetMode.DISABLED and ended.any():
            for env in (sync, split):  # DISABLED: ended envs are reset before the next step
                env.reset(options={"reset_mask": ended.copy()})


def test_a_cpu_bound_python_loop_runs_while_the_step_does() -> None:
    # The loop below never gives up the GIL by itself, and the interpreter would take it
    # away only after the switch interval: a step that needed the GIL could not finish
    # before the loop ends. It finishes inside it, while the loop keeps counting.
    env = CartPoleVectorEnv(1 << 20)
    env.reset(seed=0)
    actions = np.ones(1 << 20, dtype=np.int64)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        counted_before_ready = []
        for _ in range(3):
            env.step_async(actions)
            count, total = 0, 0
            deadline = time.monotonic() + 60.0
            while not env._native.step_ready():
                total += sum(i * i for i in range(50))  # Python work, holding the GIL
                count += 1
                assert time.monotonic() < deadline, "the step did not finish beside the loop"
            counted_before_ready.append(count)
            assert total >= 0
            obs, *_ = env.step_wait()
            assert obs.shape == (1 << 20, 4)
    finally:
        sys.setswitchinterval(interval)
    assert max(counted_before_ready) > 0, counted_before_ready


def test_calls_during_a_step_in_flight_are_refused_and_the_env_goes_on() -> None:
    env = CartPoleVectorEnv(16)
    twin = CartPoleVectorEnv(16)
    for e in (env, twin):
        e.reset(seed=4)
    actions = np.ones(16, dtype=np.int64)
    env.step_async(actions)
    calls = {
        "step": lambda: env.step(actions),
        "step_async": lambda: env.step_async(actions),
        "reset": lambda: env.reset(seed=1),
        "get_state": env.get_state,
        "set_state": lambda: env.set_state(np.zeros((16, 4))),
    }
    for name, call in calls.items():
        with pytest.raises(AlreadyPendingCallError, match="step_wait") as raised:
            call()
        assert raised.value.name == "step", name
    with pytest.raises(AlreadyPendingCallError):
        env.step_async(np.full(16, 5))  # a bad call in flight is refused the same way
    got = env.step_wait()
    want = twin.step(actions)
    for a, b in zip(got[:4], want[:4], strict=True):
        np.testing.assert_array_equal(a, b)
    # Usable afterwards: the refused calls changed nothing.
    got = env.step(actions)
    want = twin.step(actions)
    np.testing.assert_array_equal(got[0], want[0])


def test_a_bad_async_call_raises_at_once_and_starts_nothing() -> None:
    env = CartPoleVectorEnv(4)
    env.reset(seed=0)
    before = env.get_state()
    with pytest.raises(ValueError, match=r"actions\[1\] = 7"):
        env.step_async(np.array([0, 7, 0, 0]))
    with pytest.raises(NoAsyncCallError, match="step_async"):
        env.step_wait()
    np.testing.assert_array_equal(env.get_state(), before)
    env.step_async(np.zeros(4, dtype=np.int64))
    obs, *_ = env.step_wait()
    assert obs.shape == (4, 4)


def test_step_wait_without_a_step_in_flight() -> None:
    env = CartPoleVectorEnv(2)
    env.reset(seed=0)
    with pytest.raises(NoAsyncCallError) as raised:
        env.step_wait()
    assert raised.value.name == "step"


def test_close_waits_for_a_step_in_flight() -> None:
    env = CartPoleVectorEnv(1 << 16)
    env.reset(seed=0)
    env.step_async(np.ones(1 << 16, dtype=np.int64))
    env.close()
    assert env.closed
