"""gymnasium vector envs stepped by cartfuse's kernels.

The principal type is :class:`CartPoleVectorEnv`, a drop-in ``gymnasium.vector.VectorEnv``
with CartPole-v1's spaces, all three autoreset modes, gymnasium's seeding, and numpy arrays
out. Each step is one call into the native module, which validates the actions, steps every
env on the device and hands its buffers to numpy without copying.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from cartfuse._native import NativeVecEnv

__all__ = ["DEVICES", "PLANS", "CartPoleVectorEnv", "compiled_devices"]

#: Every device name the constructor knows (``None`` picks one automatically).
DEVICES: tuple[str, ...] = ("cpu", "wgpu", "cuda")
#: Plan names ``plan=`` accepts.
PLANS: tuple[str, ...] = tuple(NativeVecEnv.plans())

_AUTORESET_NAMES = {
    AutoresetMode.NEXT_STEP: "next_step",
    AutoresetMode.SAME_STEP: "same_step",
    AutoresetMode.DISABLED: "disabled",
}

ObsArray = npt.NDArray[np.float32]
ActArray = npt.NDArray[np.integer[Any]]


def compiled_devices() -> list[str]:
    """The devices this build of the native module can open."""
    return list(NativeVecEnv.compiled_devices())


def _autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    if isinstance(mode, str):
        for candidate in AutoresetMode:
            if mode in (candidate.value, candidate.name, candidate.name.lower()):
                return candidate
    raise ValueError(
        "autoreset_mode: expected an AutoresetMode (NEXT_STEP, SAME_STEP, DISABLED) or its "
        f"name, got {mode!r}"
    )


def _cartpole_spaces(
    num_envs: int,
) -> tuple[spaces.Box, spaces.Discrete, spaces.Space[Any], spaces.Space[Any]]:
    """CartPole-v1's spaces exactly as gymnasium declares them, and their batched forms."""
    x_threshold = 2.4
    theta_threshold = 12 * 2 * np.pi / 360
    high = np.array([x_threshold * 2, np.inf, theta_threshold * 2, np.inf], dtype=np.float32)
    single_obs = spaces.Box(-high, high, dtype=np.float32)
    single_act = spaces.Discrete(2)
    return (
        single_obs,
        single_act,
        batch_space(single_obs, num_envs),
        batch_space(single_act, num_envs),
    )


