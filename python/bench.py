"""env-steps/s of CartPole-v1 from Python, each ratio measured side by side in one process:
cartfuse's ``step`` against gymnasium's own ``CartPoleVectorEnv`` and against the Rust step
of the same plan (``VecEnv::step_device``, timed inside Rust), plus the one-env costs. The
peers EnvPool and gymnax (JAX) run beside them when installed (see ``bench_peers.py``).

    python python/bench.py [--sizes 1 4096 65536] [--rounds 15] [--budget 0.1] [--json]
    python python/bench.py --headline     # one markdown table: contenders by size
    python python/bench.py --threshold-sweep      # one thread against two, by size

Every size runs in rounds: in each round every contender steps for ``--budget`` seconds in
turn, so a slow spell of a shared machine hits all of them; a ratio is the median of the
per-round ratios (with the lowest and highest round beside it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Python puts this script's folder first on sys.path, where `cartfuse` is the source tree
# (without the native module where the wheel was built elsewhere): it goes to the end instead,
# so that `cartfuse` is the installed package and `bench_peers` still comes from beside this
# file. (Not `python -P`: the wheel runs on Python 3.10 too.) `bench_cuda.py` imports this
# module before `cartfuse` for the same reason.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.append(str(_HERE))

import numpy as np  # noqa: E402

os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="cartfuse-xdg-"))

import gymnasium as gym  # noqa: E402
from gymnasium.envs.classic_control.cartpole import (  # noqa: E402
    CartPoleVectorEnv as GymCartPoleVectorEnv,
)

import bench_peers as peers  # noqa: E402
import cartfuse  # noqa: E402
from cartfuse import CartPoleEnv, CartPoleVectorEnv  # noqa: E402
from cartfuse._native import NativeVecEnv, RustStepTimer  # noqa: E402

#: A contender: `run(budget)` steps for about `budget` seconds and returns seconds per call.
Contender = Callable[[float], float]


def python_contender(step: Callable[[Any], object], actions: list[Any]) -> Contender:
    """Calls `step` with the 8 action arrays in turn until `budget` seconds have passed."""

    def run(budget: float) -> float:
        calls, start = 0, time.perf_counter()
        while True:
            for a in actions:
                step(a)
            calls += len(actions)
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return elapsed / calls

    return run


def rust_contender(timer: RustStepTimer) -> Contender:
    """Times the Rust step inside Rust, for about `budget` seconds."""
    per_call = [timer.time(8) / 8]

    def run(budget: float) -> float:
        calls = max(8, int(budget / max(per_call[0], 1e-9)))
        seconds = timer.time(calls)
        per_call[0] = seconds / calls
        return per_call[0]

    return run


def in_rounds(
    contenders: dict[str, Contender], rounds: int, budget: float
) -> dict[str, list[float]]:
    """Seconds per call of every contender, `rounds` times, in turns within each round."""
    for run in contenders.values():
        run(budget / 4)  # warm-up: kernels compiled, caches and pools warm
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            times[name].append(run(budget))
    return times


def ratio(times: dict[str, list[float]], faster: str, than: str) -> dict[str, float]:
    """How many times `faster`'s throughput is `than`'s, round by round: median, min, max."""
    per_round = [t / f for f, t in zip(times[faster], times[than], strict=True)]
    return {
        "median": statistics.median(per_round),
        "min": min(per_round),
        "max": max(per_round),
    }


def actions_for(n: int) -> list[np.ndarray]:
    return [np.random.default_rng(i).integers(0, 2, size=n) for i in range(8)]


def measure_size(n: int, args: argparse.Namespace, status: dict[str, str]) -> dict[str, Any]:
    """Every contender at `n` envs, in rounds; the peers whose `status` is "ok" too."""
    actions = actions_for(n)
    gym_env = GymCartPoleVectorEnv(num_envs=n)
    copies = CartPoleVectorEnv(n, device="cpu", plan=args.plan)
    views = CartPoleVectorEnv(n, device="cpu", plan=args.plan, copy=False)
    for env in (gym_env, copies, views):
        env.reset(seed=0)
    timer = RustStepTimer("CartPole-v1", n, device="cpu", plan=args.plan)
    contenders = {
        "gymnasium": python_contender(gym_env.step, actions),
        "cartfuse": python_contender(copies.step, actions),
        "cartfuse copy=False": python_contender(views.step, actions),
        "rust step": rust_contender(timer),
    }
    peer_runs, skipped, closers = peers.peer_contenders(n, actions, status, python_contender)
    contenders.update(peer_runs)
    times = in_rounds(contenders, args.rounds, args.budget)
    row: dict[str, Any] = {
        "num_envs": n,
        "plan": copies.plan,
        "env_steps_per_s": {k: n / statistics.median(v) for k, v in times.items()},
        "vs_gymnasium": {k: ratio(times, k, "gymnasium") for k in times if k != "gymnasium"},
        "vs_rust_step": {
            k: ratio(times, k, "rust step") for k in ("cartfuse", "cartfuse copy=False")
        },
        "skipped": skipped,
    }
    for env in (gym_env, copies, views):
        env.close()
    for close in closers:
        close()
    return row


def one_env_costs(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Microseconds per `step` of one env: cartfuse's and gymnasium's CartPole-v1, through
    `gym.make`'s wrappers and unwrapped, in rounds."""
    envs = {
        "cartfuse wrapped": gym.make("cartfuse/CartPole-v1"),
        "cartfuse unwrapped": CartPoleEnv(device="cpu"),
        "gymnasium wrapped": gym.make("CartPole-v1"),
        "gymnasium unwrapped": gym.make("CartPole-v1").unwrapped,
    }
    contenders = {}
    for name, env in envs.items():
        env.reset(seed=0)
        # Actions that keep the pole up a while; an ended episode is reset inside the
        # timed call on both sides alike.
        contenders[name] = python_contender(_stepping(env), [0, 1] * 4)
    times = in_rounds(contenders, args.rounds, args.budget)
    return {
        name: {
            "median_us": 1e6 * statistics.median(t),
            "min_us": 1e6 * min(t),
            "max_us": 1e6 * max(t),
        }
        for name, t in times.items()
    }


