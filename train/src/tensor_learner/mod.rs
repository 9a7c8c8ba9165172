//! [`TensorLearner`]: PPO's update for a population of `K` agents as burn tensor ops, the
//! agents a batch dimension, on any burn autodiff backend: a CubeCL device (wgpu, CUDA:
//! `cartfuse train --learner device`) or NdArray (the CPU-side check against the native
//! learner).
//!
//! The agents' parameters are one tensor `[K, P]` (each row an agent's flat vector), and
//! each layer's weights and biases are views of it (`[K, fan_in, fan_out]` and
//! `[K, 1, fan_out]`), so a layer of every agent is one batched matrix product whatever
//! `K`, and the clip and Adam run over the whole `[K, P]` in a handful of launches. Per
//! update:
//! - the agents' samples are made on the device from a rollout's trajectory there
//!   ([`targets`]: truncation bootstrap and GAE; `device_population`), or go to the
//!   device once from the host ([`samples`]): observations, actions, old
//!   log-probabilities, GAE advantages and value targets, `[K, N, ..]`;
//! - each minibatch step uploads its indices and the agents' step settings (writes, no
//!   wait), gathers the minibatch on the device, normalises its advantages per agent, and
//!   runs forward, PPO's loss, backward, the per-agent global-norm clip and Adam there
//!   ([`step`]);
//! - the loss sums are read back once, at the end; the new weights are read into the host
//!   copy ([`PopulationLearner::host`]) when the samples came from the host, whose next
//!   rollout reads it, and stay on the device when the rollout reads them there
//!   (`device_population`).
//!
//! It computes what the native [`Learner`] computes, in burn's order of rounding: the test
//! `tensor_learner_steps_as_the_native_learner` holds them within 1e-4 after an update.
//! Agents never share a number (sums run within an agent); an agent that stopped is
//! stepped with a learning rate of zero, which leaves its weights as they are.

pub mod check;
pub mod samples;
pub mod step;
pub mod targets;

use std::ops::Range;

use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Tensor, TensorData};

use crate::error::TrainError;
use crate::learner::{Learner, NetShape};
use crate::policy::to_host;
use crate::population::{HostSamples, LossSums, PopulationLearner, UpdateWork};
use crate::shape::Net;
use samples::DeviceSamples;
use step::{Adam, StepScalars};

/// The backend the learner's state lives on (autodiff's inner backend).
pub type Inner<B> = <B as AutodiffBackend>::InnerBackend;

/// One parameter tensor's place in an agent's flat vector and its shape `[rows, cols]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    range: Range<usize>,
    dims: [usize; 2],
}

/// Every parameter tensor of `shape`, in the flat order: per network and layer, the
/// weights `[fan_in, fan_out]`, then the biases `[1, fan_out]`.
pub(crate) fn blocks(shape: &NetShape) -> Vec<Block> {
    let mut blocks = Vec::new();
    for net in Net::BOTH {
        let start = shape.range(net).start;
        for layer in shape.layers(net) {
            let shift = |r: Range<usize>| start + r.start..start + r.end;
            blocks.push(Block {
                range: shift(layer.weights()),
                dims: [layer.fan_in, layer.fan_out],
            });
            blocks.push(Block {
                range: shift(layer.biases()),
                dims: [1, layer.fan_out],
            });
        }
    }
    blocks
}

/// `K` agents' actor-critics, Adam states and learning on burn backend `B`. See the
/// [module docs](self).
pub struct TensorLearner<B: AutodiffBackend> {
    host: Learner,
    device: B::Device,
    /// Every agent's flat parameters, `[K, P]`.
    params: Tensor<Inner<B>, 2>,
    /// Where each layer's weights and biases sit in a row of `params`.
    blocks: Vec<Block>,
    adam: Adam<Inner<B>>,
}

