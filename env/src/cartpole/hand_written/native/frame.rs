//! What one native step works on: the physics constants, the raw pointers of a step's
//! buffers ([`Frame`]) and a vector of envs' state rows ([`Rows`]).

use cartfuse_fusion::cpu::interp::simd::Simd;
use cartfuse_fusion::rng;

use super::sink::Sink;
use crate::cartpole::params::CartPoleConfig;
use crate::params::AutoresetMode;

/// The physics constants, as `f32` in the `#[cube]` kernel's order.
#[derive(Clone, Copy)]
pub(super) struct Physics {
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
    pub(super) fn of(config: &CartPoleConfig) -> Self {
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
            reset_scale: rng::symmetric_uniform_scale(p.reset_bound as f32),
            reset_bound: p.reset_bound as f32,
        }
    }
}

/// Raw pointers of one step: the actions and outputs hold exactly `n` entries, the state
/// and counters (the engine's own) `n` lanes plus a vector of padding.
#[derive(Clone, Copy)]
pub(super) struct Frame {
    pub actions: *const u32,
    pub state: [*mut f32; 4],
    pub elapsed: *mut u32,
    pub resets: *mut u32,
    pub needs_reset: *mut u32,
    pub out: Sink,
    pub n: usize,
    pub physics: Physics,
    pub key: [u32; 2],
    pub max_steps: u32,
    pub mode: AutoresetMode,
}

// SAFETY: threads write disjoint, vector-aligned env ranges; only the last range reaches
// into the state's padding past `n`, which no other range touches, and outputs past `n`
// are never written (see `Sink`).
unsafe impl Send for Frame {}
unsafe impl Sync for Frame {}

/// `[x, x_dot, theta, theta_dot]` of `V::LANES` envs.
pub(super) type Rows<V> = [<V as Simd>::F; 4];