def _stepping(env: Any) -> Callable[[int], object]:
    def step(action: int) -> object:
        out = env.step(action)
        if out[2] or out[3]:
            env.reset()
        return out

    return step


def threshold_sweep(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The Python step on two threads against one, by size (the thread threshold)."""
    rows = []
    for n in args.sweep_sizes:
        actions = actions_for(n)
        envs = {
            "1 thread": NativeVecEnv("CartPole-v1", n, device="cpu", parallel_min_lanes=1 << 62),
            "2 threads": NativeVecEnv("CartPole-v1", n, device="cpu", parallel_min_lanes=0),
        }
        for env in envs.values():
            env.reset(0)
        contenders = {k: python_contender(e.step, actions) for k, e in envs.items()}
        times = in_rounds(contenders, args.rounds, args.budget)
        rows.append(
            {
                "num_envs": n,
                "us_per_step": {k: 1e6 * statistics.median(v) for k, v in times.items()},
                "2 threads vs 1": ratio(times, "2 threads", "1 thread"),
            }
        )
    return rows


def _spread(r: dict[str, float]) -> str:
    return f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"


def print_tables(result: dict[str, Any]) -> None:
    print(f"# {result['machine']}; python {result['python']}, numpy {result['numpy']}, ", end="")
    print(f"gymnasium {result['gymnasium']}, cartfuse {result['cartfuse']}")
    print(f"# {result['unit']}\n")
    if "sizes" in result:
        names = ["gymnasium", "cartfuse", "cartfuse copy=False", "rust step"]
        print(
            "| n | plan | " + " | ".join(names) + " | cartfuse / gymnasium | cartfuse / rust step "
            "| copy=False / rust step |"
        )
        print("|---:|---|" + "---:|" * (len(names) + 3))
        for row in result["sizes"]:
            rates = " | ".join(f"{row['env_steps_per_s'][k]:.3g}" for k in names)
            print(
                f"| {row['num_envs']} | {row['plan']} | {rates} "
                f"| {_spread(row['vs_gymnasium']['cartfuse'])} "
                f"| {_spread(row['vs_rust_step']['cartfuse'])} "
                f"| {_spread(row['vs_rust_step']['cartfuse copy=False'])} |"
            )
        print("\n| n | peer | env-steps/s | peer / gymnasium |\n|---:|---|---:|---:|")
        for row in result["sizes"]:
            for peer in peers.PEERS:
                if peer in row["skipped"]:
                    print(f"| {row['num_envs']} | {peer} | {row['skipped'][peer]} | |")
                else:
                    rate = row["env_steps_per_s"][peer]
                    spread = _spread(row["vs_gymnasium"][peer])
                    print(f"| {row['num_envs']} | {peer} | {rate:.3g} | {spread} |")
    if "one_env_us" in result:
        print("\n| one env, `step` | median us | rounds' range |\n|---|---:|---:|")
        for name, t in result["one_env_us"].items():
            print(f"| {name} | {t['median_us']:.2f} | {t['min_us']:.2f}-{t['max_us']:.2f} |")
    if "threshold_sweep" in result:
        print("\n| n | 1 thread us | 2 threads us | 2 threads / 1 (throughput) |")
        print("|---:|---:|---:|---:|")
        for row in result["threshold_sweep"]:
            us = row["us_per_step"]
            print(
                f"| {row['num_envs']} | {us['1 thread']:.1f} | {us['2 threads']:.1f} "
                f"| {_spread(row['2 threads vs 1'])} |"
            )


#: The headline's rows: each contender's key in the results and its label.
HEADLINE_ROWS = {
    "gymnasium": "gymnasium `CartPoleVectorEnv` (numpy)",
    "cartfuse": "cartfuse `step`",
    "cartfuse copy=False": "cartfuse `step`, `copy=False`",
    "rust step": "cartfuse Rust step (no Python)",
    peers.ENVPOOL: "EnvPool `step` (sync)",
    peers.GYMNAX_STEP: "gymnax, one jitted step per call",
    peers.GYMNAX_SCAN: f"gymnax, {peers.SCAN_STEPS} steps per `lax.scan` call",
}


def _si(x: float) -> str:
    """3 significant digits with k/M/G: 12300 -> '12.3k'."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what `platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def headline(result: dict[str, Any]) -> str:
    """Markdown for the README: rows = contenders, columns = sizes; each cell env-steps/s and
    (median per-round ratio) x gymnasium."""
    rows = result["sizes"]
    versions = ", ".join(
        f"{k} {v}"
        for k, v in {
            "python": result["python"],
            "numpy": result["numpy"],
            "gymnasium": result["gymnasium"],
            "cartfuse": result["cartfuse"],
            **{k: result["versions"][k] or "not installed" for k in ("envpool", "jax", "gymnax")},
        }.items()
    )
    lines = [
        "CartPole-v1 env-steps/s from Python (in brackets: x gymnasium)",
        "",
        f"- Machine: {result['platform']}; {result['cpu_model']}; {result['cpus']} logical CPUs; "
        f"{result['date']}",
        f"- Versions: {versions}",
        f"- Median of {result['rounds']} rounds of {result['budget']} s per contender; "
        "x gymnasium: median of the per-round ratios",
        "",
        "| contender | "
        + " | ".join(f"{r['num_envs']} env{'s' if r['num_envs'] > 1 else ''}" for r in rows)
        + " |",
        "|---|" + "---:|" * len(rows),
    ]
    for key, label in HEADLINE_ROWS.items():
        cells = []
        for r in rows:
            if key in r["skipped"]:
                cells.append(r["skipped"][key])
            elif key == "gymnasium":
                cells.append(f"{_si(r['env_steps_per_s'][key])} (1x)")
            else:
                times = r["vs_gymnasium"][key]["median"]
                x = f"{times:,.0f}" if times >= 100 else f"{times:.3g}"
                cells.append(f"{_si(r['env_steps_per_s'][key])} ({x}x)")
        if len(set(cells)) == 1 and key in result["peers"] and result["peers"][key] != "ok":
            cells = [cells[0]] + [""] * (len(cells) - 1)  # one "not installed" per row
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4096, 65536])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--budget", type=float, default=0.1, help="seconds per contender and round")
    parser.add_argument("--plan", default=None, help="cartfuse plan (default: hand-written)")
    parser.add_argument("--no-one-env", action="store_true", help="skip the one-env costs")
    parser.add_argument("--threshold-sweep", action="store_true")
    parser.add_argument(
        "--sweep-sizes", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192, 16384]
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--headline",
        action="store_true",
        help="print (or add to the JSON) one markdown table, contenders by size; "
        "skips the one-env costs",
    )
    args = parser.parse_args()

    result: dict[str, Any] = {
        "unit": "env-steps/s: median of rounds; ratios: median (min-max) of per-round ratios",
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "gymnasium": gym.__version__,
        "cartfuse": cartfuse.__version__,
        "command": " ".join(sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "rounds": args.rounds,
        "budget": args.budget,
        "versions": peers.peer_versions(),
        "peers": peers.peer_status(),
    }
    if args.threshold_sweep:
        result["threshold_sweep"] = threshold_sweep(args)
    else:
        result["sizes"] = [measure_size(n, args, result["peers"]) for n in args.sizes]
        if args.headline:
            result["headline"] = headline(result)
        elif not args.no_one_env:
            result["one_env_us"] = one_env_costs(args)
    if args.json:
        print(json.dumps(result, indent=2))
    elif "headline" in result:
        print(result["headline"])
    else:
        print_tables(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
