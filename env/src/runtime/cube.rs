//! CubeCL runtimes host vector envs: an environment's hand-written step is its
//! [`HandWritten::cube`] engine, and a check kernel covers device-resident discrete actions.
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use std::sync::Arc;

use cartfuse_fusion::cube::kernel::elementwise_launch_shape;
use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::{cube::Cube, exec::Backend};
use cubecl::prelude::*;
use cubecl::server::Handle;

use super::{EnvBackend, check_actions_record};
use crate::engine::{HandWritten, StepEngine};
use crate::environment::GraphEnv;
use crate::error::EnvError;
use crate::spaces::ActionSpace;

/// Sets `flag[0]` when any action is `>= choices` (device-resident discrete actions of
/// planned engines, checked when their outputs are read, in the same transfer).
///
/// The bound and the read are two `if`s: in a cube function `&&` evaluates both sides, so
/// `in_bounds && actions[i] >= choices` would read past the end in the launch's last cube
/// (harmless on Vulkan's robust buffer access, an illegal address on CUDA).
#[allow(clippy::collapsible_if)]
#[cube(launch_unchecked)]
pub fn check_actions_array(actions: &Array<u32>, flag: &mut Array<u32>, choices: u32) {
    if ABSOLUTE_POS < actions.len() {
        if actions[ABSOLUTE_POS] >= choices {
            flag[0] = 1u32;
        }
    }
}

impl<R: Runtime> EnvBackend for Cube<R> {
    fn hand_written<K: HandWritten>(
        &self,
        kernels: &K,
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Option<Box<dyn StepEngine<Self>>> {
        kernels.cube(self, n, ledger)
    }

    /// A CPU-emulated device (Mesa's lavapipe) allocates host memory; other devices' free
    /// memory is not reported through cubecl, so only their largest buffer is checked.
    fn memory_available(&self) -> Option<(u64, String)> {
        let description = self.description();
        description.contains("llvmpipe").then(|| {
            let memory = format!("host memory (the device is {description})");
            (crate::memory::host_available(), memory)
        })
    }

    fn flag_invalid_actions<E: GraphEnv>(
        &self,
        env: &E,
        actions: &Handle,
        flag: &Handle,
        ledger: &LaunchLedger,
    ) -> Result<(), EnvError> {
        self.write_u32(flag, &[0])?;
        let ActionSpace::Discrete(space) = env.action_space() else {
            // Continuous actions are clipped to the box, as gymnasium does: any value is valid.
            return Ok(());
        };
        let client = self.client();
        let len = self.buffer_len(actions);
        let (cube_count, cube_dim) = elementwise_launch_shape(client, len);
        let record = check_actions_record(len);
        ledger.launch(record, || unsafe {
            // SAFETY: `actions` holds `len` u32 (its own size), `flag` one.
            check_actions_array::launch_unchecked::<R>(
                client,
                cube_count,
                cube_dim,
                ArrayArg::from_raw_parts(actions.clone(), len),
                ArrayArg::from_raw_parts(flag.clone(), 1),
                space.n,
            )
        });
        Ok(())
    }
}
