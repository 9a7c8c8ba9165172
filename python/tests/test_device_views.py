"""``copy=False`` on CUDA keeps the outputs on the GPU as :class:`cartfuse.DeviceArray` views
that DLPack consumers take in place, and ``step`` takes a CUDA tensor of actions.

Here, on every machine: the export (capsules, both DLPack ABIs, lifetimes) through
``host_array``, a CPU view of the same kind; the checks of the action import through
``import_host_actions``; the refusal of other devices. The CUDA path itself is tested in
``test_cuda.py`` (NVIDIA's driver and torch needed)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cartfuse import CartPoleVectorEnv, DeviceArray, compiled_devices
from cartfuse._native import NativeVecEnv, host_array, import_host_actions


def test_a_view_exports_its_memory_through_dlpack() -> None:
    values = np.arange(7, dtype=np.float32) * 0.5
    view = host_array(values)
    assert isinstance(view, DeviceArray)
    assert view.shape == [7]
    assert view.dtype == "float32"
    assert view.device == "cpu"
    assert view.__dlpack_device__() == (1, 0)
    assert len(view) == 7
    # numpy asks for the versioned ABI (max_version), older consumers get the legacy one.
    np.testing.assert_array_equal(np.from_dlpack(view), values)
    legacy = view.__dlpack__()
    versioned = view.__dlpack__(max_version=(1, 0))
    assert type(legacy).__name__ == "PyCapsule"
    assert type(versioned).__name__ == "PyCapsule"
    del legacy, versioned  # unconsumed capsules free their tensors
    assert repr(view) == "DeviceArray(shape=[7], dtype=float32, device=cpu)"


def test_an_imported_view_keeps_the_memory_after_the_view_is_gone() -> None:
    values = np.linspace(-1.0, 1.0, 1000, dtype=np.float32)
    view = host_array(values)
    shared = np.from_dlpack(view)
    del view
    gc.collect()
    np.testing.assert_array_equal(shared, values)
    assert not np.shares_memory(shared, values)  # host_array copies


def test_a_view_refuses_a_copy_to_another_device() -> None:
    view = host_array(np.ones(3, dtype=np.float32))
    with pytest.raises((ValueError, BufferError)):
        view.__dlpack__(dl_device=(2, 0), copy=False)


def test_actions_are_imported_in_place_and_checked() -> None:
    # The import a CUDA step makes of its actions, here from numpy on the CPU.
    actions = np.arange(10, dtype=np.int32) % 2
    assert import_host_actions(actions, "CartPole-v1", 10) == (actions.ctypes.data, 40)
    tail = actions[2:]  # a view: its own start
    assert import_host_actions(tail, "CartPole-v1", 8) == (tail.ctypes.data, 32)
    with pytest.raises(TypeError, match=r"actions.*int32"):
        import_host_actions(actions.astype(np.int64), "CartPole-v1", 10)
    with pytest.raises(ValueError, match=r"actions: expected shape \[9\], got \[10\]"):
        import_host_actions(actions, "CartPole-v1", 9)
    with pytest.raises(ValueError, match=r"actions.*contiguous"):
        import_host_actions(np.zeros(16, dtype=np.int32)[::2], "CartPole-v1", 8)
    # A dimension of size 1 may have any stride (DLPack's and torch's rule).
    one = np.zeros(2, dtype=np.int32)[::2]
    assert import_host_actions(one, "CartPole-v1", 1) == (one.ctypes.data, 4)
    column = np.zeros((1, 4), dtype=np.float32).T  # (4, 1), strides (1, 4) elements
    assert import_host_actions(column, "Pendulum-v1", 4) == (column.ctypes.data, 16)
    with pytest.raises(ValueError, match=r"actions.*contiguous"):
        import_host_actions(np.zeros((4, 2), dtype=np.float32)[:, :1], "Pendulum-v1", 4)
    torques = np.zeros((4, 1), dtype=np.float32)
    assert import_host_actions(torques, "Pendulum-v1", 4) == (torques.ctypes.data, 16)
    assert import_host_actions(torques[:, 0], "Pendulum-v1", 4)[1] == 16
    with pytest.raises(ValueError, match=r"actions.*shape"):
        import_host_actions(np.zeros((4, 2), dtype=np.float32), "Pendulum-v1", 4)
    with pytest.raises(TypeError, match=r"actions.*float32"):
        import_host_actions(torques.astype(np.float64), "Pendulum-v1", 4)
    with pytest.raises(ValueError, match="env_id"):
        import_host_actions(actions, "CartPole-v0", 10)


class OldProducer:
    """A DLPack producer from before DLPack 1.0's keywords: ``__dlpack__(stream=None)``."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, stream: int | None = None) -> object:
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self) -> tuple[int, int]:
        device: tuple[int, int] = self.array.__dlpack_device__()
        return device


def test_actions_from_a_producer_without_max_version_are_imported() -> None:
    actions = np.ones(6, dtype=np.int32)
    assert import_host_actions(OldProducer(actions), "CartPole-v1", 6) == (actions.ctypes.data, 24)


@pytest.mark.parametrize("device", [d for d in ("cpu", "wgpu") if d in compiled_devices()])
def test_device_views_need_cuda(device: str) -> None:
    env = NativeVecEnv("CartPole-v1", 4, device=device, copy=False)
    with pytest.raises(ValueError, match=r"copy.*cuda"):
        env.reset_views(seed=0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"copy.*cuda"):
        env.step_views(np.zeros(4, dtype=np.int64))
    # The gymnasium class keeps numpy arrays there.
    vec = CartPoleVectorEnv(4, device=device, copy=False)
    obs, _ = vec.reset(seed=0)
    assert isinstance(obs, np.ndarray)
