"""A single ``gymnasium.Env`` over a one-env :class:`~cartfuse.vector.CartfuseVectorEnv`.

It exists so ``gym.make("cartfuse/<id>")`` works; batches belong in the vector env. Each
environment has a named subclass (``CartPoleEnv``, ``MountainCarEnv``, ...; see
:func:`env_class`), the entry point gymnasium's registration names. A step is one call into
the native module on the calling thread. ``render_mode="rgb_array"`` draws gymnasium's frames
with numpy (:mod:`cartfuse.render`); ``"human"`` shows them with pygame.

Like gymnasium's classic-control envs, the env never truncates by itself: ``gym.make``'s
``TimeLimit`` wrapper does (``max_episode_steps=N`` overrides the registered limit, ``-1``
removes it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import Env, logger, spaces
from gymnasium.vector import AutoresetMode

from cartfuse import render
from cartfuse._gym_args import check_env_kwargs, reset_bounds
from cartfuse._named import named_class
from cartfuse.vector import ENV_IDS, CartfuseVectorEnv, env_info

__all__ = ["CartfuseEnv", "env_class"]

#: ``max_episode_steps`` of the vector env under a single env given none: no limit of its
#: own (2**32 - 1 steps), so that gymnasium's ``TimeLimit`` decides, as for its own envs.
UNLIMITED = 2**32 - 1

#: What gymnasium's CartPoleEnv warns, once, when stepped after it terminated.
_STEP_AFTER_TERMINATED = (
    "You are calling 'step()' even though this environment has already returned terminated "
    "= True. You should always call 'reset()' once you receive 'terminated = True' -- any "
    "further steps are undefined behavior."
)


class CartfuseEnv(Env[npt.NDArray[np.float32], Any]):
    """One env of the environment ``env_id`` names (gymnasium's spaces, rewards and episode
    ends) on a cartfuse device. Arguments as :class:`~cartfuse.vector.CartfuseVectorEnv`
    (``device``, ``plan``, ``num_threads`` and the environment's own keyword arguments,
    e.g. ``sutton_barto_reward``, ``g``, ``goal_velocity``), and:

    - ``max_episode_steps``: ``None`` (default): the env never truncates by itself, as
      gymnasium's envs do (``gym.make`` adds a ``TimeLimit``); an int: it truncates after
      that many steps.
    - ``render_mode``: ``None``, ``"rgb_array"`` (``render()`` returns gymnasium's frame of
      the current state, drawn with numpy) or ``"human"`` (a pygame window, updated every
      step).

    It never resets on its own. ``reset(options=...)`` takes the options of gymnasium's env
    of the same id (``low``/``high``, Pendulum's ``x_init``/``y_init``; see
    :func:`~cartfuse._gym_args.reset_bounds`). CartPole stepped after it terminated returns
    reward 0.0 (-1.0 with ``sutton_barto_reward``) and warns once, as gymnasium's does."""

    metadata: dict[str, Any] = {"render_modes": ["human", "rgb_array"]}  # noqa: RUF012

    def __init__(
        self,
        env_id: str,
        *,
        device: str | None = None,
        plan: str | None = None,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        num_threads: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        if render_mode not in (None, *type(self).metadata["render_modes"]):
            raise ValueError(
                f"render_mode: expected None, 'rgb_array' or 'human', got {render_mode!r}"
            )
        info = env_info(env_id)
        values = check_env_kwargs(info, env_kwargs, f"{type(self).__qualname__}.__init__")
        passed: dict[str, Any] = dict(values)  # the environment's own keyword arguments
        self._vec = CartfuseVectorEnv(
            env_id,
            1,
            device=device,
            plan=plan,
            autoreset_mode=AutoresetMode.DISABLED,
            max_episode_steps=UNLIMITED if max_episode_steps is None else max_episode_steps,
            num_threads=num_threads,
            **passed,
        )
        self.observation_space: spaces.Box = self._vec.single_observation_space  # type: ignore[assignment]
        self.action_space: spaces.Space[Any] = self._vec.single_action_space
        self.render_mode = render_mode
        self.metadata = {
            "render_modes": list(type(self).metadata["render_modes"]),
            "render_fps": info.render_fps,
        }
        #: The environment's constructor arguments, every one (defaults too).
        self.env_kwargs = values
        self._last_action: Any = None
        self._window: render.Window | None = None
        # gymnasium's CartPoleEnv alone counts steps after termination (reward 0, a warning).
        self._counts_steps_beyond = info.id.startswith("CartPole-")
        self._reward_beyond = -1.0 if values.get("sutton_barto_reward") else 0.0
        self._steps_beyond_terminated: int | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        """Starts a new episode; ``seed`` restarts the reset stream, ``options`` are those
        of gymnasium's env of the same id (``low``/``high``, ``x_init``/``y_init``)."""
        # Checked before anything is reset, as the vector env's are (gymnasium's seeding
        # would raise its own `gymnasium.error.Error`, neither a TypeError nor a ValueError).
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"seed: expected None or an int, got {type(seed).__name__}")
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options: expected a dict or None, got {type(options).__name__}")
        bounds = reset_bounds(self._vec.info, options)
        self._vec._check_idle("reset")
        obs = self._vec._reset(seed, None, bounds)  # refuses a seed outside [0, 2**64)
        if seed is not None:
            super().reset(seed=int(seed))  # seeds `self.np_random`, as gymnasium's envs do
        self._last_action = None
        self._steps_beyond_terminated = None
        if self.render_mode == "human":
            self.render()
        return obs[0], {}

    def step(
        self, action: Any
    ) -> tuple[npt.NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """One step: ``action`` is an int in the ``Discrete`` action space, or a float array
        of the ``Box`` action space's shape (values outside it are clipped)."""
        obs, reward, terminated, truncated = self._vec._native.step_one(action)
        reward = float(reward)
        if terminated and self._counts_steps_beyond:
            # gymnasium's CartPoleEnv.step: the first terminated step is rewarded as usual,
            # later ones (no reset in between) are not, with one warning.
            if self._steps_beyond_terminated is None:
                self._steps_beyond_terminated = 0
            else:
                if self._steps_beyond_terminated == 0:
                    logger.warn(_STEP_AFTER_TERMINATED)
                self._steps_beyond_terminated += 1
                reward = self._reward_beyond
        if self.render_mode is not None:
            self._last_action = action
            if self.render_mode == "human":
                self.render()
        return obs, reward, terminated, truncated, {}

    def render(self) -> npt.NDArray[np.uint8] | None:
        """``rgb_array``: the frame of the current state, ``(height, width, 3)`` uint8 in
        gymnasium's size and layout; ``human``: shows it (pygame) and returns ``None``."""
        if self.render_mode is None:
            return None
        picture = render.frame(self._vec.env_id, self.state, self._last_action)
        if self.render_mode == "rgb_array":
            return picture
        if self._window is None:
            self._window = render.Window(self._vec.env_id, self.metadata["render_fps"])
        self._window.show(picture)
        return None

    @property
    def state(self) -> npt.NDArray[np.float64]:
        """The state in gymnasium's ``env.unwrapped.state`` order (float64, stored as float32
        on the device)."""
        state: npt.NDArray[np.float64] = self._vec.get_state()[0]
        return state

    @state.setter
    def state(self, value: npt.ArrayLike) -> None:
        self._vec.set_state(np.asarray(value, dtype=np.float64).reshape(self._vec._state_shape))

    def close(self) -> None:
        """Releases the device buffers (and closes the window); every later call raises
        ``gymnasium.error.ClosedEnvironmentError``."""
        if self._window is not None:
            self._window.close()
            self._window = None
        self._vec.close()


class _NamedEnv(CartfuseEnv):
    """A :class:`CartfuseEnv` of the one environment :attr:`ENV_ID` names."""

    ENV_ID: ClassVar[str]

    def __init__(
        self,
        *,
        device: str | None = None,
        plan: str | None = None,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        num_threads: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        super().__init__(
            self.ENV_ID,
            device=device,
            plan=plan,
            max_episode_steps=max_episode_steps,
            render_mode=render_mode,
            num_threads=num_threads,
            **env_kwargs,
        )


_CLASSES: dict[str, type[CartfuseEnv]] = {}


def env_class(env_id: str) -> type[CartfuseEnv]:
    """The named single-env class of ``env_id`` (``CartPoleEnv`` for ``"CartPole-v1"``),
    whose constructor takes :class:`CartfuseEnv`'s arguments but ``env_id``."""
    if env_id not in _CLASSES:
        doc = f"One {env_id} env on a cartfuse device: ``CartfuseEnv({env_id!r}, ...)``."
        _CLASSES[env_id] = named_class(_NamedEnv, env_info(env_id), "Env", doc, __name__)
    return _CLASSES[env_id]


for _env_id in ENV_IDS:
    globals()[env_class(_env_id).__name__] = env_class(_env_id)

if TYPE_CHECKING:
    # The named classes of the environments cartfuse has; each exists at run time when the
    # native module lists its id.
    class CartPoleEnv(_NamedEnv): ...

    class MountainCarEnv(_NamedEnv): ...

    class AcrobotEnv(_NamedEnv): ...

    class MountainCarContinuousEnv(_NamedEnv): ...

    class PendulumEnv(_NamedEnv): ...


__all__ += [env_class(env_id).__name__ for env_id in ENV_IDS]
