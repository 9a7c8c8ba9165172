//! An update's samples on the learner's device ([`DeviceSamples`]), uploaded once, and each
//! minibatch gathered from them there ([`DeviceMinibatch`]), its advantages normalised
//! per agent as [`crate::minibatch::Minibatch::gather`] normalises them.

use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor, TensorData};

use crate::population::{HostSamples, UpdateWork};

/// Every agent's samples of one update, `[K, N, ..]` (zeros for an agent that stopped).
pub struct DeviceSamples<B: Backend> {
    pub(crate) obs: Tensor<B, 3>,
    pub(crate) actions: Tensor<B, 3, Int>,
    pub(crate) old_log_probs: Tensor<B, 3>,
    pub(crate) advantages: Tensor<B, 3>,
    pub(crate) targets: Tensor<B, 3>,
}

/// One minibatch of every agent, `[K, m, ..]`.
pub struct DeviceMinibatch<B: Backend> {
    /// Observations, `[K, m, obs_dim]`.
    pub obs: Tensor<B, 3>,
    /// Actions taken, `[K, m, 1]`.
    pub actions: Tensor<B, 3, Int>,
    /// Their log-probabilities under the rollout's policy, `[K, m, 1]`.
    pub old_log_probs: Tensor<B, 3>,
    /// Advantages normalised within each agent's minibatch, `[K, m, 1]`.
    pub advantages: Tensor<B, 3>,
    /// Value targets, `[K, m, 1]`.
    pub targets: Tensor<B, 3>,
}

impl<B: Backend> DeviceSamples<B> {
    /// Uploads `host`'s samples (observations `obs_dim` wide) of `work` to `device`.
    pub fn upload(
        host: HostSamples<'_>,
        work: &UpdateWork<'_>,
        obs_dim: usize,
        device: &B::Device,
    ) -> Self {
        let k = work.agents();
        let n = work.samples_per_agent();
        let mut obs = vec![0.0f32; k * n * obs_dim];
        let mut actions = vec![0i64; k * n];
        let (mut old, mut advantages, mut targets) = (
            vec![0.0f32; k * n],
            vec![0.0f32; k * n],
            vec![0.0f32; k * n],
        );
        for agent in (0..k).filter(|&a| work.active(a)) {
            let rollout = &host.samples[agent].rollout;
            let (adv, tgt) = host.targets[agent].as_ref().expect("active");
            let rows = agent * n..(agent + 1) * n;
            obs[agent * n * obs_dim..(agent + 1) * n * obs_dim]
                .copy_from_slice(&rollout.obs[..n * obs_dim]);
            for (into, &a) in actions[rows.clone()].iter_mut().zip(&rollout.actions) {
                *into = i64::from(a);
            }
            old[rows.clone()].copy_from_slice(&rollout.log_probs[..n]);
            advantages[rows.clone()].copy_from_slice(&adv[..n]);
            targets[rows].copy_from_slice(&tgt[..n]);
        }
        let column =
            |values: Vec<f32>| Tensor::from_data(TensorData::new(values, [k, n, 1]), device);
        Self {
            obs: Tensor::from_data(TensorData::new(obs, [k, n, obs_dim]), device),
            actions: Tensor::from_data(TensorData::new(actions, [k, n, 1]), device),
            old_log_probs: column(old),
            advantages: column(advantages),
            targets: column(targets),
        }
    }

    /// Minibatch `minibatch` of epoch `epoch` of every agent (an agent that stopped gets
    /// its first sample `m` times), gathered on the device.
    pub fn minibatch(
        &self,
        work: &UpdateWork<'_>,
        (epoch, minibatch): (usize, usize),
        device: &B::Device,
    ) -> DeviceMinibatch<B> {
        let k = work.agents();
        let m = work.minibatch_size();
        let mut indices = vec![0i64; k * m];
        for agent in (0..k).filter(|&a| work.active(a)) {
            let mine = work.indices(agent, epoch, minibatch);
            for (into, &i) in indices[agent * m..(agent + 1) * m].iter_mut().zip(mine) {
                *into = i as i64;
            }
        }
        let dim = self.obs.dims()[2];
        // The observations' indices are uploaded expanded: with burn's fusion (0.21) a
        // gather through `expand` of the indices that later gathers read made those gather
        // other rows (tests/device_learner.rs).
        let obs_indices: Vec<i64> = (indices.iter())
            .flat_map(|&i| std::iter::repeat_n(i, dim))
            .collect();
        let obs_indices: Tensor<B, 3, Int> =
            Tensor::from_data(TensorData::new(obs_indices, [k, m, dim]), device);
        let indices: Tensor<B, 3, Int> =
            Tensor::from_data(TensorData::new(indices, [k, m, 1]), device);
        let pick = |t: &Tensor<B, 3>| t.clone().gather(1, indices.clone());
        let advantages = pick(&self.advantages);
        DeviceMinibatch {
            obs: self.obs.clone().gather(1, obs_indices),
            actions: self.actions.clone().gather(1, indices.clone()),
            old_log_probs: pick(&self.old_log_probs),
            advantages: normalised(advantages, m),
            targets: pick(&self.targets),
        }
    }
}

/// `advantages` (`[K, m, 1]`) less each agent's mean, over its sample standard deviation
/// (plus 1e-8).
fn normalised<B: Backend>(advantages: Tensor<B, 3>, m: usize) -> Tensor<B, 3> {
    let centred = advantages.clone() - advantages.mean_dim(1);
    let variance = centred.clone().square().sum_dim(1) / (m.max(2) - 1) as f32;
    let scale = (variance.sqrt() + 1e-8).recip();
    centred * scale
}
