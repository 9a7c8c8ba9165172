"""A single CartPole-v1 ``gymnasium.Env`` over a one-env :class:`CartPoleVectorEnv`.

It exists so ``gym.make("cartfuse/CartPole-v1")`` works; batches belong in the vector env.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import Env, spaces
from gymnasium.vector import AutoresetMode

from cartfuse.vector import CartPoleVectorEnv

__all__ = ["CartPoleEnv"]


class CartPoleEnv(Env[npt.NDArray[np.float32], np.int64]):
    """CartPole-v1 (gymnasium's spaces, rewards and episode ends), one env on a cartfuse
    device. Arguments as :class:`CartPoleVectorEnv`; it never resets on its own."""

    metadata: dict[str, Any] = {"render_modes": [], "render_fps": 50}  # noqa: RUF012

    def __init__(
        self,
        *,
        device: str | None = None,
        plan: str | None = None,
        max_episode_steps: int = 500,
        render_mode: str | None = None,
    ) -> None:
        self._vec = CartPoleVectorEnv(
            1,
            device=device,
            plan=plan,
            autoreset_mode=AutoresetMode.DISABLED,
            max_episode_steps=max_episode_steps,
            render_mode=render_mode,
        )
        self.observation_space: spaces.Box = self._vec.single_observation_space  # type: ignore[assignment]
        self.action_space: spaces.Discrete = self._vec.single_action_space  # type: ignore[assignment]
        self.render_mode = None
        self._actions = np.zeros(1, dtype=np.int64)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        """Starts a new episode; ``seed`` restarts the reset stream."""
        super().reset(seed=seed)
        obs, _ = self._vec.reset(seed=seed)
        return obs[0], {}

    def step(
        self, action: np.int64 | int
    ) -> tuple[npt.NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """One step; ``action`` is 0 (push left) or 1 (push right)."""
        if not self.action_space.contains(action):
            raise ValueError(f"action: expected 0 or 1, got {action!r}")
        self._actions[0] = action
        obs, reward, terminated, truncated, _ = self._vec.step(self._actions)
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), {}

    @property
    def state(self) -> npt.NDArray[np.float64]:
        """``[x, x_dot, theta, theta_dot]`` (float64, stored as float32 on the device)."""
        return self._vec.get_state()[0]

    @state.setter
    def state(self, value: npt.ArrayLike) -> None:
        self._vec.set_state(np.asarray(value, dtype=np.float64).reshape(1, 4))

    def close(self) -> None:
        """Releases the device buffers."""
        self._vec.close()
