"""Two `cartfuse` binaries benchmarked side by side, in turns: did a change make a step slower?

    python3 scripts/bench_turns.py BEFORE AFTER [--rounds R] [--device wgpu]
        [--cell ENV:PLAN:ENVS ...]

BEFORE and AFTER are two release binaries (build the older commit and copy its
`target/release/cartfuse` aside). Every round runs `cartfuse --device DEVICE bench --json`
once per cell with each binary, the order alternated from round to round, and prints a line
per run; then, per cell, the median of the rounds' after/before speed ratios with the
slowest and fastest round (above 1: the change is faster). Cells default to CartPole-v1,
Pendulum-v1 and Acrobot-v1 under `fused` at 1, 4,096 and 65,536 envs, and CartPole-v1's
hand-written step at 65,536.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CELLS = [
    f"{env}:fused:{n}"
    for env in ("CartPole-v1", "Pendulum-v1", "Acrobot-v1")
    for n in (1, 4096, 65536)
] + ["CartPole-v1:hand-written:65536"]


@dataclass(frozen=True)
class Cell:
    """One benchmark: an environment, a plan and a batch size."""

    env: str
    plan: str
    envs: int

    @staticmethod
    def parse(text: str) -> Cell:
        """`ENV:PLAN:ENVS`, as the command line gives it."""
        parts = text.split(":")
        if len(parts) != 3 or not parts[2].isdigit() or int(parts[2]) < 1:
            raise argparse.ArgumentTypeError(
                f"--cell must be ENV:PLAN:ENVS with ENVS a positive whole number, got {text!r}"
            )
        return Cell(parts[0], parts[1], int(parts[2]))

    def __str__(self) -> str:
        return f"{self.env} {self.plan} n={self.envs}"


def env_steps_per_second(binary: Path, device: str, cell: Cell, repeats: int) -> float:
    """The median env-steps/s `binary` reports for `cell`."""
    command = [
        str(binary),
        "--device",
        device,
        "bench",
        "--env",
        cell.env,
        "--plan",
        cell.plan,
        "--envs",
        str(cell.envs),
        "--repeats",
        str(repeats),
        "--json",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return float(json.loads(done.stdout)["env_steps_per_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3, help="bench's repeats per run")
    parser.add_argument("--device", default="wgpu")
    parser.add_argument("--cell", type=Cell.parse, action="append", dest="cells")
    args = parser.parse_args()
    for binary in (args.before, args.after):
        if not binary.is_file():
            parser.error(f"{binary}: no such binary")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    cells: list[Cell] = args.cells or [Cell.parse(c) for c in DEFAULT_CELLS]
    ratios: dict[Cell, list[float]] = {cell: [] for cell in cells}
    print("round\tcell\tbinary\tenv_steps_per_s", flush=True)
    for round_index in range(1, args.rounds + 1):
        order = ["after", "before"] if round_index % 2 else ["before", "after"]
        for cell in cells:
            speeds: dict[str, float] = {}
            for which in order:
                binary = args.after if which == "after" else args.before
                speeds[which] = env_steps_per_second(binary, args.device, cell, args.repeats)
                print(f"{round_index}\t{cell}\t{which}\t{speeds[which]:.4g}", flush=True)
            ratios[cell].append(speeds["after"] / speeds["before"])
    print("\ncell\tafter/before (median round, slowest-fastest)")
    for cell, values in ratios.items():
        print(f"{cell}\t{statistics.median(values):.3f}x ({min(values):.3f}-{max(values):.3f})")


if __name__ == "__main__":
    main()
