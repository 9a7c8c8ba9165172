"""Classes named after an environment id (``CartPoleVectorEnv``, ``PendulumEnv``), built
at import from the native module's registry: their name, ``metadata["render_fps"]`` and the
signature ``help()`` shows all come from the environment's ``EnvInfo``."""

from __future__ import annotations

import inspect
import re
from typing import Any, TypeVar, cast

from cartfuse import _native


def class_stem(env_id: str) -> str:
    """The class-name stem of an id: ``"MountainCarContinuous-v0"`` ->
    ``"MountainCarContinuous"``."""
    return re.sub(r"\W", "", re.sub(r"-v\d+$", "", env_id))


_Named = TypeVar("_Named")


def named_signature(init: Any, info: _native.EnvInfo) -> inspect.Signature:
    """The call signature of a named class whose ``__init__`` is ``init`` (its ``self`` and
    ``**env_kwargs`` dropped), with the environment's constructor arguments as keywords at
    their defaults: what ``help()`` and ``inspect.signature`` show."""
    kept = [
        p
        for p in list(inspect.signature(init).parameters.values())[1:]
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    extra = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=bool(default) if kind == "bool" else float(default),
            annotation=kind,
        )
        for name, kind, default in info.kwargs
    ]
    return inspect.Signature([*kept, *extra])


def named_class(
    base: type[_Named], info: _native.EnvInfo, suffix: str, doc: str, module: str
) -> type[_Named]:
    """A subclass of ``base`` named after ``info``'s id (``CartPole`` + ``suffix``) with
    ``ENV_ID`` set, defined in ``module``: its class-level ``metadata`` holds the
    environment's ``render_fps`` and its ``__signature__`` the environment's constructor
    arguments."""
    name = f"{class_stem(info.id)}{suffix}"
    metadata = {
        key: list(value) if isinstance(value, list) else value
        for key, value in getattr(base, "metadata", {}).items()
    }
    metadata["render_fps"] = info.render_fps
    attributes = {
        "ENV_ID": info.id,
        "__module__": module,
        "__qualname__": name,
        "__doc__": doc,
        "metadata": metadata,
        "__signature__": named_signature(base.__init__, info),
    }
    return cast("type[_Named]", type(name, (base,), attributes))
