//! An update's samples made on the learner's device from a population's trajectory there
//! ([`DeviceTrajectory`], as the fused rollout wrote it): truncated episodes bootstrapped
//! with the critic's value of their final observation, the critic's values of the
//! observations after the last step, and GAE ([`gae`]), each as the host computes it
//! (`collect::append_trajectory`, [`crate::rollout::Rollout::advantages`]), in the same
//! order of rounding. Nothing is read back.
//!
//! The trajectory keeps the rollout's layout, step-major over every env of every agent
//! (`[T, n, ..]`, agent `a`'s envs `a * m..(a + 1) * m`), so GAE's backward scan slices
//! whole steps; the samples are turned agent-major (`[K, T * m, ..]`, an agent's sample
//! `t * m + j` as on the host) once, at the end.

use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{BasicOps, Int, Tensor, TensorKind};

use super::samples::DeviceSamples;
use super::{Block, Inner, TensorLearner};

/// One update of a population's rollout on the device, step-major: `T` steps of `n` envs,
/// `K` agents of `m` envs each.
pub struct DeviceTrajectory<B: Backend> {
    /// The observations each step's actions were chosen on, `[T, n, obs_dim]`.
    pub obs: Tensor<B, 3>,
    /// The observations after the last step (the next update's first), `[n, obs_dim]`.
    pub next_obs: Tensor<B, 2>,
    /// Actions taken, `[T, n]`.
    pub actions: Tensor<B, 2, Int>,
    /// Their log-probabilities under the rollout's policy, `[T, n]`.
    pub log_probs: Tensor<B, 2>,
    /// The critic's values of `obs`, `[T, n]`.
    pub values: Tensor<B, 2>,
    /// Rewards, `[T, n]`.
    pub rewards: Tensor<B, 2>,
    /// Episodes that terminated at the step (0 or 1), `[T, n]`.
    pub terminated: Tensor<B, 2, Int>,
    /// Episodes that were truncated at the step (0 or 1), `[T, n]`.
    pub truncated: Tensor<B, 2, Int>,
    /// 1 where an episode ended at the step (terminated or truncated), else 0, `[T, n]`
    /// ([`ended`]).
    pub dones: Tensor<B, 2>,
    /// The observations episodes ended on (autoreset's final observations), `[T, n, obs_dim]`.
    pub final_obs: Tensor<B, 3>,
}

/// 1 where an episode ended (`terminated` or `truncated`, 0/1 flags), else 0.
pub fn ended<B: Backend>(
    terminated: &Tensor<B, 2, Int>,
    truncated: &Tensor<B, 2, Int>,
) -> Tensor<B, 2> {
    (terminated.clone() + truncated.clone())
        .clamp_max(1)
        .float()
}

/// `t` (`[T, K * m, ..]` step-major) agent-major: `[K, T * m, width]`.
fn agent_major<B: Backend, K: TensorKind<B> + BasicOps<B>>(
    t: Tensor<B, 3, K>,
    agents: usize,
) -> Tensor<B, 3, K> {
    let [steps, n, width] = t.dims();
    let m = n / agents;
    t.reshape([steps, agents, m, width])
        .swap_dims(0, 1)
        .reshape([agents, steps * m, width])
}

/// `t` (`[K, T * m, width]` agent-major) step-major: `[T, K * m, width]`.
fn step_major<B: Backend>(t: Tensor<B, 3>, steps: usize) -> Tensor<B, 3> {
    let [agents, samples, width] = t.dims();
    let m = samples / steps;
    t.reshape([agents, steps, m, width])
        .swap_dims(0, 1)
        .reshape([steps, agents * m, width])
}

/// GAE over `T` steps of `n` envs (`[T, n]` each; `dones` 1 where an episode ended) with
/// `next_values` (`[n]`) after the last step: returns the advantages and value targets,
/// computed as [`crate::rollout::Rollout::advantages`] computes them.
pub fn gae<B: Backend>(
    rewards: Tensor<B, 2>,
    values: Tensor<B, 2>,
    dones: Tensor<B, 2>,
    next_values: Tensor<B, 1>,
    (gamma, lambda): (f32, f32),
) -> (Tensor<B, 2>, Tensor<B, 2>) {
    let [steps, n] = values.dims();
    let live = dones.neg() + 1.0;
    let last_values = next_values.reshape([1, n]);
    let next = match steps {
        1 => last_values,
        _ => Tensor::cat(vec![values.clone().slice([1..steps, 0..n]), last_values], 0),
    };
    // delta = r + gamma * V(next) * live - V; A = delta + gamma * lambda * live * A(next).
    let delta = rewards + next.mul_scalar(gamma) * live.clone() - values.clone();
    let carry = live.mul_scalar(gamma * lambda);
    let mut last = Tensor::zeros([1, n], &values.device());
    let mut rows = Vec::with_capacity(steps);
    for t in (0..steps).rev() {
        let row = |x: &Tensor<B, 2>| x.clone().slice([t..t + 1, 0..n]);
        last = row(&delta) + row(&carry) * last;
        rows.push(last.clone());
    }
    rows.reverse();
    let advantages = Tensor::cat(rows, 0);
    let returns = advantages.clone() + values;
    (advantages, returns)
}

/// The critic's values of `obs` (`[K, N, obs_dim]`, agent `k`'s rows under agent `k`'s
/// weights of `params`, `[K, P]` laid out as `blocks` says), `[K, N, 1]`.
pub fn critic_values<B: Backend>(
    params: &Tensor<B, 2>,
    blocks: &[Block],
    obs: Tensor<B, 3>,
) -> Tensor<B, 3> {
    let critic = &blocks[blocks.len() / 2..];
    super::step::mlp(&super::step::views(params, critic), obs)
}

