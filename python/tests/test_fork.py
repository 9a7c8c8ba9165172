"""A process forked after the parent stepped a large CPU batch (whose worker threads the
child does not inherit) builds and steps its own large batch, with ``os.fork`` and with
``multiprocessing``'s ``"fork"`` context (gymnasium's ``AsyncVectorEnv``, Ray and data
loaders fork so), and finishes in time instead of waiting forever for the dead threads."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time

import numpy as np
import pytest

from cartfuse import CartPoleVectorEnv

# Large enough that a step runs on the CPU runtime's worker threads.
NUM_ENVS = 4096
DEADLINE_S = 20.0

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="fork as Linux does it"),
    # Python 3.12+ warns that forking a process with threads (the runtime's) may deadlock:
    # the warning is what this test is about.
    pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning"),
]


def step_a_large_batch(seed: int) -> float:
    env = CartPoleVectorEnv(NUM_ENVS, device="cpu")
    obs, _ = env.reset(seed=seed)
    actions = np.random.default_rng(seed).integers(0, 2, size=(8, NUM_ENVS))
    for step in range(20):
        obs, *_ = env.step(actions[step % 8])
    assert obs.shape == (NUM_ENVS, 4)
    env.close()
    return float(obs.sum())


@pytest.fixture(scope="module")
def parent_stepped() -> float:
    """The parent has built and stepped a large batch (its worker threads exist)."""
    return step_a_large_batch(0)


def test_a_child_of_os_fork_steps_its_own_large_batch(parent_stepped: float) -> None:
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            step_a_large_batch(1)
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + DEADLINE_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the forked child did not finish within {DEADLINE_S} s (hung)")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
    # The parent goes on stepping as before.
    assert step_a_large_batch(0) == parent_stepped


def _child(seed: int) -> None:
    step_a_large_batch(seed)


def test_a_multiprocessing_fork_child_steps_its_own_large_batch(parent_stepped: float) -> None:
    process = multiprocessing.get_context("fork").Process(target=_child, args=(2,))
    process.start()
    process.join(DEADLINE_S)
    if process.is_alive():
        process.kill()
        process.join()
        pytest.fail(f"the forked child did not finish within {DEADLINE_S} s (hung)")
    assert process.exitcode == 0
    assert step_a_large_batch(0) == parent_stepped
