"""gymnasium's arguments, checked as gymnasium checks them: the constructor arguments an
environment declares (CartPole's ``sutton_barto_reward``, Pendulum's ``g``), the bounds
``reset(options=...)`` reads, ``options["reset_mask"]``, ``autoreset_mode`` and a vector
env's own arguments (``num_envs``, ``device``, ...). Everything per environment
comes from the native module's ``EnvInfo``."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.envs.classic_control.utils import maybe_parse_reset_bounds, verify_number_and_cast
from gymnasium.vector import AutoresetMode

from cartfuse import _native
from cartfuse._catalog import DEVICES


def check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    return int(value)


def check_vector_args(
    info: _native.EnvInfo,
    *,
    num_envs: object,
    device: object,
    plan: object,
    max_episode_steps: object,
    copy: object,
    render_mode: object,
    render_modes: Sequence[str],
    num_threads: object,
) -> tuple[int, int, int | None]:
    """A vector env's own constructor arguments checked (``TypeError``/``ValueError`` naming
    the argument): ``num_envs``, ``max_episode_steps`` (``None``: ``info``'s) and
    ``num_threads`` as ints."""
    num_envs = check_int("num_envs", num_envs)
    if not 1 <= num_envs < 2**64:  # a device's own limit is checked when it is opened
        raise ValueError(f"num_envs: expected an int in [1, 2**64), got {num_envs}")
    if device is not None and not isinstance(device, str):
        raise TypeError(f"device: expected a str or None, got {type(device).__name__}")
    if device is not None and device not in DEVICES:
        raise ValueError(f"device: unknown device {device!r}: expected one of {DEVICES} or None")
    if plan is not None and not isinstance(plan, str):
        raise TypeError(f"plan: expected a str or None, got {type(plan).__name__}")
    if max_episode_steps is None:
        max_episode_steps = info.max_episode_steps
    max_episode_steps = check_int("max_episode_steps", max_episode_steps)
    if not 1 <= max_episode_steps < 2**32:
        raise ValueError(
            f"max_episode_steps: expected an int in [1, 2**32), got {max_episode_steps}"
        )
    if not isinstance(copy, bool):
        raise TypeError(f"copy: expected a bool, got {type(copy).__name__}")
    if render_mode is not None and render_mode not in render_modes:
        raise ValueError(
            f"render_mode: expected None or 'rgb_array', got {render_mode!r} (a vector "
            "env's frames are a list of num_envs arrays; gymnasium's vector "
            "HumanRendering wrapper shows them)"
        )
    if num_threads is not None:
        num_threads = check_int("num_threads", num_threads)
        if not 1 <= num_threads < 2**64:
            raise ValueError(
                "num_threads: expected an int in [1, 2**64) (more than the pool's threads: "
                f"the whole pool; None: every thread), got {num_threads}"
            )
    return num_envs, max_episode_steps, num_threads


def check_env_kwargs(
    info: _native.EnvInfo, given: Mapping[str, object], owner: str
) -> dict[str, bool | float]:
    """The constructor arguments of ``info``'s environment (gymnasium's, e.g. CartPole's
    ``sutton_barto_reward``, Pendulum's ``g``), every one of them: ``given`` checked, the
    others at their defaults. A name the environment does not take raises ``TypeError`` as
    Python does for ``owner`` (``"CartPoleEnv.__init__"``); a bool argument takes a bool
    (``TypeError``), a float one a finite real number (``TypeError``, ``ValueError``)."""
    declared = {name: (kind, default) for name, kind, default in info.kwargs}
    for name in given:
        if name not in declared:
            raise TypeError(f"{owner}() got an unexpected keyword argument {name!r}")
    values: dict[str, bool | float] = {}
    for name, (kind, default) in declared.items():
        value = given.get(name, bool(default) if kind == "bool" else float(default))
        if kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")
            values[name] = bool(value)
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{name}: expected a finite number, got {number}")
        values[name] = number
    return values


def env_params(
    info: _native.EnvInfo, values: Mapping[str, bool | float]
) -> dict[str, float] | None:
    """The native module's ``params``: the values that differ from the environment's
    defaults (the others are the native defaults already), each a float (a bool as 1.0 or
    0.0); ``None`` when there are none."""
    defaults = {name: default for name, _, default in info.kwargs}
    params = {name: float(value) for name, value in values.items()}
    return {name: v for name, v in params.items() if v != defaults[name]} or None


def reset_bounds(
    info: _native.EnvInfo, options: Mapping[str, Any] | None
) -> list[tuple[float, float]] | None:
    """The ``(low, high)`` bounds of each drawn state component that ``reset(options=...)``
    of gymnasium's env of the same id would draw from, or ``None`` (the defaults) when
    ``options`` names none of its options. Parsed by gymnasium's own helpers, so a bad
    value raises gymnasium's ``ValueError``:

    - ``low``/``high`` (CartPole, Acrobot, the mountain cars' position):
      ``maybe_parse_reset_bounds`` with the environment's defaults, for every drawn component;
    - one symmetric option per drawn component (Pendulum's ``x_init``, ``y_init``): the
      component is drawn from ``[-v, v]``; a negative ``v`` raises ``ValueError``, as
      numpy's draw ``uniform(-v, v)`` does in gymnasium (``high - low < 0``).

    gymnasium's parsing lets NaN and infinite bounds through (numpy's draw then fails or the
    env holds a non-finite state); cartfuse's states are finite, so those raise
    ``ValueError`` naming the option."""
    names = list(info.reset_option_names)
    if options is None or not any(name in options for name in names):
        return None
    defaults = list(info.reset_bounds)
    if names == ["low", "high"]:
        low, high = maybe_parse_reset_bounds(dict(options), *defaults[0])
        values = [("low", low), ("high", high)]
        bounds = [(low, high)] * len(defaults)
    else:
        values = []
        for name, (_, default) in zip(names, defaults, strict=True):
            values.append((name, verify_number_and_cast(options.get(name, default))))
        bounds = [(-v, v) for _, v in values]
    for name, value in values:
        if not math.isfinite(value):
            raise ValueError(
                f"options[{name!r}]: expected a finite number, got {value} (a cartfuse "
                "env's state is always finite)"
            )
        if names != ["low", "high"] and value < 0:
            raise ValueError(
                f"options[{name!r}]: the component is drawn from [-{name}, {name}], so "
                f"{name} must be at least 0, got {value} (high - low < 0, as numpy's draw "
                "in gymnasium's env raises)"
            )
    return bounds


def reset_mask(mask: object, num_envs: int) -> npt.NDArray[np.bool_]:
    """``options["reset_mask"]``, checked as gymnasium's ``SyncVectorEnv.reset`` checks it
    (the same order, exception types and messages)."""
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(
            f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}"
        )
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not np.any(mask):
        raise ValueError(
            "`options['reset_mask']` must contain a boolean array with at least one True "
            f"value, got reset_mask={mask}"
        )
    return mask


#: The native module's name of each autoreset mode.
AUTORESET_NAMES = {
    AutoresetMode.NEXT_STEP: "next_step",
    AutoresetMode.SAME_STEP: "same_step",
    AutoresetMode.DISABLED: "disabled",
}


def check_autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    """``autoreset_mode=``: an :class:`AutoresetMode` or its value or name (any case)."""
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
