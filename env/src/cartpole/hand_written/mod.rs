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

use crate::cartpole::params::CartPoleConfig;
use crate::error::EnvError;
use crate::params::AutoresetMode;

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
    pub reset_scale: f32,
    pub reset_bound: f32,
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
            reset_scale: cartfuse_fusion::rng::symmetric_uniform_scale(p.reset_bound as f32),
            reset_bound: p.reset_bound as f32,
        }
    }
}

const F32: u64 = 4;
const U32: u64 = 4;

/// Why a hand-written engine (device or native) refuses a masked reset.
pub(crate) fn masked_reset_unsupported() -> EnvError {
    EnvError::Unsupported(
        "the hand-written kernel resets every env; reset a subset with a graph plan".into(),
    )
}

/// Kernel name of the hand-written step in the launch ledger.
pub const STEP_KERNEL: &str = "cartpole_step_array";
/// Kernel name of the reset kernel in the launch ledger.
pub const RESET_KERNEL: &str = "cartpole_reset_array";

/// Bytes per env of every buffer one env owns (state, outputs and one action buffer).
pub const DEVICE_BYTES_PER_ENV: u64 = 4 * F32 + 3 * U32 + (4 + 1 + 4) * F32 + 2 * U32 + U32;
/// The largest single buffer per env: a packed `[n, 4]` observation row.
pub const LARGEST_BUFFER_BYTES_PER_ENV: u64 = 4 * F32;

/// Bytes the step kernel reads and writes per env under `autoreset`.
///
/// Reads: action, 4 state floats, `elapsed`, `resets` (+ `needs_reset` in `NextStep`).
/// Writes: the same state back, the `[4]` observation row, reward, terminated, truncated
/// (+ `needs_reset` in `NextStep`, + the final observation row in `SameStep`). The
/// invalid-action flag is only written on error and is not counted.
pub fn step_bytes_per_env(autoreset: AutoresetMode) -> (u64, u64) {
    let next_step = u64::from(autoreset == AutoresetMode::NextStep);
    let same_step = u64::from(autoreset == AutoresetMode::SameStep);
    let read = U32 + 4 * F32 + 2 * U32 + next_step * U32;
    let written =
        4 * F32 + 2 * U32 + next_step * U32 + 4 * F32 + F32 + 2 * U32 + same_step * 4 * F32;
    (read, written)
}

/// Bytes the reset kernel reads (`resets`) and writes (state, counters, observations) per env.
pub fn reset_bytes_per_env() -> (u64, u64) {
    (U32, 4 * F32 + 3 * U32 + 4 * F32)
}
