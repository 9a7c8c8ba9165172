//! Where a population's samples come from: [`PopulationSource`], and [`PerAgent`], one
//! [`Collector`] per agent (each its own envs, or its own fused policy rollout).

use rayon::prelude::*;

use crate::collect::{AgentPolicy, Collector};
use crate::error::TrainError;
use crate::learner::Learner;
use crate::rollout::{EpisodeReturns, Rollout};

/// One agent's samples of an update and the record of its finished episodes.
#[derive(Debug, Clone)]
pub struct AgentSamples {
    /// The update's samples.
    pub rollout: Rollout,
    /// Finished episodes so far.
    pub returns: EpisodeReturns,
}

/// Collects every active agent's samples for an update.
pub trait PopulationSource {
    /// Agents served.
    fn agents(&self) -> usize;
    /// Envs of each agent.
    fn envs_per_agent(&self) -> usize;
    /// The observations agent `agent`'s next actions will be chosen on, `[envs, obs_dim]`.
    fn obs(&self, agent: usize) -> &[f32];
    /// Steps `steps` steps of every agent whose `active` entry is set, each acting under
    /// its policy in `learner`, appending to its `samples` (rewards of truncated episodes
    /// plus `gamma * V(final observation)`).
    fn collect(
        &mut self,
        learner: &Learner,
        active: &[bool],
        steps_and_gamma: (usize, f32),
        samples: &mut [AgentSamples],
    ) -> Result<(), TrainError>;
}

/// One collector per agent, the agents collected in parallel over the cores.
pub struct PerAgent<C> {
    collectors: Vec<C>,
    envs: usize,
}

impl<C> PerAgent<C> {
    /// Agent `i` collects with `collectors[i]`, each stepping `envs` envs.
    pub fn new(collectors: Vec<C>, envs: usize) -> Self {
        Self { collectors, envs }
    }
}

impl<C> PopulationSource for PerAgent<C>
where
    C: for<'l> Collector<AgentPolicy<'l>> + Send,
{
    fn agents(&self) -> usize {
        self.collectors.len()
    }

    fn envs_per_agent(&self) -> usize {
        self.envs
    }

    fn obs(&self, agent: usize) -> &[f32] {
        self.collectors[agent].obs()
    }

    fn collect(
        &mut self,
        learner: &Learner,
        active: &[bool],
        steps_and_gamma: (usize, f32),
        samples: &mut [AgentSamples],
    ) -> Result<(), TrainError> {
        let collect = |(agent, (collector, samples)): (usize, (&mut C, &mut AgentSamples))| {
            let policy = AgentPolicy { learner, agent };
            collector.collect(
                &policy,
                steps_and_gamma,
                &mut samples.rollout,
                &mut samples.returns,
            )
        };
        let mut work = self
            .collectors
            .iter_mut()
            .zip(samples.iter_mut())
            .enumerate()
            .filter(|(agent, _)| active[*agent]);
        if active.iter().filter(|a| **a).count() <= 1 {
            work.try_for_each(collect)
        } else {
            work.par_bridge().map(collect).collect()
        }
    }
}
