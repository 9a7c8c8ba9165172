"""``num_threads=``: how many threads step a vector env on the CPU, counted by the OS."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="counts /proc/self/task")

# Run in a fresh interpreter: the threads of earlier tests' envs would count otherwise.
COUNT_THREADS = textwrap.dedent(
    """
    import os
    import numpy as np
    from cartfuse import CartPoleVectorEnv

    def threads():
        return len(os.listdir("/proc/self/task"))

    before = threads()
    env = CartPoleVectorEnv(4096, device="cpu", num_threads={num_threads})
    env.reset(seed=0)
    for _ in range(10):
        env.step(np.zeros(4096, dtype=np.int64))
    print(threads() - before)
    """
)


def added_threads(num_threads: int | None) -> int:
    code = COUNT_THREADS.format(num_threads=num_threads)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return int(done.stdout.strip().splitlines()[-1])


def test_one_thread_steps_on_the_calling_thread() -> None:
    assert added_threads(1) == 0


def test_two_threads_add_one_worker() -> None:
    assert added_threads(2) == 1


def test_more_threads_than_the_pool_has_is_the_whole_pool() -> None:
    assert added_threads(2**64 - 1) == added_threads(None)
