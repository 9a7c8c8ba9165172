"""The JAX half of ``examples/ppo.py``: CleanRL ``ppo.py``'s networks, loss and update as pure
functions of one agent, and :func:`make_learner`, which vmaps them over a population of
agents (a population of one is the single agent).

The networks are plain JAX pytrees (lists of ``(W, b)`` pairs) with orthogonal initialisation,
the optimiser is optax (global-norm clipping then Adam's scaling, the annealed learning rate
applied in the update), and a whole update (GAE, ``update_epochs`` x ``num_minibatches``
gradient steps) is one function; :func:`make_learner` jits it vmapped over agents, each with
its own parameters, optimiser state, rollout, learning rate and key.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
import optax

Layer = tuple[jax.Array, jax.Array]
Params = dict[str, list[Layer]]


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
    """One agent's PPO update: GAE, then ``update_epochs`` passes over shuffled minibatches.

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

    return update


class Learner(NamedTuple):
    """A population's jitted functions, every argument and result with a leading agent axis.

    * ``init(keys) -> params``: fresh networks, one per key;
    * ``init_opt(params) -> opt_state``;
    * ``act(params, obs, keys) -> (actions, log-probs, values, next keys)``, ``obs`` of shape
      ``(agents, envs, obs_dim)``;
    * ``update(params, opt_state, rollout, learning_rates, keys) -> (params, opt_state,
      stats)``, the rollout's arrays of shape ``(agents, num_steps, envs, ...)``.
    """

    init: Callable[[jax.Array], Params]
    init_opt: Callable[[Params], optax.OptState]
    act: Callable[..., tuple[jax.Array, jax.Array, jax.Array, jax.Array]]
    update: Callable[..., tuple[Params, optax.OptState, Stats]]


def make_learner(cfg: Config, obs_dim: int, num_actions: int) -> Learner:
    """The functions of :class:`Learner` for ``cfg``, vmapped over agents and jitted."""
    optimizer = make_optimizer(cfg)
    return Learner(
        init=jax.jit(jax.vmap(lambda key: init_params(key, obs_dim, num_actions))),
        init_opt=jax.jit(jax.vmap(optimizer.init)),
        act=jax.jit(jax.vmap(policy_step)),
        update=jax.jit(jax.vmap(make_update(cfg, optimizer))),
    )
