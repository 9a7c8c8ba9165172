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

Each environment also has a named subclass taking no ``env_id``, built from its id:
``CartPoleVectorEnv`` for ``CartPole-v1``, ``MountainCarVectorEnv`` for ``MountainCar-v0``,
``AcrobotVectorEnv``, ``MountainCarContinuousVectorEnv``, ``PendulumVectorEnv``, ... (one for
every id in :data:`ENV_IDS`, see :func:`vector_env_class`). They are what
``gym.make_vec("cartfuse/<id>", vectorization_mode="vector_entry_point")`` builds.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.error import AlreadyPendingCallError, NoAsyncCallError
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from cartfuse import _native
from cartfuse._closed import ClosedNative
from cartfuse._native import NativeVecEnv, NoPendingStepError, PendingStepError

#: Every device name the constructor knows (``None`` picks one automatically).
DEVICES: tuple[str, ...] = ("cpu", "wgpu", "cuda")
#: Plan names ``plan=`` accepts (``"hand-written"`` only where the environment has one).
PLANS: tuple[str, ...] = tuple(NativeVecEnv.plans())
#: gymnasium ids of every environment this build of the native module has.
ENV_IDS: tuple[str, ...] = tuple(_native.env_ids())

_AUTORESET_NAMES = {
    AutoresetMode.NEXT_STEP: "next_step",
    AutoresetMode.SAME_STEP: "same_step",
    AutoresetMode.DISABLED: "disabled",
}

ObsArray = npt.NDArray[np.float32]
ActArray = npt.NDArray[Any]
Spaces = tuple[spaces.Box, spaces.Space[Any], spaces.Space[Any], spaces.Space[Any]]
StepResult = tuple[
    ObsArray,
    npt.NDArray[np.float32],
    npt.NDArray[np.bool_],
    npt.NDArray[np.bool_],
    dict[str, Any],
]


def compiled_devices() -> list[str]:
    """The devices this build of the native module can open."""
    return list(NativeVecEnv.compiled_devices())


def env_info(env_id: str) -> _native.EnvInfo:
    """The environment ``env_id`` names, as its Rust definition declares it (spaces, state
    names, ``max_episode_steps``). ``ValueError`` for an id not in :data:`ENV_IDS`."""
    if not isinstance(env_id, str):
        raise TypeError(f"env_id: expected a str, got {type(env_id).__name__}")
    return _native.env_info(env_id)


def single_spaces(info: _native.EnvInfo) -> tuple[spaces.Box, spaces.Space[Any]]:
    """The observation and action spaces of one env, built from ``info``."""
    obs = spaces.Box(
        np.array(info.observation_low, dtype=np.float32),
        np.array(info.observation_high, dtype=np.float32),
        shape=tuple(info.observation_shape),
        dtype=np.float32,
    )
    action: spaces.Space[Any]
    if info.action_kind == "discrete":
        assert info.action_n is not None
        action = spaces.Discrete(info.action_n)
    else:
        assert info.action_low is not None
        assert info.action_high is not None
        action = spaces.Box(
            np.array(info.action_low, dtype=np.float32),
            np.array(info.action_high, dtype=np.float32),
            shape=tuple(info.action_shape),
            dtype=np.float32,
        )
    return obs, action


def _spaces(info: _native.EnvInfo, num_envs: int) -> Spaces:
    """The single spaces and their batched forms."""
    obs, action = single_spaces(info)
    return obs, action, batch_space(obs, num_envs), batch_space(action, num_envs)


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


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    return int(value)