class CartPoleVectorEnv(VectorEnv[ObsArray, ActArray, npt.NDArray[Any]]):
    """``num_envs`` CartPole-v1 envs stepped together on a cartfuse device.

    Args:
        num_envs: number of envs (at least 1).
        device: ``"cpu"`` (the native SIMD runtime), ``"wgpu"``, ``"cuda"`` or ``None``: a
            real GPU when CUDA (if built with it) or wgpu finds one, else the CPU.
        plan: how the step runs: ``"hand-written"`` (default: the fastest step on every
            device), ``"fused"``, ``"vertical"``, ``"horizontal"``, ``"eager"``,
            ``"xla-default"``.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default), ``SAME_STEP`` or ``DISABLED``.
        max_episode_steps: truncation limit (CartPole-v1: 500).
        render_mode: only ``None``.

    Seeds: ``reset(seed=s)`` gives env ``i`` the seed ``s + i``, a list gives each env its
    own, as gymnasium does. Env ``i``'s first episode depends on its own seed only; under
    ``NEXT_STEP``/``SAME_STEP`` the device's autoresets draw from one stream per env keyed by
    all seeds together (deterministic: the same seeds give the same episodes).
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 (gymnasium's attribute, copied per instance)
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int = 1,
        *,
        device: str | None = None,
        plan: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int = 500,
        render_mode: str | None = None,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise TypeError(f"num_envs: expected an int, got {type(num_envs).__name__}")
        if num_envs < 1:
            raise ValueError(f"num_envs: expected at least 1, got {num_envs}")
        if device is not None and not isinstance(device, str):
            raise TypeError(f"device: expected a str or None, got {type(device).__name__}")
        if device is not None and device not in DEVICES:
            raise ValueError(
                f"device: unknown device {device!r}: expected one of {DEVICES} or None"
            )
        if plan is not None and not isinstance(plan, str):
            raise TypeError(f"plan: expected a str or None, got {type(plan).__name__}")
        if isinstance(max_episode_steps, bool) or not isinstance(
            max_episode_steps, (int, np.integer)
        ):
            raise TypeError(
                f"max_episode_steps: expected an int, got {type(max_episode_steps).__name__}"
            )
        if not 1 <= max_episode_steps < 2**32:
            raise ValueError(
                f"max_episode_steps: expected an int in [1, 2**32), got {max_episode_steps}"
            )
        if render_mode is not None:
            raise ValueError(f"render_mode: cartfuse does not render, got {render_mode!r}")
        mode = _autoreset_mode(autoreset_mode)

        self._native = NativeVecEnv(
            int(num_envs),
            device=device,
            plan=plan,
            autoreset=_AUTORESET_NAMES[mode],
            max_episode_steps=int(max_episode_steps),
        )
        self.num_envs = int(num_envs)
        self.max_episode_steps = int(max_episode_steps)
        self.render_mode = None
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self._same_step = mode == AutoresetMode.SAME_STEP
        (
            self.single_observation_space,
            self.single_action_space,
            self.observation_space,
            self.action_space,
        ) = _cartpole_spaces(self.num_envs)

    @property
    def device(self) -> str:
        """The device the envs run on."""
        return str(self._native.device)

    @property
    def plan(self) -> str:
        """The step plan's name."""
        return str(self._native.plan)

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[ObsArray, dict[str, Any]]:
        """Resets every env (or those in ``options["reset_mask"]``, ``DISABLED`` mode only).

        ``seed``: ``None`` continues the random streams (from the OS the first time), an int
        ``s`` gives env ``i`` the seed ``s + i``, a list gives each env its own.
        """
        mask = None
        if options is not None:
            if not isinstance(options, dict):
                raise TypeError(f"options: expected a dict or None, got {type(options).__name__}")
            mask = options.get("reset_mask")
        obs = self._native.reset(seed, mask)
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            super().reset(seed=int(seed))  # seeds `self.np_random`, as gymnasium's envs do
        return obs, {}

    def step(
        self, actions: ActArray
    ) -> tuple[
        ObsArray,
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        dict[str, Any],
    ]:
        """Steps every env; ``actions`` is an integer array of shape ``(num_envs,)``."""
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        obs, reward, terminated, truncated, final_obs = self._native.step(actions)
        if not self._same_step:
            return obs, reward, terminated, truncated, {}
        done = terminated | truncated
        if not done.any():
            return obs, reward, terminated, truncated, {}
        # gymnasium's SyncVectorEnv: an object array of the final observations, None where
        # the episode did not end, an (empty) final_info, and a mask per key.
        ended = np.flatnonzero(done)
        final = np.full(self.num_envs, None, dtype=object)
        final[ended] = list(final_obs[ended])
        info: dict[str, Any] = {
            "final_obs": final,
            "_final_obs": done,
            "final_info": {},
            "_final_info": done.copy(),
        }
        return obs, reward, terminated, truncated, info

    def set_state(self, states: npt.ArrayLike) -> None:
        """Overwrites every env's state, float64 ``(num_envs, 4)`` in gymnasium's
        ``env.unwrapped.state`` order ``[x, x_dot, theta, theta_dot]``. Each env starts a new
        episode (step counter 0). The device stores float32."""
        array = np.asarray(states)
        if array.dtype.kind not in "fiu":
            raise TypeError(f"states: expected a float array, got dtype {array.dtype}")
        array = np.ascontiguousarray(array, dtype=np.float64)
        if array.shape != (self.num_envs, 4):
            raise ValueError(f"states: expected shape ({self.num_envs}, 4), got {array.shape}")
        if not np.isfinite(array).all():
            raise ValueError("states: every component must be finite")
        self._native.set_state(array)

    def get_state(self) -> npt.NDArray[np.float64]:
        """Every env's state, float64 ``(num_envs, 4)``, ``[x, x_dot, theta, theta_dot]``."""
        return self._native.get_state()

    def close_extras(self, **kwargs: Any) -> None:
        """Releases the device buffers."""
        self._native = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        mode = self.metadata["autoreset_mode"].name
        return (
            (
                f"CartPoleVectorEnv(num_envs={self.num_envs}, device={self.device!r}, "
                f"plan={self.plan!r}, autoreset_mode={mode})"
            )
            if not self.closed
            else "CartPoleVectorEnv(closed)"
        )
