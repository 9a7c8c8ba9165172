"""PPO (CleanRL's ``ppo.py``) on cartfuse's CartPole-v1, beside gymnasium's own, for one agent
or a population of agents trained together.

Clipped PPO with GAE, separate 64x64 tanh MLPs for the actor and the critic, orthogonal
initialisation, Adam with global-norm gradient clipping and a linearly annealed learning
rate, and CleanRL's hyper-parameters for CartPole (4 envs, 128 steps a rollout, 4 minibatches,
4 epochs, clip 0.2, entropy 0.01, value 0.5, max grad norm 0.5, clipped value loss,
advantages normalised per minibatch). It trains on ``cartfuse.vector.CartPoleVectorEnv`` and,
with the same seed and settings, on gymnasium's numpy
``gymnasium.envs.classic_control.cartpole.CartPoleVectorEnv``, one after the other in the
same process, until the mean return of the last 100 finished episodes reaches ``--target``
(475, gymnasium's reward threshold), then prints a table per backend: solved or not, wall
seconds and env-steps to the target, env-steps/s of the env stepping alone.

Why JAX and not torch: PyPI's default Linux torch wheel pulls in the CUDA libraries (gigabytes
of ``nvidia-*`` wheels) even on a CPU-only machine, while ``pip install "jax[cpu]" optax``
is about 125 MB of wheels (530 MB installed). The learner lives beside this file in
``ppo_jax.py``: a whole update (GAE, 4 epochs x 4 minibatches) is one jitted function, and
acting is one jitted call per vector step, both vmapped over agents.

Populations (``--agents K``): K agents seeded ``seed, seed + 1, ...`` train together on one
cartfuse vector env of ``K * num_envs`` envs (agent ``i`` owns envs ``i * num_envs`` to
``(i + 1) * num_envs - 1``, reset with the seeds it would get alone, ``seed_i + j``; later
autoresets draw from the env's batch stream), their parameters stacked on a leading agent
axis: acting and the whole update are one vmapped call for all agents, so the population pays
the per-step Python and dispatch costs once. Each agent's time and env-steps to the target are
reported beside the single-agent runs, and the run ends when every agent has reached it.

Autoresets: both envs use gymnasium 1.x's default ``AutoresetMode.NEXT_STEP`` (gymnasium's
``CartPoleVectorEnv`` has no other mode). After an episode ends at step ``t`` the observation
returned is that episode's final one, and the next ``step`` ignores its action, resets the
env and returns reward 0 with ``terminated = truncated = False``. The script therefore

* masks that reset step's transition out of every loss (``valid = not done[t - 1]``), and out
  of the episode returns;
* bootstraps from ``V(obs[t + 1])``, which under ``NEXT_STEP`` is the final observation of
  the episode: a truncated episode (500 steps) is bootstrapped, a terminated one is not
  (``reward + gamma * (1 - terminated) * V(next)``), and the advantage recursion stops at
  every episode end (``terminated or truncated``).

``--autoreset same-step`` runs cartfuse under ``AutoresetMode.SAME_STEP`` instead (every
transition valid, bootstrapping from ``info["final_obs"]``); gymnasium's numpy env does not
have that mode, so it needs ``--env-backend cartfuse``.

Run (after ``pip install ./python "jax[cpu]" optax``)::

    python examples/ppo.py                      # both backends, seed 1
    python examples/ppo.py --seed 1 2 3         # several seeds, one table
    python examples/ppo.py --env-backend cartfuse --num-envs 8
    python examples/ppo.py --env-backend cartfuse --agents 16   # seed 1 alone, then 16 agents
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt
from cartfuse.vector import CartPoleVectorEnv
from gymnasium import spaces
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv as GymCartPoleVectorEnv
from gymnasium.vector import AutoresetMode, VectorEnv
from ppo_jax import Config, Learner, Rollout, make_learner

FloatArray = npt.NDArray[np.float32]

BACKENDS: tuple[str, ...] = ("cartfuse", "gymnasium")
AUTORESET_MODES: dict[str, AutoresetMode] = {
    "next-step": AutoresetMode.NEXT_STEP,
    "same-step": AutoresetMode.SAME_STEP,
}


@dataclasses.dataclass
class Result:
    """What one agent's training measured."""

    backend: str  # the env backend, with the population's size when there are several agents
    seed: int
    solved: bool
    wall_to_target: float | None  # seconds from the first step to the solving step
    steps_to_target: int | None  # the agent's own env-steps
    env_steps: int  # env-steps the agent ran in all
    env_seconds: float  # seconds spent inside envs.step (for the whole population)
    wall_seconds: float  # seconds the whole run took (acting, stepping, updates)
    final_mean: float  # mean return of the last `window` episodes at the end
    agents: int = 1  # agents trained together in the run

    @property
    def env_sps(self) -> float:
        """Env-steps per second of env stepping alone (all agents' envs)."""
        return self.agents * self.env_steps / self.env_seconds

    @property
    def total_sps(self) -> float:
        """Env-steps per second of the whole training loop (all agents)."""
        return self.agents * self.env_steps / self.wall_seconds


