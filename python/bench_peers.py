"""The optional peers of ``bench.py``: EnvPool and gymnax (JAX), each timed when importable.

A peer that cannot be imported is reported, never raised: its status says "not installed
(pip install ...)" or why the import failed, and a size a peer refuses is skipped with the
error it gave. Written and tested with envpool 1.2.5, jax/jaxlib 0.10.2 (CPU) and gymnax 0.0.9
(which imports ``six`` without declaring it: ``pip install six``).

- ``envpool``: ``envpool.make_gymnasium("CartPole-v1", num_envs=n, seed=0)``, so
  ``batch_size == num_envs`` (synchronous) and EnvPool's default thread count; each call is
  ``env.step(actions)`` with int32 numpy actions and the env ids left to EnvPool (all envs).
- ``gymnax step``: ``jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))`` over n envs
  (keys split once); each call steps once from numpy actions and blocks
  (``jax.block_until_ready``): the JAX step as a Python user calls it step by step, the
  host round trip included.
- ``gymnax scan K=100``: ``K`` of those steps in one jitted ``jax.lax.scan`` per call over
  actions already on the device, reported per step: how gymnax is meant to be used (rollouts
  inside JAX), not a per-step Python call like the other contenders.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib import import_module, metadata
from typing import Any

import numpy as np

#: Steps per call of the scanned gymnax contender.
SCAN_STEPS = 100

ENVPOOL = "envpool"
GYMNAX_STEP = "gymnax step"
GYMNAX_SCAN = f"gymnax scan K={SCAN_STEPS}"
#: Every peer, in the order they run and are listed.
PEERS = (ENVPOOL, GYMNAX_STEP, GYMNAX_SCAN)

#: The modules each peer imports, and the pip command that installs them.
_NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    ENVPOOL: (("envpool",), "pip install envpool"),
    GYMNAX_STEP: (("jax", "gymnax"), 'pip install "jax[cpu]" gymnax'),
    GYMNAX_SCAN: (("jax", "gymnax"), 'pip install "jax[cpu]" gymnax'),
}

#: A contender: `run(budget)` steps for about `budget` seconds and returns seconds per step.
Contender = Callable[[float], float]
#: bench.py's loop: `python_contender(step, actions)` calls `step` with the actions in turn.
PythonContender = Callable[[Callable[[Any], object], list[Any]], Contender]


def _importable(modules: tuple[str, ...], install: str) -> str:
    """Either "ok" or why one of `modules` cannot be imported (with a pip command to help)."""
    for name in modules:
        try:
            import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and e.name.split(".")[0] == name:
                return f"not installed ({install})"
            return f"import failed: {e} (pip install {(e.name or '?').split('.')[0]})"
        except Exception as e:  # a broken install must not stop the benchmark
            return f"import failed: {type(e).__name__}: {e}"
    return "ok"


def peer_status() -> dict[str, str]:
    """Each peer's status: "ok" when it can be timed, else why not."""
    return {peer: _importable(*_NEEDS[peer]) for peer in PEERS}


def peer_versions() -> dict[str, str | None]:
    """Installed versions of the peers' packages (None when not installed)."""
    versions: dict[str, str | None] = {}
    for package in ("envpool", "jax", "jaxlib", "gymnax"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _envpool(
    n: int, actions: list[np.ndarray], python_contender: PythonContender
) -> tuple[Contender, Callable[[], None]]:
    import envpool

    env = envpool.make_gymnasium("CartPole-v1", num_envs=n, seed=0)
    env.reset()
    ints = [a.astype(np.int32) for a in actions]
    env.step(ints[0])  # a size EnvPool refuses fails here, not inside the rounds
    return python_contender(env.step, ints), env.close


def _gymnax(
    n: int, actions: list[np.ndarray], python_contender: PythonContender, scan: bool
) -> tuple[Contender, Callable[[], None]]:
    import gymnax
    import jax
    import jax.numpy as jnp

    env, params = gymnax.make("CartPole-v1")
    keys = jax.random.split(jax.random.PRNGKey(0), n)
    _, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, params)
    vstep = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    ints = [a.astype(np.int32) for a in actions]
    held = [state]

    if not scan:
        step = jax.jit(vstep)

        def one(a: np.ndarray) -> object:
            out = jax.block_until_ready(step(keys, held[0], a, params))
            held[0] = out[1]
            return out

        one(ints[0])  # compiled here, not in the rounds
        return python_contender(one, ints), lambda: None

    def rollout(state: Any, acts: jax.Array) -> tuple[Any, jax.Array]:
        def body(carry: tuple[Any, jax.Array], a: jax.Array) -> tuple[Any, None]:
            s, total = carry
            _, s, reward, _, _ = vstep(keys, s, a, params)
            return (s, total + reward), None

        # The summed rewards come back too, so no part of the step is left out of the scan.
        carry, _ = jax.lax.scan(body, (state, jnp.zeros(n, jnp.float32)), acts)
        return carry

    scanned = jax.jit(rollout)
    acts = jax.device_put(np.stack([ints[k % len(ints)] for k in range(SCAN_STEPS)]))
    held[0] = jax.block_until_ready(scanned(held[0], acts))[0]  # compiled here

    def run(budget: float) -> float:
        calls, start = 0, time.perf_counter()
        while True:
            held[0] = jax.block_until_ready(scanned(held[0], acts))[0]
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return elapsed / (calls * SCAN_STEPS)

    return run, lambda: None


def peer_contenders(
    n: int,
    actions: list[np.ndarray],
    status: dict[str, str],
    python_contender: PythonContender,
) -> tuple[dict[str, Contender], dict[str, str], list[Callable[[], None]]]:
    """The peers that run at `n` envs; why each other one does not; what closes them."""
    makers: dict[str, Callable[[], tuple[Contender, Callable[[], None]]]] = {
        ENVPOOL: lambda: _envpool(n, actions, python_contender),
        GYMNAX_STEP: lambda: _gymnax(n, actions, python_contender, scan=False),
        GYMNAX_SCAN: lambda: _gymnax(n, actions, python_contender, scan=True),
    }
    contenders: dict[str, Contender] = {}
    skipped: dict[str, str] = {}
    closers: list[Callable[[], None]] = []
    for peer in PEERS:
        if status[peer] != "ok":
            skipped[peer] = status[peer]
            continue
        try:
            contenders[peer], close = makers[peer]()
            closers.append(close)
        except Exception as e:  # e.g. a size the peer refuses, or out of memory
            skipped[peer] = f"refused n={n}: {type(e).__name__}: {e}"
    return contenders, skipped, closers
