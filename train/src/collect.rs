//! Where a PPO update's samples come from: [`Collector`], with two sources, for any
//! [`Policy`] (burn's model, [`BurnPolicy`], or one agent of the native learner,
//! [`AgentPolicy`]).
//!
//! - [`HostCollector`]: the policy on the env's host observations, then one env step per
//!   rollout step (a vector env on any device): the usual loop.
//! - [`FusedCollector`]: the policy inside the env's step graph ([`PolicyRollout`]): the
//!   weights are loaded into the kernel's params once per update, and `num_steps` steps of
//!   policy + env run in `num_steps / K` calls.
//!
//! Both draw action `a` of env `i` at policy step `t` from word 0 of Threefry block `(i, t)`
//! under the same key, so from one seed they choose the same actions (to float rounding).

use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use cartfuse_env::policy::{PolicySpec, PolicyWeights};
use cartfuse_env::rollout::{PolicyRollout, Trajectory};
use cartfuse_env::{EnvBackend, GraphEnv, VecEnv};
use cartfuse_fusion::exec::Backend as FusionBackend;

use crate::error::TrainError;
use crate::learner::Learner;
use crate::policy::{ActorCritic, action_uniform, categorical, log_softmax_row, to_host};
use crate::rollout::{EpisodeReturns, Rollout};

/// What a collector needs of a policy: its outputs on host observations, and its weights as
/// the fused rollout reads them.
pub trait Policy {
    /// Logits (`[n, actions]`, flat) and values (`[n]`) of the `n` observations `obs`.
    fn evaluate(&self, obs: &[f32], n: usize) -> Result<(Vec<f32>, Vec<f32>), TrainError>;
    /// Values (`[n]`) of the `n` observations `obs`.
    fn values(&self, obs: &[f32], n: usize) -> Result<Vec<f32>, TrainError>;
    /// The policy rollout's view of the weights.
    fn rollout_weights(&self) -> Result<(PolicySpec, PolicyWeights), TrainError>;
}

/// burn's model (without autodiff) on its device.
#[derive(Debug, Clone)]
pub struct BurnPolicy<B: Backend> {
    /// The network.
    pub model: ActorCritic<B>,
    /// Where its tensors live.
    pub device: B::Device,
}

impl<B: Backend> BurnPolicy<B> {
    /// The observations as a tensor on the model's device.
    fn tensor(&self, obs: &[f32], n: usize) -> Tensor<B, 2> {
        let dim = obs.len() / n.max(1);
        Tensor::from_data(TensorData::new(obs.to_vec(), [n, dim]), &self.device)
    }
}

impl<B: Backend> Policy for BurnPolicy<B> {
    fn evaluate(&self, obs: &[f32], n: usize) -> Result<(Vec<f32>, Vec<f32>), TrainError> {
        let obs = self.tensor(obs, n);
        let logits = to_host(self.model.logits(obs.clone()))?;
        let values = to_host(self.model.value(obs))?;
        Ok((logits, values))
    }

    fn values(&self, obs: &[f32], n: usize) -> Result<Vec<f32>, TrainError> {
        to_host(self.model.value(self.tensor(obs, n)))
    }

    fn rollout_weights(&self) -> Result<(PolicySpec, PolicyWeights), TrainError> {
        self.model.rollout_weights()
    }
}

/// One agent of the native learner.
#[derive(Debug, Clone, Copy)]
pub struct AgentPolicy<'l> {
    /// The population's learner.
    pub learner: &'l Learner,
    /// The agent.
    pub agent: usize,
}

impl Policy for AgentPolicy<'_> {
    fn evaluate(&self, obs: &[f32], n: usize) -> Result<(Vec<f32>, Vec<f32>), TrainError> {
        Ok(self.learner.evaluate(self.agent, obs, n))
    }

    fn values(&self, obs: &[f32], n: usize) -> Result<Vec<f32>, TrainError> {
        Ok(self.learner.values(self.agent, obs, n))
    }

    fn rollout_weights(&self) -> Result<(PolicySpec, PolicyWeights), TrainError> {
        let params = self.learner.params(self.agent);
        self.learner.shape().rollout_weights(params)
    }
}

/// One update's worth of samples, chosen by a policy `P`.
pub trait Collector<P> {
    /// Observations the next step's actions will be chosen on, `[n, obs_dim]`.
    fn obs(&self) -> &[f32];
    /// Steps `steps` steps under `policy`, appending the samples to `rollout` (rewards of
    /// truncated episodes plus `gamma * V(final observation)`) and finished episodes to
    /// `returns`.
    fn collect(
        &mut self,
        policy: &P,
        steps_and_gamma: (usize, f32),
        rollout: &mut Rollout,
        returns: &mut EpisodeReturns,
    ) -> Result<(), TrainError>;
}

/// The policy in burn, the env stepped on its device.
pub struct HostCollector<'e, E: GraphEnv<Action = u32>, EB: EnvBackend> {
    env: &'e mut VecEnv<E, EB>,
    obs: Vec<f32>,
    key: [u32; 2],
    step: u32,
}

impl<'e, E: GraphEnv<Action = u32>, EB: EnvBackend> HostCollector<'e, E, EB> {
    /// Resets `env` from `seed`; draws actions from stream `key`, policy step 0 first.
    pub fn new(env: &'e mut VecEnv<E, EB>, seed: u64, key: [u32; 2]) -> Result<Self, TrainError> {
        let obs = env.reset(Some(seed))?;
        Ok(Self {
            env,
            obs,
            key,
            step: 0,
        })
    }
}