def make_env(backend: str, num_envs: int, autoreset: AutoresetMode) -> VectorEnv[Any, Any, Any]:
    """``num_envs`` CartPole-v1 envs of ``backend`` (500-step truncation for both)."""
    if backend == "cartfuse":
        return CartPoleVectorEnv(num_envs, device="cpu", autoreset_mode=autoreset)
    if backend == "gymnasium":
        if autoreset != AutoresetMode.NEXT_STEP:
            raise ValueError("gymnasium's CartPoleVectorEnv only autoresets in NEXT_STEP mode")
        return GymCartPoleVectorEnv(num_envs=num_envs, max_episode_steps=500)
    raise ValueError(f"unknown backend {backend!r}")


def train(
    backend: str,
    seeds: Sequence[int],
    cfg: Config,
    autoreset: AutoresetMode,
    learner: Learner,
) -> list[Result]:
    """Trains one agent per seed from scratch on ``backend`` (together, on one vector env)
    until each agent's mean of its last ``cfg.window`` episode returns reaches ``cfg.target``
    or the budget runs out; one :class:`Result` per agent."""
    k, n, steps = len(seeds), cfg.num_envs, cfg.num_steps
    envs = make_env(backend, k * n, autoreset)
    mode = envs.metadata["autoreset_mode"]
    if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        raise ValueError(f"{backend}: autoreset mode {mode} is not handled")
    same_step = mode == AutoresetMode.SAME_STEP
    obs_shape = envs.single_observation_space.shape
    assert obs_shape is not None
    obs_dim = int(np.prod(obs_shape))
    assert isinstance(envs.single_action_space, spaces.Discrete)

    split = jax.vmap(jax.random.split)(jnp.stack([jax.random.PRNGKey(s) for s in seeds]))
    keys, init_keys = split[:, 0], split[:, 1]
    params = learner.init(init_keys)
    opt_state = learner.init_opt(params)

    def buffer(*shape: int, dtype: type = np.float32) -> npt.NDArray[Any]:
        return np.zeros((steps, k * n, *shape), dtype)

    obs_buf, next_obs_buf = buffer(obs_dim), buffer(obs_dim)
    actions_buf = buffer(dtype=np.int32)
    logprobs_buf, values_buf, rewards_buf = buffer(), buffer(), buffer()
    terminated_buf, dones_buf, valid_buf = buffer(), buffer(), buffer()

    episode_return = np.zeros(k * n, np.float64)
    finished: list[collections.deque[float]] = [
        collections.deque(maxlen=cfg.window) for _ in range(k)
    ]
    prev_done = np.zeros(k * n, dtype=bool)
    agent_steps = 0
    env_seconds = 0.0
    solved_at: list[tuple[int, float] | None] = [None] * k

    def per_agent(x: npt.NDArray[Any]) -> jax.Array:
        """``(steps, k * n, ...)`` as ``(k, steps, n, ...)``."""
        return jnp.asarray(x.reshape(steps, k, n, *x.shape[2:]).swapaxes(0, 1))

    start = time.perf_counter()
    # Agent i's envs get the seeds they would get alone (gymnasium: env j of a run seeded s
    # is seeded s + j); a list of seeds is cartfuse's (gymnasium's numpy env takes an int).
    seed: int | list[int] = seeds[0] if k == 1 else [s + j for s in seeds for j in range(n)]
    obs, _ = envs.reset(seed=seed)
    obs = np.asarray(obs, dtype=np.float32)
    for update in range(cfg.num_updates):
        frac = 1.0 - update / cfg.num_updates if cfg.anneal_lr else 1.0
        learning_rates = jnp.full((k,), cfg.learning_rate * frac, jnp.float32)
        for t in range(steps):
            actions, logprobs, values, keys = learner.act(
                params, jnp.asarray(obs.reshape(k, n, obs_dim)), keys
            )
            actions_np = np.asarray(actions).reshape(k * n)
            obs_buf[t] = obs
            actions_buf[t] = actions_np
            logprobs_buf[t] = np.asarray(logprobs).reshape(k * n)
            values_buf[t] = np.asarray(values).reshape(k * n)

            t0 = time.perf_counter()
            next_obs, reward, terminated, truncated, info = envs.step(actions_np)
            env_seconds += time.perf_counter() - t0
            agent_steps += n

            done = np.logical_or(terminated, truncated)
            # NEXT_STEP: the step after an episode's end is a reset (action ignored).
            valid = np.ones(k * n, dtype=bool) if same_step else ~prev_done
            bootstrap_obs = next_obs
            if same_step and done.any():
                bootstrap_obs = np.array(next_obs, dtype=np.float32)
                ended = np.flatnonzero(done)
                bootstrap_obs[ended] = np.stack(info["final_obs"][ended])
            next_obs_buf[t] = bootstrap_obs
            rewards_buf[t] = reward
            terminated_buf[t] = terminated
            dones_buf[t] = done
            valid_buf[t] = valid

            episode_return += np.where(valid, reward, 0.0)
            for e in np.flatnonzero(done):
                finished[e // n].append(float(episode_return[e]))
                episode_return[e] = 0.0
            prev_done = done
            obs = np.asarray(next_obs, dtype=np.float32)

            now = time.perf_counter() - start
            for i, returns in enumerate(finished):
                if (
                    solved_at[i] is None
                    and len(returns) == cfg.window
                    and float(np.mean(returns)) >= cfg.target
                ):
                    solved_at[i] = (agent_steps, now)
            if all(s is not None for s in solved_at):
                break
        if all(s is not None for s in solved_at):
            break

        rollout = Rollout(
            obs=per_agent(obs_buf),
            actions=per_agent(actions_buf),
            logprobs=per_agent(logprobs_buf),
            values=per_agent(values_buf),
            rewards=per_agent(rewards_buf),
            terminated=per_agent(terminated_buf),
            dones=per_agent(dones_buf),
            valid=per_agent(valid_buf),
            next_obs=per_agent(next_obs_buf),
        )
        split = jax.vmap(jax.random.split)(keys)
        keys, update_keys = split[:, 0], split[:, 1]
        params, opt_state, stats = learner.update(
            params, opt_state, rollout, learning_rates, update_keys
        )

        if (update + 1) % cfg.log_every == 0:
            elapsed = time.perf_counter() - start
            means = [float(np.mean(f)) if f else float("nan") for f in finished]
            print(
                f"[{label(backend, k)} seed={seeds[0]}] steps={agent_steps:7d} "
                f"mean_return(median of {k})={float(np.median(means)):6.1f} "
                f"solved={sum(s is not None for s in solved_at)}/{k} "
                f"SPS={k * agent_steps / elapsed:7.0f} "
                f"env_SPS={k * agent_steps / env_seconds:9.0f} "
                f"v_loss={float(stats.value_loss[0]):.3f} "
                f"entropy={float(stats.entropy[0]):.3f}",
                flush=True,
            )
    wall = time.perf_counter() - start
    envs.close()
    results = []
    for i, seed in enumerate(seeds):
        final_mean = float(np.mean(finished[i])) if finished[i] else float("nan")
        solved = solved_at[i]
        print(
            f"[{label(backend, k)} seed={seed}] "
            + (
                f"solved at {solved[0]} env-steps, {solved[1]:.1f} s"
                if solved is not None
                else f"not solved in {agent_steps} env-steps"
            )
            + f" (mean return of the last {len(finished[i])} episodes: {final_mean:.1f})",
            flush=True,
        )
        results.append(
            Result(
                backend=label(backend, k),
                seed=seed,
                solved=solved is not None,
                wall_to_target=None if solved is None else solved[1],
                steps_to_target=None if solved is None else solved[0],
                env_steps=agent_steps,
                env_seconds=env_seconds,
                wall_seconds=wall,
                final_mean=final_mean,
                agents=k,
            )
        )
    return results


def label(backend: str, agents: int) -> str:
    """The backend's name, with the population's size when it has several agents."""
    return backend if agents == 1 else f"{backend} (population of {agents})"


def warm_up(cfg: Config, learner: Learner, agents: int) -> float:
    """Compiles the jitted functions for ``agents`` agents (so no timing pays for it);
    returns the seconds it took."""
    start = time.perf_counter()
    keys = jnp.stack([jax.random.PRNGKey(i) for i in range(agents)])
    params = learner.init(keys)
    opt_state = learner.init_opt(params)
    obs = jnp.zeros((agents, cfg.num_envs, 4), jnp.float32)
    actions, _, _, _ = learner.act(params, obs, keys)
    shape = (agents, cfg.num_steps, cfg.num_envs)
    zeros = jnp.zeros(shape, jnp.float32)
    rollout = Rollout(
        obs=jnp.zeros((*shape, 4), jnp.float32),
        actions=jnp.zeros(shape, jnp.int32),
        logprobs=zeros,
        values=zeros,
        rewards=zeros,
        terminated=zeros,
        dones=zeros,
        valid=jnp.ones(shape, jnp.float32),
        next_obs=jnp.zeros((*shape, 4), jnp.float32),
    )
    lrs = jnp.zeros((agents,), jnp.float32)
    params, _, stats = learner.update(params, opt_state, rollout, lrs, keys)
    jax.block_until_ready((actions, params, stats))
    return time.perf_counter() - start


def print_table(results: Sequence[Result], target: float) -> None:
    """Every agent's row (a markdown table), then each population's summary beside the
    single agents'."""
    print()
    print(
        f"| backend | seed | solved (>= {target:g}) | wall s to target | env-steps to target "
        "| env-steps/s, env stepping alone | env-steps/s, whole loop | final mean return |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for r in results:
        wall = "-" if r.wall_to_target is None else f"{r.wall_to_target:.1f}"
        steps = "-" if r.steps_to_target is None else f"{r.steps_to_target}"
        print(
            f"| {r.backend} | {r.seed} | {'yes' if r.solved else 'no'} | {wall} | {steps} "
            f"| {r.env_sps:.3g} | {r.total_sps:.0f} | {r.final_mean:.1f} |"
        )
    singles = [r for r in results if r.agents == 1 and r.wall_to_target is not None]
    for backend in dict.fromkeys(r.backend for r in results if r.agents > 1):
        runs = [r for r in results if r.backend == backend]
        times = [r.wall_to_target for r in runs if r.wall_to_target is not None]
        line = (
            f"{backend}: {len(times)} of {len(runs)} agents reached {target:g}, "
            f"{runs[0].wall_seconds:.1f} s for the whole population"
        )
        if times:
            line += f" (median agent {float(np.median(times)):.1f} s to the target)"
        if singles:
            alone = float(np.median([r.wall_to_target for r in singles]))
            line += f"; a single agent took {alone:.1f} s (median of {len(singles)} runs)"
        print(line + ".")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--env-backend", choices=(*BACKENDS, "both"), default="both", help="default: both"
    )
    parser.add_argument(
        "--seed", type=int, nargs="+", default=[1], help="one or more seeds (default: 1)"
    )
    parser.add_argument(
        "--agents",
        type=int,
        default=0,
        help="also train a population of this many agents together on cartfuse, seeded from "
        "the first --seed (default: 0, none)",
    )
    parser.add_argument("--num-envs", type=int, default=Config.num_envs)
    parser.add_argument("--num-steps", type=int, default=Config.num_steps)
    parser.add_argument(
        "--total-timesteps",
        type=int,
        default=Config.total_timesteps,
        help="budget of env-steps per agent (also the learning-rate annealing horizon)",
    )
    parser.add_argument("--learning-rate", type=float, default=Config.learning_rate)
    parser.add_argument("--target", type=float, default=Config.target)
    parser.add_argument(
        "--autoreset",
        choices=tuple(AUTORESET_MODES),
        default="next-step",
        help="same-step: cartfuse only (gymnasium's numpy env has NEXT_STEP only)",
    )
    parser.add_argument("--log-every", type=int, default=Config.log_every, help="updates")
    args = parser.parse_args(argv)
    if args.agents < 0 or args.agents == 1:
        parser.error("--agents must be 0 (no population) or at least 2")
    return args


def main(argv: Sequence[str] | None = None) -> list[Result]:
    """Trains on each backend and seed asked for, then the population if asked, then prints
    the table."""
    args = parse_args(argv)
    cfg = Config(
        num_envs=args.num_envs,
        num_steps=args.num_steps,
        total_timesteps=args.total_timesteps,
        learning_rate=args.learning_rate,
        target=args.target,
        log_every=args.log_every,
    )
    if cfg.batch_size % cfg.num_minibatches:
        raise SystemExit("num_envs * num_steps must be a multiple of 4 (the minibatches)")
    backends = BACKENDS if args.env_backend == "both" else (args.env_backend,)
    autoreset = AUTORESET_MODES[args.autoreset]
    if autoreset != AutoresetMode.NEXT_STEP and "gymnasium" in backends:
        raise SystemExit("--autoreset same-step needs --env-backend cartfuse")

    learner = make_learner(cfg, obs_dim=4, num_actions=2)
    sizes = [1, args.agents] if args.agents else [1]
    compile_seconds = sum(warm_up(cfg, learner, k) for k in sizes)
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; compiled in "
        f"{compile_seconds:.1f} s; {cfg.num_envs} envs x {cfg.num_steps} steps, budget "
        f"{cfg.total_timesteps} env-steps, target {cfg.target:g}, autoreset {autoreset.name}",
        flush=True,
    )
    results = [
        result
        for seed in args.seed
        for backend in backends
        for result in train(backend, [seed], cfg, autoreset, learner)
    ]
    if args.agents:
        seeds = [args.seed[0] + i for i in range(args.agents)]
        results += train("cartfuse", seeds, cfg, autoreset, learner)
    print_table(results, cfg.target)
    return results


if __name__ == "__main__":
    main()
