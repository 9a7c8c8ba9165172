"""Single-file PPO (CleanRL's ``ppo.py``) on cartfuse's CartPole-v1, beside gymnasium's own.

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
is about 125 MB of wheels (530 MB installed). The networks are plain JAX pytrees (lists of
``(W, b)`` pairs), the optimiser is optax (global-norm clipping then Adam), and a whole update
(GAE, 4 epochs x 4 minibatches) is one jitted function; acting is one jitted call per vector
step.

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
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt
import optax
from cartfuse.vector import CartPoleVectorEnv
from gymnasium import spaces
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv as GymCartPoleVectorEnv
from gymnasium.vector import AutoresetMode, VectorEnv

Layer = tuple[jax.Array, jax.Array]
Params = dict[str, list[Layer]]
FloatArray = npt.NDArray[np.float32]

BACKENDS: tuple[str, ...] = ("cartfuse", "gymnasium")
AUTORESET_MODES: dict[str, AutoresetMode] = {
    "next-step": AutoresetMode.NEXT_STEP,
    "same-step": AutoresetMode.SAME_STEP,
}


@dataclasses.dataclass(frozen=True)
class Config:
    """CleanRL ``ppo.py``'s hyper-parameters, and when to stop."""

    num_envs: int = 4
    num_steps: int = 128
    total_timesteps: int = 500_000
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    adam_eps: float = 1e-5
    target: float = 475.0
    window: int = 100
    log_every: int = 10

    @property
    def batch_size(self) -> int:
        """Transitions per rollout."""
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        """Transitions per gradient step."""
        return self.batch_size // self.num_minibatches

    @property
    def num_updates(self) -> int:
        """Rollout-and-update iterations the budget allows (the annealing horizon)."""
        return self.total_timesteps // self.batch_size


class Rollout(NamedTuple):
    """One rollout, time-major ``(num_steps, num_envs, ...)``."""

    obs: jax.Array  # the observation the action was chosen from
    actions: jax.Array
    logprobs: jax.Array
    values: jax.Array
    rewards: jax.Array
    terminated: jax.Array  # 1.0 where the step ended the episode by failure
    dones: jax.Array  # 1.0 where the step ended the episode (terminated or truncated)
    valid: jax.Array  # 0.0 for NEXT_STEP's reset steps (action ignored, reward 0)
    next_obs: jax.Array  # the observation to bootstrap from (the episode's final one)


class Batch(NamedTuple):
    """Flattened transitions with their advantages and returns."""

    obs: jax.Array
    actions: jax.Array
    logprobs: jax.Array
    values: jax.Array
    advantages: jax.Array
    returns: jax.Array
    valid: jax.Array


class Stats(NamedTuple):
    """Losses and diagnostics of one minibatch (CleanRL logs the last one)."""

    policy_loss: jax.Array
    value_loss: jax.Array
    entropy: jax.Array
    approx_kl: jax.Array
    clipfrac: jax.Array


@dataclasses.dataclass
class Result:
    """What one training run measured."""

    backend: str
    seed: int
    solved: bool
    wall_to_target: float | None  # seconds from the first step to the solving step
    steps_to_target: int | None
    env_steps: int  # env-steps run in all
    env_seconds: float  # seconds spent inside envs.step
    wall_seconds: float  # seconds the whole run took (acting, stepping, updates)
    final_mean: float  # mean return of the last `window` episodes at the end

    @property
    def env_sps(self) -> float:
        """Env-steps per second of env stepping alone."""
        return self.env_steps / self.env_seconds

    @property
    def total_sps(self) -> float:
        """Env-steps per second of the whole training loop."""
        return self.env_steps / self.wall_seconds


def init_mlp(key: jax.Array, sizes: Sequence[int], out_scale: float) -> list[Layer]:
    """A tanh MLP with orthogonal weights (gain sqrt(2) hidden, ``out_scale`` last) and zero
    biases, as CleanRL's ``layer_init``."""
    keys = jax.random.split(key, len(sizes) - 1)
    layers: list[Layer] = []
    for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
        scale = out_scale if i == len(sizes) - 2 else float(np.sqrt(2.0))
        weight = jax.nn.initializers.orthogonal(scale)(keys[i], (n_in, n_out), jnp.float32)
        layers.append((weight, jnp.zeros((n_out,), jnp.float32)))
    return layers


def init_params(key: jax.Array, obs_dim: int, num_actions: int) -> Params:
    """Separate actor (logits, gain 0.01) and critic (value, gain 1) networks, 64x64 tanh."""
    actor_key, critic_key = jax.random.split(key)
    return {
        "actor": init_mlp(actor_key, (obs_dim, 64, 64, num_actions), 0.01),
        "critic": init_mlp(critic_key, (obs_dim, 64, 64, 1), 1.0),
    }