class CartfuseVectorEnv(VectorEnv[ObsArray, ActArray, npt.NDArray[Any]]):
    """``num_envs`` envs of the environment ``env_id`` names, stepped together on a cartfuse
    device.

    Args:
        env_id: a gymnasium id from :data:`ENV_IDS`, e.g. ``"CartPole-v1"``.
        num_envs: number of envs (at least 1).
        device: ``"cpu"`` (the native SIMD runtime), ``"wgpu"``, ``"cuda"`` or ``None``: a
            real GPU when CUDA (if built with it) or wgpu finds one, else the CPU.
        plan: how the step runs: ``None`` (default: ``"hand-written"`` where the environment
            has a hand-written step, CartPole-v1 only, the fastest on every device; else
            ``"fused"``), ``"hand-written"``, ``"fused"``, ``"vertical"``, ``"horizontal"``,
            ``"eager"``, ``"xla-default"``.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default), ``SAME_STEP`` or ``DISABLED``.
        max_episode_steps: truncation limit; ``None``: gymnasium's registered one
            (CartPole-v1: 500, MountainCar-v0: 200, ...).
        copy: ``True`` (default, gymnasium's convention): ``reset`` and every step return
            arrays of their own, which later steps leave alone. ``False``: they return the
            env's own output arrays (observations, rewards, terminated, truncated), the same
            arrays every time, valid until the next ``step``/``step_async``/``reset``, which
            overwrites them in place; a ``torch.from_dlpack``/``jax.dlpack.from_dlpack``/
            ``numpy.from_dlpack`` of them shares that memory and sees each new step.
        render_mode: only ``None``.

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
        env_id: str,
        num_envs: int = 1,
        *,
        device: str | None = None,
        plan: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        copy: bool = True,
        render_mode: str | None = None,
    ) -> None:
        info = env_info(env_id)
        num_envs = _check_int("num_envs", num_envs)
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
        if max_episode_steps is None:
            max_episode_steps = info.max_episode_steps
        max_episode_steps = _check_int("max_episode_steps", max_episode_steps)
        if not 1 <= max_episode_steps < 2**32:
            raise ValueError(
                f"max_episode_steps: expected an int in [1, 2**32), got {max_episode_steps}"
            )
        if not isinstance(copy, bool):
            raise TypeError(f"copy: expected a bool, got {type(copy).__name__}")
        if render_mode is not None:
            raise ValueError(
                f"render_mode: a vector env does not render, got {render_mode!r} (the single "
                "env of gym.make renders rgb_array and human)"
            )
        mode = _autoreset_mode(autoreset_mode)

        self._native = NativeVecEnv(
            env_id,
            num_envs,
            device=device,
            plan=plan,
            autoreset=_AUTORESET_NAMES[mode],
            max_episode_steps=max_episode_steps,
            copy=copy,
        )
        self.env_id = info.id
        self.copy = copy
        self.info = info
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        self.render_mode = None
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self._same_step = mode == AutoresetMode.SAME_STEP
        self._state_shape = (num_envs, len(info.state_names))
        (
            self.single_observation_space,
            self.single_action_space,
            self.observation_space,
            self.action_space,
        ) = _spaces(info, num_envs)

    @property
    def device(self) -> str:
        """The device the envs run on."""
        return str(self._native.device)

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
        """Resets every env (or those in ``options["reset_mask"]``, ``DISABLED`` mode only).

        ``seed``: ``None`` continues the random streams (from the OS the first time), an int
        ``s`` gives env ``i`` the seed ``s + i``, a list gives each env its own.
        """
        mask = None
        if options is not None:
            if not isinstance(options, dict):
                raise TypeError(f"options: expected a dict or None, got {type(options).__name__}")
            mask = options.get("reset_mask")
        self._check_idle("reset")
        obs = self._native.reset(seed, mask)
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            super().reset(seed=int(seed))  # seeds `self.np_random`, as gymnasium's envs do
        return obs, {}

    def step(self, actions: ActArray) -> StepResult:
        """Steps every env; ``actions`` as the class documents (an integer array of shape
        ``(num_envs,)`` for a discrete action space, a float array of shape
        ``(num_envs, k)`` for a ``Box``)."""
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        try:
            outputs = self._native.step(actions)
        except PendingStepError as error:
            raise AlreadyPendingCallError(str(error), "step") from None
        return self._result(*outputs)

    def step_async(self, actions: ActArray) -> None:
        """Starts a step with ``actions`` on the env's background thread (GIL released) and
        returns at once; :meth:`step_wait` returns its outputs. The actions are checked here:
        a bad call raises and starts nothing."""
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        try:
            self._native.step_async(actions)
        except PendingStepError as error:
            raise AlreadyPendingCallError(str(error), "step") from None

    def step_wait(self) -> StepResult:
        """Waits for the step :meth:`step_async` started and returns its outputs, as
        :meth:`step` does."""
        try:
            outputs = self._native.step_wait()
        except NoPendingStepError as error:
            raise NoAsyncCallError(str(error), "step") from None
        return self._result(*outputs)

    #: EnvPool's name of :meth:`step_async`.
    send = step_async
    #: EnvPool's name of :meth:`step_wait`.
    recv = step_wait

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
        if not self._same_step:
            return obs, reward, terminated, truncated, {}
        done = terminated | truncated
        if not done.any():
            return obs, reward, terminated, truncated, {}
        # gymnasium's SyncVectorEnv: an object array of the final observations, None where
        # the episode did not end, an (empty) final_info, and a mask per key.
        assert final_obs is not None
        ended = np.flatnonzero(done)
        final = np.full(self.num_envs, None, dtype=object)
        final[ended] = list(final_obs[ended])  # fancy indexing copies the rows
        info: dict[str, Any] = {
            "final_obs": final,
            "_final_obs": done,
            "final_info": {},
            "_final_info": done.copy(),
        }
        return obs, reward, terminated, truncated, info

    def set_state(self, states: npt.ArrayLike) -> None:
        """Overwrites every env's state, float64 ``(num_envs, state_dim)`` in gymnasium's
        ``env.unwrapped.state`` order (:attr:`state_names`). Each env starts a new episode
        (step counter 0). The device stores float32."""
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
        )


def class_stem(env_id: str) -> str:
    """The class-name stem of an id: ``"MountainCarContinuous-v0"`` ->
    ``"MountainCarContinuous"``."""
    return re.sub(r"\W", "", re.sub(r"-v\d+$", "", env_id))


_Named = TypeVar("_Named")


def named_class(
    base: type[_Named], env_id: str, suffix: str, doc: str, module: str
) -> type[_Named]:
    """A subclass of ``base`` named after ``env_id`` (``CartPole`` + ``suffix``) with
    ``ENV_ID`` set, defined in ``module``."""
    info = env_info(env_id)
    name = f"{class_stem(info.id)}{suffix}"
    attributes = {"ENV_ID": info.id, "__module__": module, "__qualname__": name, "__doc__": doc}
    return cast("type[_Named]", type(name, (base,), attributes))


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
        _CLASSES[env_id] = named_class(_NamedVectorEnv, env_id, "VectorEnv", doc, __name__)
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
