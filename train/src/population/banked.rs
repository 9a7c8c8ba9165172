//! [`Banked`]: a population's envs as one batch, its policies fused into one rollout
//! ([`PolicyRollout::population`]): every step of every agent is one launch (one per `K`
//! steps under `fused-xK`), each agent's envs reading its own weights, draw key and seed.
//!
//! Agent `i`'s samples are the ones a [`FusedCollector`](crate::collect::FusedCollector)
//! of its envs alone collects, bit for bit: the banks of the rollout never mix. Agents
//! that reached the target keep stepping with their last weights (their lanes are part of
//! the launch), and their samples are dropped.

use cartfuse_env::rollout::PolicyRollout;
use cartfuse_fusion::exec::Backend as FusionBackend;

use super::source::{AgentSamples, PopulationSource};
use crate::collect::{AgentPolicy, Policy, append_trajectory};
use crate::error::TrainError;
use crate::learner::Learner;

/// A population's policies fused into one rollout. See the [module docs](self).
pub struct Banked<'r, F: FusionBackend> {
    rollout: &'r mut PolicyRollout<F>,
    /// Each agent's observations its next actions are chosen on, `[envs, obs_dim]`.
    obs: Vec<Vec<f32>>,
}

impl<'r, F: FusionBackend> Banked<'r, F> {
    /// Resets agent `a`'s envs of `rollout` from `seeds[a]`; its actions are drawn from
    /// stream `keys[a]`, policy step 0 first.
    pub fn new(
        rollout: &'r mut PolicyRollout<F>,
        seeds: &[u64],
        keys: &[[u32; 2]],
    ) -> Result<Self, TrainError> {
        rollout.set_draws_each(keys, 0)?;
        let all = rollout.reset_each(seeds)?;
        let per_agent = all.len() / rollout.agents();
        let obs = all.chunks(per_agent).map(<[f32]>::to_vec).collect();
        Ok(Self { rollout, obs })
    }
}

impl<F: FusionBackend> PopulationSource for Banked<'_, F> {
    fn agents(&self) -> usize {
        self.rollout.agents()
    }

    fn envs_per_agent(&self) -> usize {
        self.rollout.num_envs() / self.rollout.agents()
    }

    fn obs(&self, agent: usize) -> &[f32] {
        &self.obs[agent]
    }

    fn collect(
        &mut self,
        learner: &Learner,
        active: &[bool],
        (steps, gamma): (usize, f32),
        samples: &mut [AgentSamples],
    ) -> Result<(), TrainError> {
        let m = self.envs_per_agent();
        let agents = (0..self.agents()).filter(|a| active[*a]);
        load_weights(self.rollout, learner, active)?;
        let t = self.rollout.collect(steps)?;
        for agent in agents {
            let mine = t.envs(agent * m..(agent + 1) * m);
            let samples = &mut samples[agent];
            append_trajectory(
                &AgentPolicy { learner, agent },
                &mine,
                gamma,
                &mut self.obs[agent],
                (&mut samples.rollout, &mut samples.returns),
            )?;
        }
        Ok(())
    }
}

/// Loads every `active` agent's weights in `learner` into its bank of `rollout`.
pub(crate) fn load_weights<F: FusionBackend>(
    rollout: &mut PolicyRollout<F>,
    learner: &Learner,
    active: &[bool],
) -> Result<(), TrainError> {
    for agent in (0..rollout.agents()).filter(|a| active[*a]) {
        let (_, weights) = AgentPolicy { learner, agent }.rollout_weights()?;
        rollout.set_agent_weights(agent, &weights)?;
    }
    Ok(())
}
