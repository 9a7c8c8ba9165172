"""Type stub of the native module ``cartfuse._native`` (Rust, PyO3).

PyO3 classes cannot be subclassed (hence ``@final``) and are built by ``__new__`` (hence
``__new__`` rather than ``__init__``: what ``python -m mypy.stubtest cartfuse._native``
checks). ``python/tests/test_stub.py`` checks this file against the module.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Literal, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "DeviceArray",
    "EnvInfo",
    "NativeVecEnv",
    "NoPendingStepError",
    "PendingStepError",
    "RustStepTimer",
    "__version__",
    "env_ids",
    "env_info",
    "host_array",
    "import_host_actions",
]

__version__: str

def env_ids() -> list[str]:
    """The gymnasium ids of every environment this build has."""

def env_info(env_id: str) -> EnvInfo:
    """The environment ``env_id`` names (``ValueError`` naming ``env_id`` otherwise)."""

def host_array(values: npt.NDArray[np.float32]) -> DeviceArray:
    """A copy of ``values`` (1-d float32) as a CPU :class:`DeviceArray`: the device views'
    DLPack export, for tests on machines without a GPU."""

def import_host_actions(actions: Any, env_id: str, num_envs: int) -> tuple[int, int]:
    """``actions`` (a DLPack producer on the CPU) imported as a CUDA step imports its
    actions: ``(address, bytes)``, for tests of the checks on machines without a GPU."""

@final
class DeviceArray:
    """A view of an env's output on its device (``copy=False`` on CUDA), exported through
    DLPack: ``torch.from_dlpack(view)``, ``jax.dlpack.from_dlpack(view)``. Valid until the
    env's next step or reset."""

    @property
    def shape(self) -> list[int]: ...
    @property
    def dtype(self) -> str:
        """``"float32"`` or ``"int32"`` (flags, 0 or 1)."""
    @property
    def device(self) -> str:
        """``"cuda:0"``, ``"cpu"``."""
    def __dlpack__(
        self,
        *,
        stream: Any | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

class PendingStepError(RuntimeError):
    """A call that needs the envs was made while a ``step_async`` step is in flight."""

class NoPendingStepError(RuntimeError):
    """``step_wait`` was called with no ``step_async`` step in flight."""

@final
class EnvInfo:
    """One environment as its Rust definition declares it."""

    @property
    def id(self) -> str:
        """gymnasium's id."""
    @property
    def obs_dim(self) -> int:
        """Length of one observation row."""
    @property
    def state_names(self) -> list[str]:
        """State components, in the order of gymnasium's ``env.unwrapped.state``."""
    @property
    def max_episode_steps(self) -> int:
        """gymnasium's registered ``max_episode_steps``."""
    @property
    def observation_shape(self) -> list[int]: ...
    @property
    def observation_low(self) -> list[float]: ...
    @property
    def observation_high(self) -> list[float]: ...
    @property
    def action_kind(self) -> Literal["discrete", "box"]: ...
    @property
    def action_n(self) -> int | None:
        """Discrete only: the number of actions."""
    @property
    def action_shape(self) -> list[int]: ...
    @property
    def action_low(self) -> list[float] | None:
        """Box only: lower bounds of one action."""
    @property
    def action_high(self) -> list[float] | None:
        """Box only: upper bounds of one action."""
    @property
    def render_fps(self) -> int:
        """gymnasium's ``metadata["render_fps"]``."""
    @property
    def kwargs(self) -> list[tuple[str, Literal["bool", "float"], float]]:
        """gymnasium's constructor arguments besides ``render_mode``: ``(name, kind,
        default)``, kind ``"bool"`` (default 0.0 or 1.0) or ``"float"``."""
    @property
    def reset_option_names(self) -> list[str]:
        """The options ``reset(options=...)`` reads: ``["low", "high"]`` (bounds of every
        drawn component), or one symmetric bound per drawn component (Pendulum:
        ``["x_init", "y_init"]``)."""
    @property
    def reset_bounds(self) -> list[tuple[float, float]]:
        """The default ``(low, high)`` of each drawn component of a reset."""
    def __repr__(self) -> str: ...

@final
class NativeVecEnv:
    """A batch of envs of one registered environment on a cartfuse device."""

    def __new__(
        cls,
        env_id: str,
        num_envs: int,
        device: str | None = None,
        plan: str | None = None,
        autoreset: str = "next_step",
        max_episode_steps: int | None = None,
        copy: bool = True,
        parallel_min_lanes: int | None = None,
        params: Mapping[str, float] | None = None,
        num_threads: int | None = None,
    ) -> NativeVecEnv: ...
    @property
    def env_id(self) -> str: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def copy(self) -> bool:
        """Whether each step returns arrays of its own (``True``) or the env's own."""
    @property
    def device(self) -> str: ...
    @property
    def device_reason(self) -> str | None:
        """Why ``device=None`` chose the device; ``None`` when it was named."""
    @property
    def plan(self) -> str: ...
    @property
    def pending(self) -> bool:
        """Whether a ``step_async`` step is in flight."""
    @staticmethod
    def compiled_devices() -> list[str]: ...
    @staticmethod
    def plans() -> list[str]: ...
    def reset(
        self,
        seed: int | Sequence[int | None] | None = None,
        mask: npt.NDArray[np.bool_] | None = None,
        bounds: Sequence[tuple[float, float]] | None = None,
    ) -> npt.NDArray[np.float32]: ...
    def step(
        self, actions: npt.NDArray[Any]
    ) -> tuple[
        npt.NDArray[np.float32],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        npt.NDArray[np.float32] | None,
    ]:
        """Observations, rewards, terminated, truncated, and the final observations
        (``SAME_STEP`` only, else ``None``)."""
    def reset_views(
        self,
        seed: int | Sequence[int | None] | None = None,
        mask: npt.NDArray[np.bool_] | None = None,
        bounds: Sequence[tuple[float, float]] | None = None,
    ) -> DeviceArray:
        """``reset`` with the observations on the device (``copy=False`` on CUDA)."""
    def step_views(self, actions: Any) -> tuple[DeviceArray, DeviceArray, DeviceArray, DeviceArray]:
        """``step`` with the outputs on the device (``copy=False`` on CUDA); ``actions`` a
        CUDA tensor (int32 or float32) or anything ``step`` takes."""
    def step_async(self, actions: npt.NDArray[Any]) -> None: ...
    def step_wait(
        self,
    ) -> tuple[
        npt.NDArray[np.float32],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        npt.NDArray[np.float32] | None,
    ]: ...
    def step_ready(self) -> bool: ...
    def step_one(self, action: Any) -> tuple[npt.NDArray[np.float32], float, bool, bool]: ...
    def set_state(self, states: npt.NDArray[np.float64]) -> None: ...
    def get_state(self) -> npt.NDArray[np.float64]: ...
    def close(self) -> None: ...

@final
class RustStepTimer:
    """``num_envs`` envs of ``env_id`` built as a Rust program builds them, reset with seed
    0, timed through the Rust API alone."""

    def __new__(
        cls,
        env_id: str,
        num_envs: int,
        device: str | None = None,
        plan: str | None = None,
    ) -> RustStepTimer: ...
    def time(self, calls: int, host: bool = False) -> float:
        """Seconds taken by ``calls`` steps of the Rust API: device-resident, or with
        ``host=True`` host actions in and host outputs out."""
    @property
    def plan(self) -> str: ...
