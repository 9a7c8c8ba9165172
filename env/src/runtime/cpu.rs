//! The native CPU runtime hosts vector envs: planned engines run through
//! the one [`Executor`](cartfuse_fusion::exec::Executor), CartPole's hand-written step is
//! [`NativeEngine`], device-resident actions are checked in place.

use std::sync::Arc;

use cartfuse_fusion::cpu::CpuBuffer;
use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::{cpu::Cpu, exec::Backend};

use super::{EnvBackend, check_actions_record};
use crate::cartpole::CartPoleConfig;
use crate::cartpole::hand_written::native::NativeEngine;
use crate::engine::StepEngine;
use crate::environment::GraphEnv;
use crate::error::EnvError;
use crate::spaces::ActionSpace;

impl EnvBackend for Cpu {
    fn hand_written_cartpole(
        &self,
        n: usize,
        config: &CartPoleConfig,
        ledger: Arc<LaunchLedger>,
    ) -> Box<dyn StepEngine<Self>> {
        Box::new(NativeEngine::new(self, n, config, ledger))
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
