"""gymnasium vector envs stepped by cartfuse's kernels.

The principal type is :class:`CartfuseVectorEnv`, a drop-in ``gymnasium.vector.VectorEnv``
for any environment the native module lists (:data:`ENV_IDS`), with that environment's
spaces as its Rust definition declares them, all three autoreset modes, gymnasium's seeding,
and numpy arrays out. Each step is one call into the native module, which validates the
actions and steps every env; on the CPU the step's worker threads write the outputs straight
into the numpy arrays it returns (nothing is copied afterwards).

Outputs follow gymnasium's ``copy`` convention: by default each step returns arrays of its
own; with ``copy=False`` every step returns the env's own output arrays, views that the next
step overwrites (zero-copy hand-off: ``torch.from_dlpack(obs)`` or ``jax.dlpack.from_dlpack``
of them share the env's memory). ``step_async``/``step_wait`` (EnvPool's ``send``/``recv``)
run the step on a background thread with the GIL released, so Python can compute the next
policy forward meanwhile.

Everything per environment (spaces, ``max_episode_steps``, ``render_fps``, constructor
arguments such as CartPole's ``sutton_barto_reward``, the options ``reset`` reads) comes from
the native module's :func:`env_info`: an id the Rust registry adds needs no change here.

Each environment also has a named subclass taking no ``env_id``, built from its id:
``CartPoleVectorEnv`` for ``CartPole-v1``, ``MountainCarVectorEnv`` for ``MountainCar-v0``,
``AcrobotVectorEnv``, ``MountainCarContinuousVectorEnv``, ``PendulumVectorEnv``, ... (one for
every id in :data:`ENV_IDS`, see :func:`vector_env_class`). They are what
``gym.make_vec("cartfuse/<id>", vectorization_mode="vector_entry_point")`` builds.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import numpy.typing as npt
from gymnasium import logger as gym_logger
from gymnasium.error import AlreadyPendingCallError, NoAsyncCallError
from gymnasium.vector import AutoresetMode, VectorEnv

from cartfuse import render
from cartfuse._catalog import (
    DEVICES,
    ENV_IDS,
    PLANS,
    ActArray,
    ObsArray,
    StepResult,
    batched_spaces,
    compiled_devices,
    env_info,
    single_spaces,
)
from cartfuse._closed import ClosedNative
from cartfuse._episode_ends import EpisodeEnds, same_step_info
from cartfuse._gym_args import (
    AUTORESET_NAMES,
    check_autoreset_mode,
    check_env_kwargs,
    check_vector_args,
    env_params,
    reset_bounds,
    reset_mask,
)
from cartfuse._named import named_class
from cartfuse._native import NativeVecEnv, NoPendingStepError, PendingStepError

#: Where cartfuse says why ``device=None`` chose the device it did (level INFO).
LOGGER = logging.getLogger("cartfuse")


class CartfuseVectorEnv(VectorEnv[ObsArray, ActArray, npt.NDArray[Any]]):
    """``num_envs`` envs of the environment ``env_id`` names, stepped together on a cartfuse
    device.

    Args:
        env_id: a gymnasium id from :data:`ENV_IDS`, e.g. ``"CartPole-v1"``.
        num_envs: number of envs (at least 1).
        device: ``"cpu"`` (the native SIMD runtime), ``"wgpu"``, ``"cuda"`` or ``None``: a
            real GPU when CUDA (if built with it) or wgpu finds one and the batch is large
            enough to gain from it, else the CPU. Why is logged (logger ``"cartfuse"``,
            level INFO) and kept in :attr:`device_reason`.
        plan: how the step runs: ``None`` (default: ``"hand-written"`` where the environment
            has a hand-written step, CartPole-v1 only, the fastest on every device; else
            ``"fused"``), ``"hand-written"``, ``"fused"``, ``"vertical"``, ``"horizontal"``,
            ``"eager"``, ``"xla-default"``.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default), ``SAME_STEP`` or ``DISABLED``.
        max_episode_steps: truncation limit, an int in ``[1, 2**32)``; ``None``: gymnasium's
            registered one (CartPole-v1: 500, MountainCar-v0: 200, ...).
        copy: ``True`` (default, gymnasium's convention): ``reset`` and every step return
            arrays of their own, which later steps leave alone. ``False``: they return the
            env's own output arrays (observations, rewards, terminated, truncated), the same
            arrays every time, valid until the next ``step``/``step_async``/``reset``, which
            overwrites them in place; a ``torch.from_dlpack``/``jax.dlpack.from_dlpack``/
            ``numpy.from_dlpack`` of them shares that memory and sees each new step. On
            ``device="cuda"``, ``False`` keeps the outputs on the GPU: ``reset`` and ``step``
            return :class:`cartfuse.DeviceArray` views of device memory (flags as int32 0
            or 1), which ``torch.from_dlpack``/``jax.dlpack.from_dlpack`` take without a
            copy, valid until the next step or reset (call ``from_dlpack`` on each step's);
            ``step`` also takes a CUDA tensor of actions (int32 for a discrete space,
            float32 for a ``Box``) in place. Each such step has finished on the GPU when it
            returns. ``NEXT_STEP`` autoreset only, no rendering.
        render_mode: ``None`` or ``"rgb_array"``: :meth:`render` returns a list of
            ``num_envs`` frames, as gymnasium's ``CartPoleVectorEnv`` does (gymnasium's
            vector ``HumanRendering`` wrapper shows them in a window).
        num_threads: at most this many CPU threads step these envs (``None``: every thread
            the process's pool has; the pool's size is the environment variable
            ``CARTFUSE_CPU_THREADS``, else every core the process may use).
        **env_kwargs: the constructor arguments of gymnasium's env of the same id
            (:func:`env_info` ``.kwargs``): CartPole-v1's ``sutton_barto_reward: bool =
            False``, Pendulum-v1's ``g: float = 10.0``, the mountain cars' ``goal_velocity:
            float = 0.0``; any other name is a ``TypeError``.

    Actions: discrete environments take an integer (or bool) array of shape ``(num_envs,)``
    with values in the action space; continuous ones (a ``Box`` action space of ``k`` values)
    take a float array of shape ``(num_envs, k)``, as ``action_space.sample()`` gives it, or
    ``(num_envs,)`` when ``k`` is 1. Any float dtype is converted to float32; NaN or infinite
    values raise ``ValueError``; values outside the box are clipped by the environment, as
    gymnasium's environments do.

    Async: ``step_async(actions)`` checks the actions (a bad call raises there and starts
    nothing), starts the step on the env's background thread with the GIL released and
    returns; ``step_wait()`` returns its outputs. Until then every other call that touches
    the envs raises ``gymnasium.error.AlreadyPendingCallError``; ``step_wait()`` with nothing
    in flight raises ``gymnasium.error.NoAsyncCallError``. ``send``/``recv`` are EnvPool's
    names for the same two calls. ``step`` is ``step_async`` then ``step_wait``, run on the
    calling thread.

    After ``close()`` every call raises ``gymnasium.error.ClosedEnvironmentError``.

    Seeds: ``reset(seed=s)`` gives env ``i`` the seed ``s + i``, a list gives each env its
    own, as gymnasium's ``SyncVectorEnv`` does. Each env's episodes, autoresets included,
    depend on its own seed and its own actions only, whatever the batch and the env's
    index: env ``i`` of a batch seeded ``s`` plays the same episodes as a one-env batch
    seeded ``s + i``. ``seed=None`` continues each env's own stream (from the OS on the
    first reset).

    Resets follow ``SyncVectorEnv``: ``options["reset_mask"]`` (popped from the caller's
    dict, as gymnasium does) resets only the envs it selects, in every autoreset mode; the
    others keep their state, step counts and pending autoresets, and their rows of the
    returned observations hold their current observations. The other options are those of
    gymnasium's env of the same id (``low``/``high``; Pendulum's ``x_init``/``y_init``),
    parsed by gymnasium's own helpers (see :func:`reset_bounds`), for this reset only:
    autoresets draw from the defaults, as ``SyncVectorEnv``'s do. Under ``DISABLED``,
    stepping while an env that ended has not been reset raises ``AssertionError``, as
    ``SyncVectorEnv`` does.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 (gymnasium's attribute, copied per instance)
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["rgb_array"],
    }

    def __init__(
        self,
        env_id: str,
        num_envs: int = 1,
        *,
        device: str | None = None,
        plan: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        copy: bool = True,
        render_mode: str | None = None,
        num_threads: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        info = env_info(env_id)
        num_envs, max_episode_steps, num_threads = check_vector_args(
            info,
            num_envs=num_envs,
            device=device,
            plan=plan,
            max_episode_steps=max_episode_steps,
            copy=copy,
            render_mode=render_mode,
            render_modes=type(self).metadata["render_modes"],
            num_threads=num_threads,
        )
        values = check_env_kwargs(info, env_kwargs, f"{type(self).__qualname__}.__init__")
        mode = check_autoreset_mode(autoreset_mode)

        self._native = NativeVecEnv(
            env_id,
            num_envs,
            device=device,
            plan=plan,
            autoreset=AUTORESET_NAMES[mode],
            max_episode_steps=max_episode_steps,
            copy=copy,
            params=env_params(info, values),
            num_threads=num_threads,
        )
        self._device_reason = self._native.device_reason
        if device is None and self._device_reason is not None:
            LOGGER.info(self._device_reason)
        # copy=False on CUDA: outputs stay on the device, as DLPack views.
        self._views = not copy and self._native.device == "cuda"
        if self._views and (mode != AutoresetMode.NEXT_STEP or render_mode is not None):
            self._native.close()
            raise ValueError(
                "copy: copy=False on cuda keeps the outputs on the device (DLPack views), "
                "which supports autoreset_mode=NEXT_STEP without render_mode; got "
                f"autoreset_mode={mode.name}, render_mode={render_mode!r} (use copy=True)"
            )
        self._views_pending: Any = None
        self.env_id = info.id
        self.copy = copy
        self.info = info
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        #: The environment's constructor arguments, every one (``env_kwargs``' defaults too).
        self.env_kwargs = values
        self.render_mode = render_mode
        self.metadata = {
            **type(self).metadata,
            "autoreset_mode": mode,
            "render_modes": list(type(self).metadata["render_modes"]),
            "render_fps": info.render_fps,
        }
        self._same_step = mode == AutoresetMode.SAME_STEP
        self._state_shape = (num_envs, len(info.state_names))
        self._was_reset = False
        self._ends = EpisodeEnds(num_envs, mode, rendering=render_mode is not None)
        (
            self.single_observation_space,
            self.single_action_space,
            self.observation_space,
            self.action_space,
        ) = batched_spaces(info, num_envs)

    @property
    def device(self) -> str:
        """The device the envs run on."""
        return str(self._native.device)

    @property
    def device_reason(self) -> str | None:
        """Why ``device=None`` chose :attr:`device` (``None`` when the device was named)."""
        return self._device_reason

    @property
    def plan(self) -> str:
        """The step plan's name."""
        return str(self._native.plan)

    @property
    def state_names(self) -> tuple[str, ...]:
        """The state components, in the order of gymnasium's ``env.unwrapped.state``."""
        return tuple(self.info.state_names)

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[ObsArray, dict[str, Any]]:
        """Resets every env, or those ``options["reset_mask"]`` selects, as gymnasium's
        ``SyncVectorEnv`` does (see the class).

        ``seed``: ``None`` continues each env's random stream (from the OS the first time),
        an int ``s`` gives env ``i`` the seed ``s + i``, a list gives each env its own.
        ``options``: ``reset_mask`` (popped from the dict, as gymnasium does), and the
        reset options of gymnasium's env of the same id (:func:`reset_bounds`).
        """
        self._check_idle("reset")
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options: expected a dict or None, got {type(options).__name__}")
        if isinstance(seed, (list, tuple)) and len(seed) != self.num_envs:
            raise ValueError(
                "If seeds are passed as a list the length must match "
                f"num_envs={self.num_envs} but got length={len(seed)}."
            )
        mask = None
        if options is not None and "reset_mask" in options:
            mask = reset_mask(options.pop("reset_mask"), self.num_envs)
        obs = self._reset(seed, mask, reset_bounds(self.info, options))
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            super().reset(seed=int(seed))  # seeds `self.np_random`, as gymnasium's envs do
        return obs, {}

    def _reset(
        self,
        seed: int | list[int | None] | None,
        mask: npt.NDArray[np.bool_] | None,
        bounds: list[tuple[float, float]] | None,
    ) -> ObsArray:
        """The native reset, and what this class keeps track of."""
        if self._views:
            # A DeviceArray view (copy=False on cuda), which the class's type parameter
            # cannot name, as in _step_views.
            obs = cast("ObsArray", self._native.reset_views(seed, mask, bounds))
        else:
            obs = self._native.reset(seed, mask, bounds)
        self._was_reset = True
        self._ends.reset(slice(None) if mask is None else mask)
        return obs

    def step(self, actions: ActArray) -> StepResult:
        """Steps every env; ``actions`` as the class documents (an integer array of shape
        ``(num_envs,)`` for a discrete action space, a float array of shape
        ``(num_envs, k)`` for a ``Box``; with ``copy=False`` on cuda, also a CUDA tensor)."""
        if self._views:
            self._check_idle("step")
            return self._step_views(actions)
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        self._check_not_ended()
        try:
            outputs = self._native.step(actions)
        except PendingStepError as error:
            raise AlreadyPendingCallError(str(error), "step") from None
        self._ends.started(actions)
        return self._result(*outputs)

    def step_async(self, actions: ActArray) -> None:
        """Starts a step with ``actions`` on the env's background thread (GIL released) and
        returns at once; :meth:`step_wait` returns its outputs. The actions are checked here:
        a bad call raises and starts nothing. (With ``copy=False`` on cuda the step runs in
        :meth:`step_wait`, on the calling thread.)"""
        if self._views:
            if self._views_pending is not None:
                raise AlreadyPendingCallError("step_async: a step is already pending", "step")
            self._check_idle("step_async")
            self._views_pending = actions
            return
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        self._check_not_ended()
        try:
            self._native.step_async(actions)
        except PendingStepError as error:
            raise AlreadyPendingCallError(str(error), "step") from None
        self._ends.started(actions)

    def step_wait(self) -> StepResult:
        """Waits for the step :meth:`step_async` started and returns its outputs, as
        :meth:`step` does."""
        if self._views:
            actions, self._views_pending = self._views_pending, None
            if actions is None:
                raise NoAsyncCallError("step_wait: no step_async() step is pending", "step")
            return self._step_views(actions)
        try:
            outputs = self._native.step_wait()
        except NoPendingStepError as error:
            raise NoAsyncCallError(str(error), "step") from None
        return self._result(*outputs)

    #: EnvPool's name of :meth:`step_async`.
    send = step_async
    #: EnvPool's name of :meth:`step_wait`.
    recv = step_wait

    def _step_views(self, actions: Any) -> StepResult:
        """A step whose outputs stay on the device: :class:`DeviceArray` views that
        ``torch.from_dlpack`` and ``jax.dlpack.from_dlpack`` take in place."""
        on_cuda = hasattr(actions, "__dlpack_device__") and actions.__dlpack_device__()[0] == 2
        if not on_cuda and type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        obs, reward, terminated, truncated = self._native.step_views(actions)
        return cast("StepResult", (obs, reward, terminated, truncated, {}))

    def _check_not_ended(self) -> None:
        """``DISABLED``: no env that ended is stepped before it is reset; a step in flight
        comes first (the native call refuses this one)."""
        if not self._native.pending:
            self._ends.check_steppable()

    def _result(
        self,
        obs: ObsArray,
        reward: npt.NDArray[np.float32],
        terminated: npt.NDArray[np.bool_],
        truncated: npt.NDArray[np.bool_],
        final_obs: ObsArray | None,
    ) -> StepResult:
        """A step's outputs as gymnasium returns them (``SAME_STEP``: the final observations
        in ``info``)."""
        self._ends.stepped(terminated, truncated)
        info = same_step_info(terminated, truncated, final_obs) if self._same_step else {}
        return obs, reward, terminated, truncated, info

    def render(self) -> list[npt.NDArray[np.uint8]] | None:  # type: ignore[override]
        """``render_mode="rgb_array"``: the frame of every env, a list of ``num_envs``
        ``(height, width, 3)`` uint8 arrays in gymnasium's size and layout (gymnasium's
        ``CartPoleVectorEnv.render`` returns such a list). ``render_mode=None``: warns, as
        gymnasium does, and returns ``None``. Before the first reset: ``ValueError``."""
        if self.render_mode is None:
            spec_id = self.spec.id if self.spec is not None else f"cartfuse/{self.env_id}"
            gym_logger.warn(
                "You are calling render method without specifying any render mode. "
                "You can specify the render_mode at initialization, "
                f'e.g. gym.make_vec("{spec_id}", render_mode="rgb_array")'
            )
            return None
        if not self._was_reset:
            raise ValueError(
                f"render: the {self.env_id} envs' state is None: they have not been reset "
                "yet (call reset() first)"
            )
        states = self.get_state()
        return [
            render.frame(self.env_id, state, self._ends.last_action(i))
            for i, state in enumerate(states)
        ]

    def set_state(self, states: npt.ArrayLike) -> None:
        """Overwrites every env's state, float64 ``(num_envs, state_dim)`` in gymnasium's
        ``env.unwrapped.state`` order (:attr:`state_names`). Each env starts a new episode
        (step counter 0, no pending autoreset). The device stores float32."""
        self._check_idle("set_state")
        array = np.asarray(states)
        if array.dtype.kind not in "fiu":
            raise TypeError(f"states: expected a float array, got dtype {array.dtype}")
        array = np.ascontiguousarray(array, dtype=np.float64)
        if array.shape != self._state_shape:
            raise ValueError(f"states: expected shape {self._state_shape}, got {array.shape}")
        if not np.isfinite(array).all():
            raise ValueError("states: every component must be finite")
        self._native.set_state(array)
        self._was_reset = True
        self._ends.state_set()

    def get_state(self) -> npt.NDArray[np.float64]:
        """Every env's state, float64 ``(num_envs, state_dim)`` (:attr:`state_names`)."""
        self._check_idle("get_state")
        return self._native.get_state()

    def _check_idle(self, name: str) -> None:
        if self._native.pending:
            raise AlreadyPendingCallError(
                f"{name}: a step_async() step is in flight: call step_wait() first", "step"
            )

    def close_extras(self, **kwargs: Any) -> None:
        """Waits for a step in flight, then releases the device buffers; every later call
        raises ``gymnasium.error.ClosedEnvironmentError``."""
        self._native.close()
        self._native = ClosedNative(type(self).__name__)  # type: ignore[assignment]

    def __repr__(self) -> str:
        name = type(self).__name__
        if self.closed:
            return f"{name}(closed)"
        if "env_id" not in self.__dict__:  # refused while it was built (seen in tracebacks)
            return f"{name}(not built)"
        mode = self.metadata["autoreset_mode"].name
        env_id = "" if isinstance(self, _NamedVectorEnv) else f"{self.env_id!r}, "
        return (
            f"{name}({env_id}num_envs={self.num_envs}, device={self.device!r}, "
            f"plan={self.plan!r}, autoreset_mode={mode})"
        )


class _NamedVectorEnv(CartfuseVectorEnv):
    """A :class:`CartfuseVectorEnv` of the one environment :attr:`ENV_ID` names."""

    ENV_ID: ClassVar[str]

    def __init__(
        self,
        num_envs: int = 1,
        *,
        device: str | None = None,
        plan: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        copy: bool = True,
        render_mode: str | None = None,
        num_threads: int | None = None,
        **env_kwargs: Any,
    ) -> None:
        super().__init__(
            self.ENV_ID,
            num_envs,
            device=device,
            plan=plan,
            autoreset_mode=autoreset_mode,
            max_episode_steps=max_episode_steps,
            copy=copy,
            render_mode=render_mode,
            num_threads=num_threads,
            **env_kwargs,
        )


_CLASSES: dict[str, type[CartfuseVectorEnv]] = {}


def vector_env_class(env_id: str) -> type[CartfuseVectorEnv]:
    """The named vector env class of ``env_id`` (``CartPoleVectorEnv`` for
    ``"CartPole-v1"``), whose constructor takes :class:`CartfuseVectorEnv`'s arguments but
    ``env_id``."""
    if env_id not in _CLASSES:
        doc = (
            f"``num_envs`` {env_id} envs stepped together on a cartfuse device: "
            f"``CartfuseVectorEnv({env_id!r}, num_envs, ...)``."
        )
        _CLASSES[env_id] = named_class(
            _NamedVectorEnv, env_info(env_id), "VectorEnv", doc, __name__
        )
    return _CLASSES[env_id]


# One named class per environment, as module attributes (`cartfuse.vector.CartPoleVectorEnv`).
for _env_id in ENV_IDS:
    globals()[vector_env_class(_env_id).__name__] = vector_env_class(_env_id)

if TYPE_CHECKING:
    # The named classes of the environments cartfuse has; each exists at run time when the
    # native module lists its id.
    class CartPoleVectorEnv(_NamedVectorEnv): ...

    class MountainCarVectorEnv(_NamedVectorEnv): ...

    class AcrobotVectorEnv(_NamedVectorEnv): ...

    class MountainCarContinuousVectorEnv(_NamedVectorEnv): ...

    class PendulumVectorEnv(_NamedVectorEnv): ...


__all__ = [
    "DEVICES",
    "ENV_IDS",
    "PLANS",
    "CartfuseVectorEnv",
    "compiled_devices",
    "env_info",
    "single_spaces",
    "vector_env_class",
    *(vector_env_class(env_id).__name__ for env_id in ENV_IDS),
]
