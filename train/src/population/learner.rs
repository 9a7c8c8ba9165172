//! What learns for a population: [`PopulationLearner`], one PPO update of every active
//! agent from its samples ([`HostSamples`]) in the order [`UpdateWork`] says; the native learner ([`Learner`]) steps it on
//! the CPU, [`crate::tensor_learner::TensorLearner`] as burn tensor ops on any burn
//! backend (a CubeCL device: `--learner device`).
//!
//! Every learner keeps a host copy of the agents' weights, current after each update
//! ([`PopulationLearner::host`]): the samples' sources read it (the host policy's forward
//! pass, the fused rollout's weights, GAE's bootstrap values).

use crate::error::TrainError;
use crate::learner::{Learner, StepSettings};
use crate::minibatch::Minibatch;

use super::source::AgentSamples;

/// Every agent's samples of an update on the host, with their GAE targets.
#[derive(Debug, Clone, Copy)]
pub struct HostSamples<'a> {
    /// Agent `i`'s samples of this update (ignored where `targets[i]` is `None`).
    pub samples: &'a [AgentSamples],
    /// Agent `i`'s GAE advantages and value targets, `None` for an agent that stopped.
    pub targets: &'a [Option<(Vec<f32>, Vec<f32>)>],
}

/// One update's schedule: which agents learn, each one's minibatch order and settings.
#[derive(Debug, Clone, Copy)]
pub struct UpdateWork<'a> {
    /// Whether agent `i` learns in this update.
    pub active: &'a [bool],
    /// Agent `i`'s sample order of each epoch (`orders[i][epoch]`, a permutation of its
    /// samples; empty for an agent that stopped): minibatch `b` of an epoch is its
    /// entries `b * size..(b + 1) * size`.
    pub orders: &'a [Vec<Vec<usize>>],
    /// Agent `i`'s settings for this update's steps.
    pub settings: &'a [StepSettings],
    /// Minibatches per epoch.
    pub minibatches: usize,
}

impl UpdateWork<'_> {
    /// Epochs of the update.
    pub fn epochs(&self) -> usize {
        self.orders.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Samples of each active agent (the length of its orders; 0 when none is active).
    pub fn samples_per_agent(&self) -> usize {
        self.orders
            .iter()
            .flatten()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
    }

    /// Samples per minibatch.
    pub fn minibatch_size(&self) -> usize {
        self.samples_per_agent() / self.minibatches.max(1)
    }

    /// Agents of the population.
    pub fn agents(&self) -> usize {
        self.active.len()
    }

    /// Whether agent `agent` learns in this update.
    pub fn active(&self, agent: usize) -> bool {
        self.active[agent]
    }

    /// Agent `agent`'s indices of minibatch `minibatch` of epoch `epoch`.
    pub fn indices(&self, agent: usize, epoch: usize, minibatch: usize) -> &[usize] {
        let size = self.minibatch_size();
        &self.orders[agent][epoch][minibatch * size..(minibatch + 1) * size]
    }
}

/// The sums over an update's minibatches of one agent's policy loss, value loss and
/// entropy (zeros for an agent that did not learn).
pub type LossSums = [f32; 3];

/// A learner of `K` agents, stepped one PPO update at a time.
pub trait PopulationLearner {
    /// The agents' weights on the host, current after the last update.
    fn host(&self) -> &Learner;

    /// Every active agent's epochs of minibatch steps over its `samples`; returns each
    /// agent's [`LossSums`].
    fn update(
        &mut self,
        samples: HostSamples<'_>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError>;

    /// The host learner holding the trained weights.
    fn into_host(self) -> Learner;
}

impl PopulationLearner for Learner {
    fn host(&self) -> &Learner {
        self
    }

    /// Each minibatch gathered on the host and stepped by [`Learner::step`] for every
    /// active agent at once.
    fn update(
        &mut self,
        host: HostSamples<'_>,
        work: &UpdateWork<'_>,
    ) -> Result<Vec<LossSums>, TrainError> {
        let k = self.agents();
        let mut batches = std::mem::take(&mut self.minibatches);
        batches.resize_with(k, Minibatch::default);
        let mut sums = vec![[0.0f32; 3]; k];
        for epoch in 0..work.epochs() {
            for minibatch in 0..work.minibatches {
                let mut stepped = Vec::with_capacity(k);
                for (agent, batch) in batches.iter_mut().enumerate() {
                    let Some((advantages, targets)) = &host.targets[agent] else {
                        continue;
                    };
                    let indices = work.indices(agent, epoch, minibatch);
                    let rollout = &host.samples[agent].rollout;
                    batch.gather(rollout, advantages, targets, indices);
                    stepped.push(agent);
                }
                let named: Vec<(usize, &Minibatch)> =
                    stepped.iter().map(|&a| (a, &batches[a])).collect();
                let losses = self.step(&named, work.settings);
                for (&agent, losses) in stepped.iter().zip(&losses) {
                    let parts = [losses.policy_loss, losses.value_loss, losses.entropy];
                    for (sum, part) in sums[agent].iter_mut().zip(parts) {
                        *sum += part;
                    }
                }
            }
        }
        self.minibatches = batches;
        Ok(sums)
    }

    fn into_host(self) -> Learner {
        self
    }
}