/// The critic's values of `obs` laid out as the rollout's envs (`[T, n, obs_dim]`,
/// agent-major lanes), `[T, n]`.
fn lane_values<B: Backend>(
    params: &Tensor<B, 2>,
    blocks: &[Block],
    obs: Tensor<B, 3>,
) -> Tensor<B, 2> {
    let [steps, n, _] = obs.dims();
    let agents = params.dims()[0];
    let values = critic_values(params, blocks, agent_major(obs, agents));
    step_major(values, steps).reshape([steps, n])
}

/// This update's samples of trajectory `t` under the agents' weights `params` (`[K, P]`,
/// laid out as `blocks` says), with GAE's `(gamma, lambda)`: truncated (not terminated)
/// episodes' rewards plus `gamma * V(final observation)`, advantages and value targets,
/// all on the device.
pub fn samples_of<B: Backend>(
    params: &Tensor<B, 2>,
    blocks: &[Block],
    t: DeviceTrajectory<B>,
    (gamma, lambda): (f32, f32),
) -> DeviceSamples<B> {
    let k = params.dims()[0];
    let [steps, n, dim] = t.obs.dims();
    let cut = t
        .truncated
        .clone()
        .equal_elem(1)
        .bool_and(t.terminated.clone().equal_elem(0));
    let final_values = lane_values(params, blocks, t.final_obs);
    let bootstrap = t.rewards.clone() + final_values.mul_scalar(gamma);
    let rewards = t.rewards.mask_where(cut, bootstrap);
    let next_values = lane_values(params, blocks, t.next_obs.reshape([1, n, dim]));
    let (advantages, targets) = gae(
        rewards,
        t.values,
        t.dones,
        next_values.reshape([n]),
        (gamma, lambda),
    );
    let column = |x: Tensor<B, 2>| agent_major(x.reshape([steps, n, 1]), k);
    DeviceSamples {
        obs: agent_major(t.obs, k),
        actions: agent_major(t.actions.reshape([steps, n, 1]), k),
        old_log_probs: column(t.log_probs),
        advantages: column(advantages),
        targets: column(targets),
    }
}

impl<B: AutodiffBackend> TensorLearner<B> {
    /// The critic's values of `obs` (`[K, N, obs_dim]`, agent `k`'s rows under agent `k`'s
    /// weights), `[K, N, 1]`.
    pub fn values(&self, obs: Tensor<Inner<B>, 3>) -> Tensor<Inner<B>, 3> {
        critic_values(&self.params, &self.blocks, obs)
    }

    /// This update's samples of trajectory `t` under the current weights ([`samples_of`]).
    pub fn device_samples(
        &self,
        t: DeviceTrajectory<Inner<B>>,
        gamma_lambda: (f32, f32),
    ) -> DeviceSamples<Inner<B>> {
        samples_of(&self.params, &self.blocks, t, gamma_lambda)
    }
}

#[cfg(test)]
mod tests {
    use burn::backend::NdArray;
    use burn::tensor::TensorData;

    use super::*;
    use crate::rollout::Rollout;

    type B = NdArray;

    #[test]
    fn gae_on_tensors_is_the_hosts() {
        let (steps, n) = (5, 3);
        let wave = |i: usize, scale: f32| (i as f32 * 0.7).sin() * scale;
        let mut r = Rollout::new(n, 1);
        r.values = (0..steps * n).map(|i| wave(i, 2.0)).collect();
        r.rewards = (0..steps * n).map(|i| 1.0 + wave(i + 3, 0.5)).collect();
        r.dones = (0..steps * n).map(|i| i % 4 == 1).collect();
        r.actions = vec![0; steps * n];
        let next_values = vec![0.3, -1.2, 2.5];
        let (gamma, lambda) = (0.99, 0.95);
        let (want_adv, want_ret) = r.advantages(&next_values, gamma, lambda);
        let device = Default::default();
        let grid =
            |v: &[f32]| Tensor::<B, 2>::from_data(TensorData::new(v.to_vec(), [steps, n]), &device);
        let dones: Vec<f32> = r.dones.iter().map(|&d| f32::from(u8::from(d))).collect();
        let (adv, ret) = gae(
            grid(&r.rewards),
            grid(&r.values),
            grid(&dones),
            Tensor::from_data(TensorData::new(next_values, [n]), &device),
            (gamma, lambda),
        );
        let host = |t: Tensor<B, 2>| t.into_data().to_vec::<f32>().unwrap();
        assert_eq!(host(adv), want_adv);
        assert_eq!(host(ret), want_ret);
    }

    #[test]
    fn lanes_turn_agent_major_and_back() {
        let device = Default::default();
        // 2 steps of 2 agents with 3 envs each, width 1: value = 100 t + lane.
        let values: Vec<f32> = (0..2)
            .flat_map(|t| (0..6).map(move |lane| (100 * t + lane) as f32))
            .collect();
        let t = Tensor::<B, 3>::from_data(TensorData::new(values, [2, 6, 1]), &device);
        let agents = agent_major(t.clone(), 2);
        let rows = agents.clone().into_data().to_vec::<f32>().unwrap();
        assert_eq!(
            rows,
            [0., 1., 2., 100., 101., 102., 3., 4., 5., 103., 104., 105.]
        );
        let back = step_major(agents, 2).into_data().to_vec::<f32>().unwrap();
        assert_eq!(back, t.into_data().to_vec::<f32>().unwrap());
    }
}
