"""Type stub of the native module ``cartfuse._native`` (Rust, PyO3)."""

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

__version__: str

def env_ids() -> list[str]:
    """The gymnasium ids of every environment this build has."""

def env_info(env_id: str) -> EnvInfo:
    """The environment ``env_id`` names (``ValueError`` naming ``env_id`` otherwise)."""

class EnvInfo:
    """One environment as its Rust definition declares it."""

    @property
    def id(self) -> str: ...
    @property
    def obs_dim(self) -> int: ...
    @property
    def state_names(self) -> list[str]: ...
    @property
    def max_episode_steps(self) -> int: ...
    @property
    def observation_shape(self) -> list[int]: ...
    @property
    def observation_low(self) -> list[float]: ...
    @property
    def observation_high(self) -> list[float]: ...
    @property
    def action_kind(self) -> Literal["discrete", "box"]: ...
    @property
    def action_n(self) -> int | None: ...
    @property
    def action_shape(self) -> list[int]: ...
    @property
    def action_low(self) -> list[float] | None: ...
    @property
    def action_high(self) -> list[float] | None: ...

class NativeVecEnv:
    """A batch of envs of one registered environment on a cartfuse device."""

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        device: str | None = None,
        plan: str | None = None,
        autoreset: str = "next_step",
        max_episode_steps: int | None = None,
    ) -> None: ...
    @property
    def env_id(self) -> str: ...
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
