//! What one native step works on: the raw pointers of a step's buffers ([`Frame`]) and a
//! vector of envs' state rows ([`Rows`]).

use cartfuse_fusion::cpu::interp::simd::Simd;

use super::sink::Sink;
use crate::cartpole::hand_written::Physics;
use crate::params::AutoresetMode;

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
    /// Each env's key words (`n` lanes plus padding; see [`crate::engine::LaneKeys`]).
    pub key0: *const u32,
    pub key1: *const u32,
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
