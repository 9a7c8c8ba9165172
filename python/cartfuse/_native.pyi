"""Type stub of the native module ``cartfuse._native`` (Rust, PyO3)."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

class NativeVecEnv:
    """A batch of CartPole-v1 envs on a cartfuse device."""

    def __init__(
        self,
        num_envs: int,
        device: str | None = None,
        plan: str | None = None,
        autoreset: str = "next_step",
        max_episode_steps: int = 500,
    ) -> None: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def device(self) -> str: ...
    @property
    def plan(self) -> str: ...
    @staticmethod
    def compiled_devices() -> list[str]: ...
    @staticmethod
    def plans() -> list[str]: ...
    def reset(
        self,
        seed: int | Sequence[int | None] | None = None,
        mask: npt.NDArray[np.bool_] | None = None,
    ) -> npt.NDArray[np.float32]: ...
    def step(
        self, actions: npt.NDArray[Any]
    ) -> tuple[
        npt.NDArray[np.float32],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        npt.NDArray[np.float32] | None,
    ]: ...
    def set_state(self, states: npt.NDArray[np.float64]) -> None: ...
    def get_state(self) -> npt.NDArray[np.float64]: ...
