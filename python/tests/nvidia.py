"""Whether this machine has NVIDIA's driver (what CUDA tests run or skip on)."""

from __future__ import annotations

import ctypes


def has_nvidia_driver() -> bool:
    """``libcuda.so.1`` loads: the library cartfuse's CUDA runtime opens at run time."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True
