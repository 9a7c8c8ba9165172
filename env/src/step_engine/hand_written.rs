//! [`HandWritten`]: an environment's hand-written step, as engines for each runtime family.
//! An environment offers one through [`GraphEnv::hand_written`](crate::GraphEnv::hand_written);
//! each backend asks it for the engine of its own family, so no runtime names an
//! environment.

use std::sync::Arc;

use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::exec::LaunchLedger;

use super::StepEngine;

/// An environment's hand-written step over `n` envs on each runtime family it is written
/// for (`None`: not written for that one; the plan `hand-written` then is unavailable
/// there).
pub trait HandWritten {
    /// The step on the native CPU runtime.
    fn native(
        &self,
        cpu: &Cpu,
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Option<Box<dyn StepEngine<Cpu>>> {
        let _ = (cpu, n, ledger);
        None
    }

    /// The step on a CubeCL runtime.
    #[cfg(feature = "cube")]
    fn cube<R: cubecl::Runtime>(
        &self,
        backend: &cartfuse_fusion::cube::Cube<R>,
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Option<Box<dyn StepEngine<cartfuse_fusion::cube::Cube<R>>>> {
        let _ = (backend, n, ledger);
        None
    }
}

/// The hand-written step of an environment that has none.
#[derive(Debug, Clone, Copy)]
pub enum NoHandWritten {}

impl HandWritten for NoHandWritten {}