def mlp(layers: list[Layer], x: jax.Array) -> jax.Array:
    """The MLP's output for a batch ``x``."""
    for weight, bias in layers[:-1]:
        x = jnp.tanh(x @ weight + bias)
    weight, bias = layers[-1]
    return x @ weight + bias


def value(params: Params, obs: jax.Array) -> jax.Array:
    """The critic's value of each observation (``obs.shape[:-1]``)."""
    return mlp(params["critic"], obs)[..., 0]


def log_prob(logits: jax.Array, actions: jax.Array) -> jax.Array:
    """log pi(action) under categorical ``logits``."""
    log_probs = jax.nn.log_softmax(logits)
    return jnp.take_along_axis(log_probs, actions[..., None], axis=-1)[..., 0]


@jax.jit
def policy_step(
    params: Params, obs: jax.Array, key: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Samples an action per env: ``(actions, log-probs, values, next key)``."""
    key, sample_key = jax.random.split(key)
    logits = mlp(params["actor"], obs)
    actions = jax.random.categorical(sample_key, logits)
    return actions, log_prob(logits, actions), value(params, obs), key


def make_optimizer(cfg: Config) -> optax.GradientTransformation:
    """Global-norm clipping then Adam's scaling; the (annealed) learning rate is applied in
    :func:`make_update`."""
    return optax.chain(
        optax.clip_by_global_norm(cfg.max_grad_norm), optax.scale_by_adam(eps=cfg.adam_eps)
    )


def make_update(
    cfg: Config, optimizer: optax.GradientTransformation
) -> Callable[..., tuple[Params, optax.OptState, Stats]]:
    """The jitted PPO update: GAE, then ``update_epochs`` passes over shuffled minibatches.

    Called as ``update(params, opt_state, rollout, learning_rate, key)``.
    """
    batch_size, num_mb, mb_size = cfg.batch_size, cfg.num_minibatches, cfg.minibatch_size

    def advantages(params: Params, rollout: Rollout) -> tuple[jax.Array, jax.Array]:
        next_values = value(params, rollout.next_obs)
        deltas = (
            rollout.rewards + cfg.gamma * (1.0 - rollout.terminated) * next_values - rollout.values
        )

        def backward(carry: jax.Array, step: tuple[jax.Array, jax.Array]) -> tuple[Any, Any]:
            delta, done = step
            advantage = delta + cfg.gamma * cfg.gae_lambda * (1.0 - done) * carry
            return advantage, advantage

        _, advs = jax.lax.scan(
            backward, jnp.zeros_like(deltas[0]), (deltas, rollout.dones), reverse=True
        )
        return advs, advs + rollout.values

    def loss_fn(params: Params, mb: Batch) -> tuple[jax.Array, Stats]:
        weight = mb.valid
        count = jnp.maximum(weight.sum(), 1.0)

        def mean(x: jax.Array) -> jax.Array:
            return (x * weight).sum() / count

        logits = mlp(params["actor"], mb.obs)
        new_logprob = log_prob(logits, mb.actions)
        log_probs = jax.nn.log_softmax(logits)
        entropy = mean(-(jnp.exp(log_probs) * log_probs).sum(-1))
        log_ratio = new_logprob - mb.logprobs
        ratio = jnp.exp(log_ratio)

        adv_mean = mean(mb.advantages)
        adv_std = jnp.sqrt(mean((mb.advantages - adv_mean) ** 2))
        adv = (mb.advantages - adv_mean) / (adv_std + 1e-8)
        clipped_ratio = jnp.clip(ratio, 1.0 - cfg.clip_coef, 1.0 + cfg.clip_coef)
        policy_loss = mean(jnp.maximum(-adv * ratio, -adv * clipped_ratio))

        new_value = value(params, mb.obs)
        value_error = (new_value - mb.returns) ** 2
        if cfg.clip_vloss:
            clipped_value = mb.values + jnp.clip(
                new_value - mb.values, -cfg.clip_coef, cfg.clip_coef
            )
            value_error = jnp.maximum(value_error, (clipped_value - mb.returns) ** 2)
        value_loss = 0.5 * mean(value_error)

        loss = policy_loss - cfg.ent_coef * entropy + cfg.vf_coef * value_loss
        stats = Stats(
            policy_loss=policy_loss,
            value_loss=value_loss,
            entropy=entropy,
            approx_kl=mean((ratio - 1.0) - log_ratio),
            clipfrac=mean((jnp.abs(ratio - 1.0) > cfg.clip_coef).astype(jnp.float32)),
        )
        return loss, stats

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(
        params: Params,
        opt_state: optax.OptState,
        rollout: Rollout,
        learning_rate: jax.Array,
        key: jax.Array,
    ) -> tuple[Params, optax.OptState, Stats]:
        advs, returns = advantages(params, rollout)

        def flat(x: jax.Array) -> jax.Array:
            return x.reshape((batch_size, *x.shape[2:]))

        batch = Batch(
            obs=flat(rollout.obs),
            actions=flat(rollout.actions),
            logprobs=flat(rollout.logprobs),
            values=flat(rollout.values),
            advantages=flat(advs),
            returns=flat(returns),
            valid=flat(rollout.valid),
        )

        def minibatch_step(
            carry: tuple[Params, optax.OptState], mb: Batch
        ) -> tuple[tuple[Params, optax.OptState], Stats]:
            params, opt_state = carry
            (_, stats), grads = grad_fn(params, mb)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            updates = jax.tree.map(lambda u: -learning_rate * u, updates)
            new_params = cast("Params", optax.apply_updates(params, updates))
            return (new_params, opt_state), stats

        def epoch(
            carry: tuple[Params, optax.OptState], epoch_key: jax.Array
        ) -> tuple[tuple[Params, optax.OptState], Stats]:
            perm = jax.random.permutation(epoch_key, batch_size)
            minibatches = jax.tree.map(
                lambda x: x[perm].reshape((num_mb, mb_size, *x.shape[1:])), batch
            )
            return jax.lax.scan(minibatch_step, carry, minibatches)

        keys = jax.random.split(key, cfg.update_epochs)
        (params, opt_state), stats = jax.lax.scan(epoch, (params, opt_state), keys)
        return params, opt_state, jax.tree.map(lambda s: s[-1, -1], stats)

    return jax.jit(update)


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
    seed: int,
    cfg: Config,
    autoreset: AutoresetMode,
    update_fn: Callable[..., tuple[Params, optax.OptState, Stats]],
    optimizer: optax.GradientTransformation,
) -> Result:
    """Trains from scratch on ``backend`` until the mean of the last ``cfg.window`` episode
    returns reaches ``cfg.target`` or the budget runs out."""
    envs = make_env(backend, cfg.num_envs, autoreset)
    mode = envs.metadata["autoreset_mode"]
    if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        raise ValueError(f"{backend}: autoreset mode {mode} is not handled")
    same_step = mode == AutoresetMode.SAME_STEP
    n, steps = cfg.num_envs, cfg.num_steps
    obs_shape = envs.single_observation_space.shape
    assert obs_shape is not None
    obs_dim = int(np.prod(obs_shape))
    action_space = envs.single_action_space
    assert isinstance(action_space, spaces.Discrete)
    num_actions = int(action_space.n)

    key = jax.random.PRNGKey(seed)
    key, init_key = jax.random.split(key)
    params = init_params(init_key, obs_dim, num_actions)
    opt_state = optimizer.init(params)

    obs_buf = np.zeros((steps, n, obs_dim), np.float32)
    next_obs_buf = np.zeros((steps, n, obs_dim), np.float32)
    actions_buf = np.zeros((steps, n), np.int32)
    logprobs_buf = np.zeros((steps, n), np.float32)
    values_buf = np.zeros((steps, n), np.float32)
    rewards_buf = np.zeros((steps, n), np.float32)
    terminated_buf = np.zeros((steps, n), np.float32)
    dones_buf = np.zeros((steps, n), np.float32)
    valid_buf = np.zeros((steps, n), np.float32)

    episode_return = np.zeros(n, np.float64)
    finished: collections.deque[float] = collections.deque(maxlen=cfg.window)
    prev_done = np.zeros(n, dtype=bool)
    global_step = 0
    env_seconds = 0.0
    solved_at: tuple[int, float] | None = None
    stats: Stats | None = None

    start = time.perf_counter()
    obs, _ = envs.reset(seed=seed)
    obs = np.asarray(obs, dtype=np.float32)
    for update in range(cfg.num_updates):
        frac = 1.0 - update / cfg.num_updates if cfg.anneal_lr else 1.0
        learning_rate = jnp.float32(cfg.learning_rate * frac)
        for t in range(steps):
            actions, logprobs, values, key = policy_step(params, obs, key)
            actions_np = np.asarray(actions)
            obs_buf[t] = obs
            actions_buf[t] = actions_np
            logprobs_buf[t] = np.asarray(logprobs)
            values_buf[t] = np.asarray(values)

            t0 = time.perf_counter()
            next_obs, reward, terminated, truncated, info = envs.step(actions_np)
            env_seconds += time.perf_counter() - t0
            global_step += n

            done = np.logical_or(terminated, truncated)
            # NEXT_STEP: the step after an episode's end is a reset (action ignored).
            valid = np.ones(n, dtype=bool) if same_step else ~prev_done
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
            for i in np.flatnonzero(done):
                finished.append(float(episode_return[i]))
                episode_return[i] = 0.0
            prev_done = done
            obs = np.asarray(next_obs, dtype=np.float32)

            if (
                solved_at is None
                and len(finished) == cfg.window
                and float(np.mean(finished)) >= cfg.target
            ):
                solved_at = (global_step, time.perf_counter() - start)
                break
        if solved_at is not None:
            break

        rollout = Rollout(
            obs=jnp.asarray(obs_buf),
            actions=jnp.asarray(actions_buf),
            logprobs=jnp.asarray(logprobs_buf),
            values=jnp.asarray(values_buf),
            rewards=jnp.asarray(rewards_buf),
            terminated=jnp.asarray(terminated_buf),
            dones=jnp.asarray(dones_buf),
            valid=jnp.asarray(valid_buf),
            next_obs=jnp.asarray(next_obs_buf),
        )
        key, update_key = jax.random.split(key)
        params, opt_state, stats = update_fn(params, opt_state, rollout, learning_rate, update_key)

        if (update + 1) % cfg.log_every == 0:
            elapsed = time.perf_counter() - start
            mean_return = float(np.mean(finished)) if finished else float("nan")
            print(
                f"[{backend} seed={seed}] steps={global_step:7d} "
                f"mean_return(last {len(finished)})={mean_return:6.1f} "
                f"SPS={global_step / elapsed:7.0f} env_SPS={global_step / env_seconds:9.0f} "
                f"v_loss={float(stats.value_loss):.3f} entropy={float(stats.entropy):.3f} "
                f"kl={float(stats.approx_kl):.2e} clipfrac={float(stats.clipfrac):.3f}",
                flush=True,
            )
    wall = time.perf_counter() - start
    envs.close()
    final_mean = float(np.mean(finished)) if finished else float("nan")
    print(
        f"[{backend} seed={seed}] "
        + (
            f"solved at {solved_at[0]} env-steps, {solved_at[1]:.1f} s"
            if solved_at is not None
            else f"not solved in {global_step} env-steps"
        )
        + f" (mean return of the last {len(finished)} episodes: {final_mean:.1f})",
        flush=True,
    )
    return Result(
        backend=backend,
        seed=seed,
        solved=solved_at is not None,
        wall_to_target=None if solved_at is None else solved_at[1],
        steps_to_target=None if solved_at is None else solved_at[0],
        env_steps=global_step,
        env_seconds=env_seconds,
        wall_seconds=wall,
        final_mean=final_mean,
    )


def warm_up(
    cfg: Config,
    update_fn: Callable[..., tuple[Params, optax.OptState, Stats]],
    optimizer: optax.GradientTransformation,
) -> float:
    """Compiles the jitted functions for these shapes (so no backend's timing pays for it);
    returns the seconds it took."""
    start = time.perf_counter()
    key = jax.random.PRNGKey(0)
    params = init_params(key, 4, 2)
    opt_state = optimizer.init(params)
    obs = np.zeros((cfg.num_envs, 4), np.float32)
    actions, _, _, _ = policy_step(params, obs, key)
    shape = (cfg.num_steps, cfg.num_envs)
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
    params, _, stats = update_fn(params, opt_state, rollout, jnp.float32(0.0), key)
    jax.block_until_ready((actions, params, stats))
    return time.perf_counter() - start


def print_table(results: Sequence[Result], target: float) -> None:
    """The per-backend summary (a markdown table)."""
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


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--env-backend", choices=(*BACKENDS, "both"), default="both", help="default: both"
    )
    parser.add_argument(
        "--seed", type=int, nargs="+", default=[1], help="one or more seeds (default: 1)"
    )
    parser.add_argument("--num-envs", type=int, default=Config.num_envs)
    parser.add_argument("--num-steps", type=int, default=Config.num_steps)
    parser.add_argument(
        "--total-timesteps",
        type=int,
        default=Config.total_timesteps,
        help="budget of env-steps (also the learning-rate annealing horizon)",
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
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> list[Result]:
    """Trains on each backend and seed asked for, then prints the table."""
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

    optimizer = make_optimizer(cfg)
    update_fn = make_update(cfg, optimizer)
    compile_seconds = warm_up(cfg, update_fn, optimizer)
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; compiled in "
        f"{compile_seconds:.1f} s; {cfg.num_envs} envs x {cfg.num_steps} steps, budget "
        f"{cfg.total_timesteps} env-steps, target {cfg.target:g}, autoreset {autoreset.name}",
        flush=True,
    )
    results = [
        train(backend, seed, cfg, autoreset, update_fn, optimizer)
        for seed in args.seed
        for backend in backends
    ]
    print_table(results, cfg.target)
    return results


if __name__ == "__main__":
    main()
