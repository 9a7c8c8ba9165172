"""env-steps/s of ``step`` with numpy actions: cartfuse (every device this build opens)
beside gymnasium's own ``CartPoleVectorEnv``, measured in the same run.

    python python/bench.py [--sizes 1 256 4096 65536] [--seconds 1.0] [--json]

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


def time_calls(call: Callable[[], object], seconds: float, repeats: int) -> float:
    """Median seconds per call over `repeats` runs of at least `seconds` / `repeats` each,
    after a warm-up (JIT compilation, caches)."""
    for _ in range(20):
        call()
    budget = seconds / repeats
    per_call = []
    for _ in range(repeats):
        calls = 0
        start = time.perf_counter()
        while True:
            call()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                break
        per_call.append(elapsed / calls)
    return statistics.median(per_call)


def bench_step(env: Any, n: int, seconds: float, repeats: int) -> float:
    env.reset(seed=0)
    actions = [np.random.default_rng(i).integers(0, 2, size=n) for i in range(8)]
    index = 0

    def call() -> None:
        nonlocal index
        env.step(actions[index & 7])
        index += 1

    return n / time_calls(call, seconds, repeats)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 256, 4096, 65536])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plan", default=None, help="cartfuse plan (default: hand-written)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    devices = cartfuse.compiled_devices()
    rows: list[dict[str, Any]] = []
    for n in args.sizes:
        row: dict[str, Any] = {"num_envs": n}
        row["gymnasium"] = bench_step(
            GymCartPoleVectorEnv(num_envs=n), n, args.seconds, args.repeats
        )
        for device in devices:
            try:
                env = CartPoleVectorEnv(n, device=device, plan=args.plan)
            except ValueError as error:
                row[f"cartfuse-{device}"] = None
                row[f"cartfuse-{device}-error"] = str(error)
                continue
            row[f"cartfuse-{device}"] = bench_step(env, n, args.seconds, args.repeats)
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
        "unit": "env-steps/s (median of repeats)",
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
        ratios = [f"{row[c] / row['gymnasium']:.2f}x" if row.get(c) else "n/a" for c in columns[1:]]
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
