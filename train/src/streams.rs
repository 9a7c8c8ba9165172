//! The random streams a run derives from its seed, one per use: the action draws (a
//! Threefry key, so the fused policy can make the same draws) and the minibatch order. The
//! weights are drawn from the seed itself ([`crate::learner::NetShape::init`]) and the envs'
//! resets from the env's own stream of the seed.

use cartfuse_fusion::rng;
use rand::SeedableRng;
use rand::rngs::StdRng;

/// Mixed into the seed for the action draws' key.
const ACTION_STREAM: u64 = 0xa11c_e5ee_d5a1_e000;
/// Mixed into the seed for the minibatch order.
const SHUFFLE_STREAM: u64 = 0x5b0f_f1e5_eed0_0001;

/// The key of the action draws of the run seeded `seed`.
pub fn action_key(seed: u64) -> [u32; 2] {
    rng::seed_key(seed ^ ACTION_STREAM)
}

/// The generator of the minibatch order of the run seeded `seed`.
pub fn shuffle_rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ SHUFFLE_STREAM)
}
