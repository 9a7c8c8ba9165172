//! CartPole's hand-written step, the roof every plan is measured against: one kernel doing
//! the whole step for all envs, written by hand for each runtime.
//!
//! - `kernel` and `cube` (GPU features): the `#[cube]` step and reset kernels, their device
//!   buffers and launches.
//! - [`native`]: the same step written natively for the CPU runtime.
//!
//! This module holds what both share: the `f32` constants, kernel names and the bytes each
//! launch moves.

#[cfg(feature = "cube")]
pub mod cube;
#[cfg(feature = "cube")]
pub mod kernel;
pub mod native;

use std::sync::Arc;

use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::exec::LaunchLedger;

use crate::cartpole::params::CartPoleConfig;
use crate::error::EnvError;
use crate::params::AutoresetMode;
use crate::step_engine::{HandWritten, StepEngine};

/// CartPole's hand-written step, offered by [`GraphEnv::hand_written`](crate::GraphEnv):
/// the native engine on the CPU, the `#[cube]` kernels on every CubeCL runtime.
impl HandWritten for CartPoleConfig {
    fn native(
        &self,
        cpu: &Cpu,
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Option<Box<dyn StepEngine<Cpu>>> {
        Some(Box::new(native::NativeEngine::new(cpu, n, self, ledger)))
    }

    #[cfg(feature = "cube")]
    fn cube<R: cubecl::Runtime>(
        &self,
        backend: &cartfuse_fusion::cube::Cube<R>,
        n: usize,
        ledger: Arc<LaunchLedger>,
    ) -> Option<Box<dyn StepEngine<cartfuse_fusion::cube::Cube<R>>>> {
        Some(Box::new(cube::HandWrittenEngine::new(
            backend, n, self, ledger,
        )))
    }
}

/// CartPole's constants as the hand-written kernels use them: `f32`, in the `#[cube]`
/// kernel's order, converted from the `f64` params in one place for both runtimes.
#[derive(Clone, Copy)]
pub(crate) struct Physics {
    pub gravity: f32,
    pub masspole: f32,
    pub total_mass: f32,
    pub length: f32,
    pub polemass_length: f32,
    pub force_mag: f32,
    pub tau: f32,
    pub x_threshold: f32,
    pub theta_threshold: f32,
    /// Autoresets: every component `reset_center + reset_half * draw`, `draw` in `[-1, 1)`
    /// (the default bounds, `[-reset_bound, reset_bound)`).
    pub reset_center: f32,
    pub reset_half: f32,
    /// The reward of a step, and of a terminating step.
    pub reward_step: f32,
    pub reward_terminal: f32,
}

impl Physics {
    pub(crate) fn of(config: &CartPoleConfig) -> Self {
        let p = &config.params;
        Self {
            gravity: p.gravity as f32,
            masspole: p.masspole as f32,
            total_mass: p.total_mass() as f32,
            length: p.length as f32,
            polemass_length: p.polemass_length() as f32,
            force_mag: p.force_mag as f32,
            tau: p.tau as f32,
            x_threshold: p.x_threshold as f32,
            theta_threshold: p.theta_threshold_radians as f32,
            reset_center: 0.0,
            reset_half: p.reset_bound as f32,
            reward_step: p.rewards().0 as f32,
            reward_terminal: p.rewards().1 as f32,
        }
    }
}

/// Each drawn component's `f32` centre and half width for a reset in `bounds` (the
/// default bounds where `None`), as the graphs compute them.
pub(crate) fn reset_scales(
    config: &CartPoleConfig,
    bounds: Option<&[(f64, f64)]>,
) -> Result<([f32; 4], [f32; 4]), EnvError> {
    use crate::environment::GraphEnv;
    let defaults = config.params.reset_bounds();
    let bounds = bounds.unwrap_or(&defaults);
    crate::gym_args::check_bounds(bounds, 4).map_err(EnvError::InvalidResetBounds)?;
    let (centers, halves) = crate::graph::scale_of(bounds);
    Ok((
        std::array::from_fn(|k| centers[k]),
        std::array::from_fn(|k| halves[k]),
    ))
}

const F32: u64 = 4;
const U32: u64 = 4;

/// Kernel name of the hand-written step in the launch ledger.
pub const STEP_KERNEL: &str = "cartpole_step_array";
/// Kernel name of the reset kernel in the launch ledger.
pub const RESET_KERNEL: &str = "cartpole_reset_array";

/// Bytes per env of every buffer one env owns (state, counters, key, outputs and one
/// action buffer).
pub const DEVICE_BYTES_PER_ENV: u64 =
    4 * F32 + 3 * U32 + 2 * U32 + (4 + 1 + 4) * F32 + 2 * U32 + U32;
/// The largest single buffer per env: a packed `[n, 4]` observation row.
pub const LARGEST_BUFFER_BYTES_PER_ENV: u64 = 4 * F32;

/// Bytes the step kernel reads and writes per env under `autoreset`.
///
/// Reads: action, 4 state floats, `elapsed`, `resets` (+ `needs_reset` in `NextStep`, + the
/// env's two key words where it autoresets). Writes: the same state back, the `[4]`
/// observation row, reward, terminated, truncated (+ `needs_reset` in `NextStep`, + the
/// final observation row in `SameStep`). The invalid-action flag is only written on error
/// and is not counted.
pub fn step_bytes_per_env(autoreset: AutoresetMode) -> (u64, u64) {
    let next_step = u64::from(autoreset == AutoresetMode::NextStep);
    let same_step = u64::from(autoreset == AutoresetMode::SameStep);
    let keys = 2 * U32 * (next_step + same_step);
    let read = U32 + 4 * F32 + 2 * U32 + next_step * U32 + keys;
    let written =
        4 * F32 + 2 * U32 + next_step * U32 + 4 * F32 + F32 + 2 * U32 + same_step * 4 * F32;
    (read, written)
}

/// Bytes the reset kernel reads (state, `resets`, mask, restart flag, key) and writes
/// (state, counters, observations) per env.
pub fn reset_bytes_per_env() -> (u64, u64) {
    (4 * F32 + 5 * U32, 4 * F32 + 3 * U32 + 4 * F32)
}
