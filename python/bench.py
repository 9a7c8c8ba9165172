"""env-steps/s of ``step`` with numpy actions: cartfuse (every device this build opens)
beside gymnasium's own ``CartPoleVectorEnv``, measured in the same run.

    python python/bench.py [--sizes 1 256 4096 65536] [--seconds 1.0] [--json]

Each size times every contender in turns (gymnasium, then each cartfuse device, repeated),
so the ratios compare calls made in the same seconds of the run.

Also reports the Python layer's cost per call at n = 1: ``CartPoleVectorEnv.step`` against
the raw native call it wraps.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="cartfuse-xdg-"))

import gymnasium
from gymnasium.envs.classic_control.cartpole import (
    CartPoleVectorEnv as GymCartPoleVectorEnv,
)

import cartfuse
from cartfuse import CartPoleVectorEnv


class _StubNative:
    """Returns fixed step outputs: isolates the Python wrapper's own cost."""

    def __init__(self, outputs: Any) -> None:
        self.outputs = outputs

    def step(self, actions: Any) -> Any:
        return self.outputs


def _warm(call: Callable[[], object]) -> None:
    """Runs `call` a few times first (JIT compilation, caches)."""
    for _ in range(20):
        call()


def _time_for(call: Callable[[], object], budget: float) -> float:
    """Seconds per call over calls that take at least `budget` seconds together."""
    calls = 0
    start = time.perf_counter()
    while True:
        call()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            return elapsed / calls


def time_calls(call: Callable[[], object], seconds: float, repeats: int) -> float:
    """Median seconds per call over `repeats` runs of at least `seconds` / `repeats` each,
    after a warm-up."""
    _warm(call)
    return statistics.median(_time_for(call, seconds / repeats) for _ in range(repeats))


def time_side_by_side(
    calls: dict[str, Callable[[], object]], seconds: float, repeats: int
) -> dict[str, list[float]]:
    """Seconds per call of each of `calls`, `repeats` times (each call `seconds` in all),
    the calls taking turns within
    each repeat: a slow spell of a shared machine then hits every contender of that
    repeat, and ratios taken repeat by repeat cancel it."""
    for call in calls.values():
        _warm(call)
    budget = seconds / repeats
    per_call: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            per_call[name].append(_time_for(call, budget))
    return per_call


def stepper(env: Any, n: int) -> Callable[[], None]:
    """A call that steps `env` (reset with seed 0) with one of 8 random action arrays."""
    env.reset(seed=0)
    actions = [np.random.default_rng(i).integers(0, 2, size=n) for i in range(8)]
    index = 0

    def call() -> None:
        nonlocal index
        env.step(actions[index & 7])
        index += 1

    return call


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 256, 4096, 65536])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per contender and size")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plan", default=None, help="cartfuse plan (default: hand-written)")
    parser.add_argument(
        "--devices",
        nargs="+",
        default=None,
        help="cartfuse devices to measure (default: every device this build has)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    devices = cartfuse.compiled_devices()
    if args.devices is not None:
        unknown = sorted(set(args.devices) - set(devices))
        if unknown:
            parser.error(f"--devices: {unknown} not in this build's devices {devices}")
        devices = args.devices
    rows: list[dict[str, Any]] = []
    for n in args.sizes:
        row: dict[str, Any] = {"num_envs": n}
        envs: dict[str, Any] = {"gymnasium": GymCartPoleVectorEnv(num_envs=n)}
        for device in devices:
            try:
                envs[f"cartfuse-{device}"] = CartPoleVectorEnv(n, device=device, plan=args.plan)
            except ValueError as error:
                row[f"cartfuse-{device}"] = None
                row[f"cartfuse-{device}-error"] = str(error)
        calls = {name: stepper(env, n) for name, env in envs.items()}
        per_call = time_side_by_side(calls, args.seconds, args.repeats)
        gym_times = per_call["gymnasium"]
        for name, times in per_call.items():
            row[name] = n / statistics.median(times)
            if name != "gymnasium":
                # The median of the ratios of the same repeat.
                row[f"{name}/gymnasium"] = statistics.median(
                    g / t for g, t in zip(gym_times, times, strict=True)
                )
        for env in envs.values():
            env.close()
        rows.append(row)

    # The Python layer at n = 1: the wrapper's step against the native step it calls.
    overhead: dict[str, Any] = {}
    for device in devices:
        try:
            env = CartPoleVectorEnv(1, device=device, plan=args.plan)
        except ValueError:
            continue
        env.reset(seed=0)
        actions = np.zeros(1, dtype=np.int64)
        wrapper_s = time_calls(partial(env.step, actions), args.seconds, args.repeats)
        native_s = time_calls(partial(env._native.step, actions), args.seconds, args.repeats)
        # The wrapper alone: the same Python code over a stub that returns the native
        # step's arrays instantly (the difference above drowns in the device's jitter).
        outputs = env._native.step(actions)
        real_native = env._native
        env._native = _StubNative(outputs)  # type: ignore[assignment]
        stub_s = time_calls(partial(env.step, actions), args.seconds, args.repeats)
        env._native = real_native
        overhead[device] = {
            "wrapper_us": wrapper_s * 1e6,
            "native_us": native_s * 1e6,
            "python_layer_us": stub_s * 1e6,
        }

    result = {
        "unit": "env-steps/s (median of repeats); ratios: median of same-repeat ratios",
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "gymnasium": gymnasium.__version__,
        "cartfuse": cartfuse.__version__,
        "plan": args.plan or "hand-written",
        "devices": devices,
        "rows": rows,
        "python_layer_n1": overhead,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    columns = ["gymnasium"] + [f"cartfuse-{d}" for d in devices]
    print(
        "| n | "
        + " | ".join(columns)
        + " | "
        + " | ".join(f"{c} / gymnasium" for c in columns[1:])
        + " |"
    )
    print("|---:|" + "---:|" * (2 * len(columns) - 1))
    for row in rows:
        cells = [f"{row[c]:.3g}" if row.get(c) else "n/a" for c in columns]
        ratios = [f"{row[f'{c}/gymnasium']:.2f}x" if row.get(c) else "n/a" for c in columns[1:]]
        print(f"| {row['num_envs']} | " + " | ".join(cells + ratios) + " |")
    for device, o in overhead.items():
        print(
            f"\nn = 1 on {device}: CartPoleVectorEnv.step {o['wrapper_us']:.1f} us, native "
            f"step {o['native_us']:.1f} us; the Python layer alone (over a stub native step) "
            f"{o['python_layer_us']:.2f} us per call"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
