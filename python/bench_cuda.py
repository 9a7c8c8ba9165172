"""CartPole-v1 on CUDA from Python against the Rust step on the same GPU, in rounds (needs an
NVIDIA GPU, a wheel built with CUDA and, for the zero-copy rows, torch with CUDA):

* ``python host step``: ``copy=True``, numpy actions in, numpy outputs out (one round trip);
* ``python views``: ``copy=False``, numpy actions in, outputs left on the GPU as
  ``DeviceArray`` views;
* ``python views, torch actions``: the same with a CUDA tensor of actions (DLPack, in place);
* ``zero-copy loop``: observations to torch through DLPack, a 4-64-64-2 tanh MLP's greedy
  action, back to the env: what a torch policy on the same GPU pays a step;
* ``rust host step`` (``VecEnv::step_into``) and ``rust device step``
  (``VecEnv::step_device``, actions uploaded once), timed inside Rust.

    python python/bench_cuda.py [--sizes 1 4096 65536] [--rounds 10] [--budget 0.1] [--json]

Ratios are medians of per-round ratios against ``rust host step`` (issue 49 asks the Python
CUDA step for at least 0.8x of it at 4,096 envs), with the lowest and highest round.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

# `bench` (beside this file, first on sys.path) comes first: it moves this folder to the end
# of sys.path, so that `cartfuse` is the installed package, not the source tree here.
from bench import in_rounds, python_contender, ratio, rust_contender
from cartfuse import CartPoleVectorEnv, DeviceArray
from cartfuse._native import RustStepTimer

REFERENCE = "rust host step"


def torch_cuda() -> Any | None:
    """torch, when it is installed and sees a GPU."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    return torch if torch.cuda.is_available() else None


def zero_copy_loop(env: CartPoleVectorEnv, torch: Any) -> Callable[[float], float]:
    """Seconds per step of the env driven by a torch MLP on the GPU, outputs and actions
    through DLPack; a closure for :func:`bench.in_rounds`."""
    generator = torch.Generator(device="cuda").manual_seed(0)
    sizes = [(4, 64), (64, 64), (64, 2)]
    weights = [
        (
            torch.randn(a, b, device="cuda", generator=generator) / a**0.5,
            torch.zeros(b, device="cuda"),
        )
        for a, b in sizes
    ]
    obs, _ = env.reset(seed=0)
    state = {"obs": obs}

    def policy(view: DeviceArray) -> Any:
        x = torch.from_dlpack(view)
        for i, (w, b) in enumerate(weights):
            x = x @ w + b
            x = torch.tanh(x) if i < len(weights) - 1 else x
        return x.argmax(dim=1).int()

    def run(budget: float) -> float:
        calls, start = 0, time.perf_counter()
        while True:
            for _ in range(8):
                state["obs"], *_ = env.step(policy(state["obs"]))
            calls += 8
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return elapsed / calls

    return run


def measure(n: int, args: argparse.Namespace, torch: Any | None) -> dict[str, Any]:
    """Every contender at ``n`` envs, in rounds."""
    actions = [np.random.default_rng(i).integers(0, 2, size=n) for i in range(8)]
    host = CartPoleVectorEnv(n, device="cuda")
    views = CartPoleVectorEnv(n, device="cuda", copy=False)
    for env in (host, views):
        env.reset(seed=0)
    contenders = {
        "python host step": python_contender(host.step, actions),
        "python views": python_contender(views.step, actions),
    }
    loop_env = None
    if torch is not None:
        on_gpu = [torch.from_numpy(a).int().cuda() for a in actions]
        contenders["python views, torch actions"] = python_contender(views.step, on_gpu)
        loop_env = CartPoleVectorEnv(n, device="cuda", copy=False)
        contenders["zero-copy loop"] = zero_copy_loop(loop_env, torch)
    host_timer = RustStepTimer("CartPole-v1", n, device="cuda")
    device_timer = RustStepTimer("CartPole-v1", n, device="cuda")

    def rust_host(budget: float) -> float:
        calls = max(8, int(budget / 2e-4))
        return host_timer.time(calls, host=True) / calls

    contenders[REFERENCE] = rust_host
    contenders["rust device step"] = rust_contender(device_timer)
    times = in_rounds(contenders, args.rounds, args.budget)
    for env in (host, views, loop_env):
        if env is not None:
            env.close()
    return {
        "num_envs": n,
        "env_steps_per_s": {k: n / statistics.median(v) for k, v in times.items()},
        "us_per_step": {k: 1e6 * statistics.median(v) for k, v in times.items()},
        "vs_rust_host_step": {k: ratio(times, k, REFERENCE) for k in times if k != REFERENCE},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4096, 65536])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--budget", type=float, default=0.1, help="seconds per contender and round")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    if min(args.sizes) < 1 or args.rounds < 1 or not args.budget > 0:
        parser.error("--sizes and --rounds must be at least 1 and --budget more than 0")
    torch = torch_cuda()
    try:
        rows = [measure(n, args, torch) for n in args.sizes]
    except ValueError as err:  # no CUDA on this machine, or a size the env refuses
        print(f"bench_cuda: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"rows": rows, "torch": torch is not None}, indent=2))
        return 0
    print("| n | contender | us a step | env-steps/s | x rust host step (rounds) |")
    print("|---:|---|---:|---:|---:|")
    for row in rows:
        for name, rate in row["env_steps_per_s"].items():
            r = row["vs_rust_host_step"].get(name)
            spread = "" if r is None else f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"
            us = row["us_per_step"][name]
            print(f"| {row['num_envs']} | {name} | {us:.1f} | {rate:.3g} | {spread} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