impl<B: AutodiffBackend> TensorLearner<B> {
    /// The agents of `host` (their weights; Adam's moments start at zero) on `device`.
    pub fn new(host: Learner, device: &B::Device) -> Self {
        let (shape, k) = (host.shape(), host.agents());
        let flat: Vec<f32> = (0..k).flat_map(|a| host.params(a).to_vec()).collect();
        let params = Tensor::from_data(TensorData::new(flat, [k, shape.params()]), device);
        let adam = Adam::new(&params);
        Self {
            host,
            device: device.clone(),
            params,
            blocks: blocks(&shape),
            adam,
        }
    }

    /// The device the agents' state lives on.
    pub fn device(&self) -> &B::Device {
        &self.device
    }

    /// Agents held.
    pub fn agents(&self) -> usize {
        self.host.agents()
    }

    /// Every agent's flat parameters on the device, `[K, P]` (as of the last update).
    pub fn params(&self) -> Tensor<Inner<B>, 2> {
        self.params.clone()
    }

    /// Reads the weights back into the host copy ([`PopulationLearner::host`]; one read).
    /// [`Self::update_on_device`] leaves the host copy as it was.
    pub fn read_weights(&mut self) -> Result<(), TrainError> {
        let all = to_host(self.params.clone())?;
        self.host.set_all_params(&all);
        Ok(())
    }
}

impl<B: AutodiffBackend> TensorLearner<B> {
    /// Every active agent's epochs of minibatch steps over `samples`, already on the
    /// device ([`Self::device_samples`], or uploaded); returns each agent's [`LossSums`]
    /// (one read). The new weights stay on the device ([`Self::params`]); the host copy
    /// is [`Self::read_weights`]'s to update.
    pub fn update_on_device(
        &mut self,
        samples: &DeviceSamples<Inner<B>>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError> {
        let k = self.agents();
        let mut sums: Option<Tensor<Inner<B>, 2>> = None;
        for epoch in 0..work.epochs() {
            for minibatch in 0..work.minibatches {
                let batch = samples.minibatch(work, (epoch, minibatch), &self.device);
                let scalars = StepScalars::new(work, &self.adam.advance(work), &self.device);
                let state = (&mut self.params, &mut self.adam);
                let losses = step::step::<B>(state, &self.blocks, batch, &scalars);
                sums = Some(match sums {
                    Some(sums) => sums + losses,
                    None => losses,
                });
            }
        }
        let sums = match sums {
            Some(sums) => to_host(sums)?,
            None => vec![0.0; 3 * k],
        };
        Ok(sums
            .chunks(3)
            .enumerate()
            .map(|(agent, s)| match work.active(agent) {
                true => [s[0], s[1], s[2]],
                false => [0.0; 3],
            })
            .collect())
    }
}

impl<B: AutodiffBackend> PopulationLearner for TensorLearner<B> {
    fn host(&self) -> &Learner {
        &self.host
    }

    fn update(
        &mut self,
        host: HostSamples<'_>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError> {
        let obs_dim = self.host.shape().obs_dim;
        let samples = DeviceSamples::<Inner<B>>::upload(host, work, obs_dim, &self.device);
        let sums = self.update_on_device(&samples, work)?;
        // The host samples' next rollout reads the host copy.
        self.read_weights()?;
        Ok(sums)
    }

    fn into_host(self) -> Learner {
        self.host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_an_agents_parameters() {
        let shape = NetShape::new(4, 64, 2);
        let blocks = blocks(&shape);
        assert_eq!(blocks.len(), 12);
        let mut next = 0;
        for block in &blocks {
            assert_eq!(block.range.start, next);
            assert_eq!(block.range.len(), block.dims[0] * block.dims[1]);
            next = block.range.end;
        }
        assert_eq!(next, shape.params());
        assert_eq!(blocks[0].dims, [4, 64]);
        assert_eq!(blocks[5].dims, [1, 2]);
        assert_eq!(blocks[11].dims, [1, 1]);
    }
}
