"""PPO with everything on the GPU: cartfuse's CartPole-v1 on CUDA with ``copy=False``, the
policy and the learner in JAX on the same GPU, nothing crossing the bus per step.

With ``device="cuda", copy=False`` cartfuse's ``reset`` and ``step`` return
``cartfuse.DeviceArray`` views of GPU memory, which ``jax.dlpack.from_dlpack`` takes without a
copy, and ``step`` takes the JAX array of actions the policy sampled, also without one (int32
for a discrete space). Each cartfuse step has finished on the GPU when it returns, and it
waits for the actions to be ready on CUDA's legacy default stream (JAX's ``__dlpack__``
orders that), so no other synchronisation is needed. Samples stay on the GPU: a rollout's
steps are stacked there and the update (``ppo_jax.py``: CleanRL ``ppo.py``'s networks, loss
and hyper-parameters, vmapped over a population) reads them there; only the finished
episodes' returns come back, once per rollout, for the progress line and the target.

``--device cpu`` runs the same loop over cartfuse's CPU runtime and numpy arrays (JAX on
whatever device it has), for machines without a GPU; ``--agents K`` trains K agents, seeded
``seed, seed + 1, ...``, on one batch of ``K * num_envs`` envs, as ``ppo.py`` does.

Autoresets are gymnasium's ``NEXT_STEP`` (the only mode the device views support): the step
after an episode's end resets that env, ignoring its action, so that transition is masked
out of the loss (``valid = not done[t - 1]``), and the observation that step returns is the
episode's final one, which the update bootstraps from.

Run (after ``pip install ./python "jax[cuda13]" optax`` on a machine with an NVIDIA GPU;
``jax[cuda12]`` where the driver is CUDA 12's)::

    python examples/ppo_gpu.py --device cuda
    python examples/ppo_gpu.py --device cuda --agents 64 --num-envs 8
    python examples/ppo_gpu.py --device cpu          # the same loop without a GPU
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from cartfuse import CartPoleVectorEnv, DeviceArray
from ppo_jax import Config, Rollout, make_learner


def to_jax(array: Any) -> jax.Array:
    """An env output as a JAX array: in place for a device view, copied from numpy."""
    if isinstance(array, DeviceArray):
        return jax.dlpack.from_dlpack(array)
    return jnp.asarray(array)


@jax.jit
def record(
    episode_return: jax.Array,
    prev_done: jax.Array,
    reward: jax.Array,
    terminated: jax.Array,
    truncated: jax.Array,
    next_obs: jax.Array,
) -> tuple[jax.Array, ...]:
    """One step's bookkeeping, one dispatch on the device: ``(episode returns, done,
    rewards, terminated, dones, valid, the return of each episode that ended here (NaN
    elsewhere), the next observations)``, the last a copy (the env overwrites its views at
    the next step; JAX arrays must not change)."""
    done = (terminated != 0) | (truncated != 0)
    valid = ~prev_done
    reward = reward.astype(jnp.float32)
    episode_return = episode_return + jnp.where(valid, reward, 0.0)
    finished = jnp.where(done, episode_return, jnp.nan)
    episode_return = jnp.where(done, 0.0, episode_return)
    as_float = (terminated != 0).astype(jnp.float32), done.astype(jnp.float32)
    return (
        episode_return,
        done,
        reward,
        *as_float,
        valid.astype(jnp.float32),
        finished,
        jnp.copy(next_obs),
    )


def per_agent(steps: list[jax.Array], agents: int) -> jax.Array:
    """``steps`` arrays of ``(agents * n, ...)`` as one ``(agents, steps, n, ...)`` array."""
    stacked = jnp.stack(steps)
    t, kn = stacked.shape[:2]
    return stacked.reshape(t, agents, kn // agents, *stacked.shape[2:]).swapaxes(0, 1)


@dataclasses.dataclass
class Progress:
    """Finished episodes per agent, and when each agent reached the target."""

    window: int
    target: float
    agents: int
    returns: list[deque[float]] = dataclasses.field(default_factory=list)
    solved_at: list[tuple[int, float] | None] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.returns = [deque(maxlen=self.window) for _ in range(self.agents)]
        self.solved_at = [None] * self.agents

    def add(self, finished: np.ndarray, agent_steps: int, seconds: float) -> None:
        """Appends a rollout's finished returns (``(steps, agents * n)``, NaN where none)."""
        per_env = finished.shape[1] // self.agents
        for row in finished:
            for env in np.flatnonzero(~np.isnan(row)):
                self.returns[env // per_env].append(float(row[env]))
        for i, returns in enumerate(self.returns):
            full = len(returns) == self.window
            if self.solved_at[i] is None and full and float(np.mean(returns)) >= self.target:
                self.solved_at[i] = (agent_steps, seconds)

    def means(self) -> list[float]:
        return [float(np.mean(r)) if r else float("nan") for r in self.returns]


def train(seeds: Sequence[int], cfg: Config, device: str) -> Progress:
    """Trains one agent per seed until each reaches ``cfg.target`` or the budget ends."""
    k, n, steps = len(seeds), cfg.num_envs, cfg.num_steps
    # On CUDA, copy=False keeps the outputs on the GPU; on the CPU, numpy arrays of their own.
    envs = CartPoleVectorEnv(k * n, device=device, copy=device != "cuda")
    learner = make_learner(cfg, obs_dim=4, num_actions=2)
    split = jax.vmap(jax.random.split)(jnp.stack([jax.random.PRNGKey(s) for s in seeds]))
    keys, init_keys = split[:, 0], split[:, 1]
    params = learner.init(init_keys)
    opt_state = learner.init_opt(params)
    progress = Progress(cfg.window, cfg.target, k)

    @jax.jit
    def act(params: Any, obs: jax.Array, keys: jax.Array) -> tuple[jax.Array, ...]:
        """The policy's step for every env, one dispatch: flat int32 actions, log-probs,
        values, and the next keys."""
        actions, logprobs, values, keys = learner.act(params, obs.reshape(k, n, 4), keys)
        flat = k * n
        return (
            actions.reshape(flat).astype(jnp.int32),
            logprobs.reshape(flat),
            values.reshape(flat),
            keys,
        )

    start = time.perf_counter()
    obs_views, _ = envs.reset(seed=[s + j for s in seeds for j in range(n)])
    obs = to_jax(obs_views)
    episode_return = jnp.zeros(k * n, jnp.float32)
    prev_done = jnp.zeros(k * n, bool)
    agent_steps = 0
    env_seconds = 0.0
    for update in range(cfg.num_updates):
        frac = 1.0 - update / cfg.num_updates if cfg.anneal_lr else 1.0
        columns: dict[str, list[jax.Array]] = {name: [] for name in Rollout._fields}
        finished: list[jax.Array] = []
        for _ in range(steps):
            actions, logprobs, values, keys = act(params, obs, keys)
            t0 = time.perf_counter()
            sent = actions if device == "cuda" else np.asarray(actions)
            next_views, reward, terminated, truncated, _ = envs.step(sent)
            env_seconds += time.perf_counter() - t0
            episode_return, done, *recorded, ended, next_obs = record(
                episode_return,
                prev_done,
                to_jax(reward),
                to_jax(terminated),
                to_jax(truncated),
                to_jax(next_views),
            )
            rewards, term, dones, valid = recorded
            for name, value in (
                ("obs", obs),
                ("actions", actions),
                ("logprobs", logprobs),
                ("values", values),
                ("rewards", rewards),
                ("terminated", term),
                ("dones", dones),
                ("valid", valid),
                ("next_obs", next_obs),
            ):
                columns[name].append(value)
            finished.append(ended)
            prev_done = done
            obs = next_obs
            agent_steps += n
        rollout = Rollout(**{name: per_agent(v, k) for name, v in columns.items()})
        split = jax.vmap(jax.random.split)(keys)
        keys, update_keys = split[:, 0], split[:, 1]
        rates = jnp.full((k,), cfg.learning_rate * frac, jnp.float32)
        params, opt_state, stats = learner.update(params, opt_state, rollout, rates, update_keys)
        # The one read a rollout: the returns of the episodes that ended in it.
        progress.add(np.asarray(jnp.stack(finished)), agent_steps, time.perf_counter() - start)
        if (update + 1) % cfg.log_every == 0:
            elapsed = time.perf_counter() - start
            solved = sum(s is not None for s in progress.solved_at)
            print(
                f"steps={agent_steps:7d} mean_return(median of {k})="
                f"{float(np.median(progress.means())):6.1f} solved={solved}/{k} "
                f"SPS={k * agent_steps / elapsed:9.0f} "
                f"env_SPS={k * agent_steps / env_seconds:10.0f} "
                f"v_loss={float(stats.value_loss[0]):.3f}",
                flush=True,
            )
        if all(s is not None for s in progress.solved_at):
            break
    envs.close()
    return progress


def main(argv: Sequence[str] | None = None) -> Progress:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--agents", type=int, default=1, help="agents trained together")
    parser.add_argument("--num-envs", type=int, default=4, help="envs per agent")
    parser.add_argument("--total-timesteps", type=int, default=500_000, help="per agent")
    parser.add_argument("--target", type=float, default=475.0)
    args = parser.parse_args(argv)
    if args.agents < 1 or args.num_envs < 1:
        parser.error("--agents and --num-envs must be at least 1")
    cfg = Config(num_envs=args.num_envs, total_timesteps=args.total_timesteps, target=args.target)
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; cartfuse on {args.device}")
    seeds = [args.seed + i for i in range(args.agents)]
    progress = train(seeds, cfg, args.device)
    for seed, solved in zip(seeds, progress.solved_at, strict=True):
        print(
            f"seed {seed}: "
            + (f"solved at {solved[0]} env-steps, {solved[1]:.1f} s" if solved else "not solved")
        )
    return progress


if __name__ == "__main__":
    main()
