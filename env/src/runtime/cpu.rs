//! The native CPU runtime hosts vector envs: planned engines run through
//! [`CpuExecutor`](cartfuse_fusion::cpu::CpuExecutor), device-resident actions are checked in
//! place.

use cartfuse_fusion::backend::{Backend, Cpu};
use cartfuse_fusion::cpu::CpuBuffer;
use cartfuse_fusion::launch::LaunchLedger;

use super::{EnvBackend, check_actions_record};
use crate::environment::GraphEnv;
use crate::error::EnvError;
use crate::spaces::ActionSpace;

impl EnvBackend for Cpu {
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
