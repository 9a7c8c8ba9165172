"""What the ``step_async`` suites (``test_async.py``, ``test_cuda.py``) share: one step of
two vector envs built alike, the first by ``step``, the second by the call under test, the
outputs compared bit for bit."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from cartfuse import CartfuseVectorEnv

How = Literal["step", "step_async", "send"]


def step_alike(
    sync: CartfuseVectorEnv, split: CartfuseVectorEnv, actions: np.ndarray, how: How
) -> tuple[Any, ...]:
    """Steps ``sync`` with ``step`` and ``split`` by ``how`` (``step``, ``step_async`` then
    ``step_wait``, or EnvPool's ``send`` then ``recv``), asserts both gave the same
    observations, rewards and flags and the same info keys, and returns ``sync``'s outputs."""
    want = sync.step(actions)
    if how == "step_async":
        split.step_async(actions)
        got = split.step_wait()
    elif how == "send":
        split.send(actions)
        got = split.recv()
    else:
        got = split.step(actions)
    for a, b in zip(got[:4], want[:4], strict=True):
        np.testing.assert_array_equal(a, b)
    assert set(got[4]) == set(want[4])
    return want