impl<P: Policy, E: GraphEnv<Action = u32>, EB: EnvBackend> Collector<P>
    for HostCollector<'_, E, EB>
{
    fn obs(&self) -> &[f32] {
        &self.obs
    }

    fn collect(
        &mut self,
        policy: &P,
        (steps, gamma): (usize, f32),
        rollout: &mut Rollout,
        returns: &mut EpisodeReturns,
    ) -> Result<(), TrainError> {
        let (n, dim) = (self.env.num_envs(), E::OBS_DIM);
        let mut chosen = vec![0u32; n];
        for _ in 0..steps {
            let (logits, values) = policy.evaluate(&self.obs, n)?;
            rollout.obs.extend_from_slice(&self.obs);
            for (env_index, row) in logits.chunks(logits.len() / n).enumerate() {
                let log_probs = log_softmax_row(row);
                let u = action_uniform(self.key, env_index as u32, self.step);
                let action = categorical(&log_probs, u);
                chosen[env_index] = action as u32;
                rollout.log_probs.push(log_probs[action]);
            }
            self.step = self.step.wrapping_add(1);
            rollout.actions.extend_from_slice(&chosen);
            rollout.values.extend_from_slice(&values);
            let out = self.env.step(&chosen)?;
            let final_obs = out.final_obs.as_deref().expect("SameStep autoreset");
            let mut rewards = out.reward.clone();
            bootstrap_truncated(
                policy,
                (&out.terminated, &out.truncated, final_obs),
                &mut rewards,
                gamma,
                dim,
            )?;
            for env_index in 0..n {
                let done = out.terminated[env_index] || out.truncated[env_index];
                returns.record(env_index, out.reward[env_index], done);
                rollout.dones.push(done);
            }
            rollout.rewards.extend_from_slice(&rewards);
            self.obs = out.obs;
        }
        Ok(())
    }
}

/// The policy fused into the env's step on any fusion backend.
pub struct FusedCollector<'r, F: FusionBackend> {
    rollout: &'r mut PolicyRollout<F>,
    obs: Vec<f32>,
}

impl<'r, F: FusionBackend> FusedCollector<'r, F> {
    /// Resets `rollout`'s envs from `seed`; draws actions from stream `key`, policy step 0
    /// first.
    pub fn new(
        rollout: &'r mut PolicyRollout<F>,
        seed: u64,
        key: [u32; 2],
    ) -> Result<Self, TrainError> {
        rollout.set_draws(key, 0)?;
        let obs = rollout.reset(seed)?;
        Ok(Self { rollout, obs })
    }
}

impl<P: Policy, F: FusionBackend> Collector<P> for FusedCollector<'_, F> {
    fn obs(&self) -> &[f32] {
        &self.obs
    }

    fn collect(
        &mut self,
        policy: &P,
        (steps, gamma): (usize, f32),
        rollout: &mut Rollout,
        returns: &mut EpisodeReturns,
    ) -> Result<(), TrainError> {
        let (_, weights) = policy.rollout_weights()?;
        self.rollout.set_weights(&weights)?;
        let t = self.rollout.collect(steps)?;
        append_trajectory(policy, &t, gamma, &mut self.obs, (rollout, returns))
    }
}

/// Appends trajectory `t` of a fused rollout under `policy` (its first actions chosen on
/// `obs`) to `rollout` and `returns`, the rewards of truncated episodes plus
/// `gamma * V(final observation)`; `obs` becomes the last step's observations.
pub(crate) fn append_trajectory<P: Policy>(
    policy: &P,
    t: &Trajectory,
    gamma: f32,
    obs: &mut Vec<f32>,
    (rollout, returns): (&mut Rollout, &mut EpisodeReturns),
) -> Result<(), TrainError> {
    let (n, dim, steps) = (t.num_envs, t.obs_dim, t.steps());
    // The observations each step's actions were chosen on: the last update's final
    // observations, then each step's next ones.
    rollout.obs.extend_from_slice(obs);
    rollout
        .obs
        .extend_from_slice(&t.next_obs[..(steps - 1) * n * dim]);
    rollout.actions.extend_from_slice(&t.actions);
    rollout.log_probs.extend_from_slice(&t.log_probs);
    rollout.values.extend_from_slice(&t.values);
    let mut rewards = t.rewards.clone();
    let final_obs = t.final_obs.as_deref().expect("SameStep autoreset");
    bootstrap_truncated(
        policy,
        (&t.terminated, &t.truncated, final_obs),
        &mut rewards,
        gamma,
        dim,
    )?;
    for (i, (reward, (terminated, truncated))) in t
        .rewards
        .iter()
        .zip(t.terminated.iter().zip(&t.truncated))
        .enumerate()
    {
        let done = *terminated || *truncated;
        returns.record(i % n, *reward, done);
        rollout.dones.push(done);
    }
    rollout.rewards.extend_from_slice(&rewards);
    *obs = t.next_obs[(steps - 1) * n * dim..].to_vec();
    Ok(())
}

/// Adds `gamma * V(final observation)` to the reward of every sample truncated but not
/// terminated (`ends`: terminated, truncated and final observations, sample-major).
fn bootstrap_truncated<P: Policy>(
    policy: &P,
    (terminated, truncated, final_obs): (&[bool], &[bool], &[f32]),
    rewards: &mut [f32],
    gamma: f32,
    dim: usize,
) -> Result<(), TrainError> {
    let cut: Vec<usize> = (0..rewards.len())
        .filter(|&i| truncated[i] && !terminated[i])
        .collect();
    if cut.is_empty() {
        return Ok(());
    }
    let rows: Vec<f32> = cut
        .iter()
        .flat_map(|&i| final_obs[i * dim..(i + 1) * dim].iter().copied())
        .collect();
    let values = policy.values(&rows, cut.len())?;
    for (&i, v) in cut.iter().zip(values) {
        rewards[i] += gamma * v;
    }
    Ok(())
}
