//! The native CPU runtime hosts vector envs: planned engines run through
//! [`CpuExecutor`](cartfuse_fusion::cpu::CpuExecutor), CartPole's hand-written step is
//! [`NativeEngine`], device-resident actions are checked in place.

use std::sync::Arc;

use cartfuse_fusion::cpu::CpuBuffer;
use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::{cpu::Cpu, exec::Backend};

use super::{EnvBackend, check_actions_record, hand_written_cartpole, planned_engine};
use crate::cartpole::hand_written::native::NativeEngine;
use crate::engine::{StepEngine, StepPlan};
use crate::environment::{EpisodeOptions, GraphEnv};
use crate::error::EnvError;
use crate::spaces::ActionSpace;

impl EnvBackend for Cpu {
    fn engine<E: GraphEnv>(
        &self,
        env: &E,
        n: usize,
        episode: &EpisodeOptions,
        plan: StepPlan,
        ledger: Arc<LaunchLedger>,
    ) -> Result<Box<dyn StepEngine<Self>>, EnvError> {
        if let Some(config) = hand_written_cartpole(env, episode, plan) {
            return Ok(Box::new(NativeEngine::new(self, n, &config, ledger)));
        }
        planned_engine(self, env, n, episode, plan, ledger)
    }

    fn actions_valid<E: GraphEnv>(
        &self,
        env: &E,
        actions: &CpuBuffer,
        ledger: &LaunchLedger,
    ) -> Result<bool, EnvError> {
        let ActionSpace::Discrete(space) = env.action_space() else {
            // Continuous actions are clipped to the box, as gymnasium does: any value is valid.
            return Ok(true);
        };
        let record = check_actions_record(self.buffer_len(actions));
        Ok(ledger.launch(record, || {
            actions.with_words(|words| words.iter().all(|a| *a < space.n))
        }))
    }
}
