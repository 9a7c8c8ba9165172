"""Record reference trajectories from gymnasium's own classic-control environments.

The Rust tests read the JSON fixtures this script writes and replay the recorded actions
against cartfuse's ports of the environments, comparing states, observations, rewards and
termination/truncation flags step by step.

Run it from anywhere (paths default to the repository root found from this file's location):

    python3 scripts/record_fixtures.py                      # all five environments
    python3 scripts/record_fixtures.py --env Pendulum-v1    # only one (repeatable)
    python3 scripts/record_fixtures.py --out /tmp/fixtures  # somewhere else

Requirements: gymnasium==1.4.0 (exactly; the script refuses any other version, since the
fixtures pin its numerics) and numpy>=2 (NumPy 2's NEP 50 promotion rules decide which of
MountainCarContinuous's and Pendulum's operations run in float32, e.g. ``np.float32 * 0.0015``
stays float32 under NumPy 2 but was float64 under NumPy 1). For example:

    python3 -m pip install "gymnasium==1.4.0" "numpy>=2"

Output: one file per environment, ``<out>/<env_id>.json`` (default out directory
``tests/fixtures/gymnasium`` under the repository root), with this schema::

    {
      "gymnasium_version": "1.4.0",
      "env_id": "Acrobot-v1",
      "max_episode_steps": 500,        # env.spec.max_episode_steps (TimeLimit)
      "episodes": [
        {
          "seed": 0,                   # passed to env.reset(seed=...)
          "initial_state": [...],      # env.unwrapped.state right after reset
          "initial_obs": [...],        # observation returned by reset
          "actions": [...],            # ints (discrete) or one float per step (continuous,
                                       #   the f32 value passed, before gymnasium clips it)
          "states": [[...], ...],      # env.unwrapped.state after each step
          "obs": [[...], ...],         # observation returned by each step
          "rewards": [...],
          "terminated": [...],
          "truncated": [...]
        }
      ]
    }

Episodes use seeds 0, 1, 2 and run until terminated or truncated. Actions come from
``np.random.default_rng(1000 + seed)``: uniform integers in ``[0, n)`` for discrete action
spaces; for continuous ones, uniform floats over a range wider than the action space (so
gymnasium's clipping is exercised), rounded to float32 before being passed as
``np.array([a], dtype=np.float32)``. The output is deterministic: running the script twice
gives byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

try:
    import numpy as np
except ImportError:
    sys.exit(
        'error: numpy is not installed; python3 -m pip install "gymnasium==1.4.0" "numpy>=2"'
    )

GYMNASIUM_VERSION = "1.4.0"

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "tests" / "fixtures" / "gymnasium"

SEEDS: tuple[int, ...] = (0, 1, 2)
ACTION_SEED_OFFSET = 1000

# Environment id -> range actions are drawn from: None for a discrete action space, else
# (low, high) for the single component of a continuous one. The ranges are deliberately wider
# than the action spaces (MountainCarContinuous: [-1, 1]; Pendulum: [-2, 2]) so that the
# fixtures exercise gymnasium's clipping.
ENVS: dict[str, tuple[float, float] | None] = {
    "CartPole-v1": None,
    "MountainCar-v0": None,
    "Acrobot-v1": None,
    "MountainCarContinuous-v0": (-1.5, 1.5),
    "Pendulum-v1": (-3.0, 3.0),
}


class Episode(TypedDict):
    seed: int
    initial_state: list[float]
    initial_obs: list[float]
    actions: list[int] | list[float]
    states: list[list[float]]
    obs: list[list[float]]
    rewards: list[float]
    terminated: list[bool]
    truncated: list[bool]


class Fixture(TypedDict):
    gymnasium_version: str
    env_id: str
    max_episode_steps: int
    episodes: list[Episode]


def check_versions() -> None:
    """Exit with a clear message unless the pinned gymnasium and numpy>=2 are importable."""
    if int(np.__version__.split(".")[0]) < 2:
        sys.exit(
            f"error: found numpy {np.__version__}; the fixtures need numpy>=2, whose NEP 50"
            " promotion rules decide which operations gymnasium performs in float32"
        )
    try:
        import gymnasium
    except ImportError:
        sys.exit(
            f"error: gymnasium is not installed; this script needs gymnasium=={GYMNASIUM_VERSION}"
            f' (python3 -m pip install "gymnasium=={GYMNASIUM_VERSION}" numpy)'
        )
    found = gymnasium.__version__
    if found != GYMNASIUM_VERSION:
        sys.exit(
            f"error: found gymnasium {found} but the fixtures are pinned to gymnasium"
            f" {GYMNASIUM_VERSION}; install it with"
            f' python3 -m pip install "gymnasium=={GYMNASIUM_VERSION}"'
        )


def floats(values: Any) -> list[float]:
    """Convert a state/observation (ndarray, tuple of numpy scalars, ...) to Python floats.

    ``float()`` of a float32 or float64 value is exact, so nothing is rounded here.
    """
    return [float(v) for v in values]


def record_episode(
    env: Any, seed: int, action_range: tuple[float, float] | None
) -> Episode:
    """Run one episode of ``env`` (a ``gymnasium.make`` env) from ``reset(seed=seed)``."""
    rng = np.random.default_rng(ACTION_SEED_OFFSET + seed)
    obs, _ = env.reset(seed=seed)
    unwrapped = env.unwrapped
    episode: Episode = {
        "seed": seed,
        "initial_state": floats(unwrapped.state),
        "initial_obs": floats(obs),
        "actions": [],
        "states": [],
        "obs": [],
        "rewards": [],
        "terminated": [],
        "truncated": [],
    }
    actions: list[Any] = episode["actions"]
    n_actions = int(env.action_space.n) if action_range is None else 0
    while True:
        if action_range is None:
            discrete = int(rng.integers(0, n_actions))
            actions.append(discrete)
            step_action: Any = discrete
        else:
            # Round to f32 first and record that exact value: it is what gymnasium receives.
            a32 = np.float32(rng.uniform(action_range[0], action_range[1]))
            actions.append(float(a32))
            step_action = np.array([a32], dtype=np.float32)
        # Note on warnings: gymnasium's PassiveEnvChecker (added by gymnasium.make) deliberately
        # does not check actions against the action space ("We don't check the action as for
        # some environments then out-of-bounds values can be given"), so the out-of-bounds
        # continuous actions above emit no warning, and nothing is silenced here. Any warning
        # that does appear is unexpected and is left visible on purpose.
        obs, reward, terminated, truncated, _ = env.step(step_action)
        episode["states"].append(floats(unwrapped.state))
        episode["obs"].append(floats(obs))
        episode["rewards"].append(float(reward))
        episode["terminated"].append(bool(terminated))
        episode["truncated"].append(bool(truncated))
        if terminated or truncated:
            return episode


def record_env(env_id: str) -> Fixture:
    import gymnasium

    env = gymnasium.make(env_id)
    try:
        spec = env.spec
        if spec is None or spec.max_episode_steps is None:
            raise RuntimeError(f"{env_id} has no registered max_episode_steps")
        action_range = ENVS[env_id]
        is_discrete = isinstance(env.action_space, gymnasium.spaces.Discrete)
        if is_discrete != (action_range is None):
            raise RuntimeError(f"{env_id}: unexpected action space {env.action_space}")
        episodes = [record_episode(env, seed, action_range) for seed in SEEDS]
    finally:
        env.close()
    return {
        "gymnasium_version": GYMNASIUM_VERSION,
        "env_id": env_id,
        "max_episode_steps": int(spec.max_episode_steps),
        "episodes": episodes,
    }


def write_fixture(fixture: Fixture, out_dir: Path) -> Path:
    path = out_dir / f"{fixture['env_id']}.json"
    # Compact separators, no indentation; json writes floats with repr(), the shortest string
    # that round-trips to the same f64, so full precision is kept. allow_nan=False: a NaN or
    # inf in a fixture would be a bug (and not valid JSON).
    text = json.dumps(fixture, indent=None, separators=(",", ":"), allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(
            f"Record reference trajectories from gymnasium {GYMNASIUM_VERSION}'s classic-control"
            " environments into JSON fixtures for the Rust tests."
        )
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=(
            "output directory (default: tests/fixtures/gymnasium under the repository root;"
            " a relative path given here is taken relative to the current directory)"
        ),
    )
    parser.add_argument(
        "--env",
        action="append",
        choices=list(ENVS),
        dest="envs",
        metavar="ENV_ID",
        help=f"environment to record; repeatable (default: all of {', '.join(ENVS)})",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    check_versions()
    env_ids: list[str] = list(dict.fromkeys(args.envs)) if args.envs else list(ENVS)
    out_dir: Path = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    for env_id in env_ids:
        fixture = record_env(env_id)
        path = write_fixture(fixture, out_dir)
        lengths = [len(ep["actions"]) for ep in fixture["episodes"]]
        print(
            f"{env_id}: {len(lengths)} episodes, lengths {lengths},"
            f" {path.stat().st_size} bytes -> {path}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
