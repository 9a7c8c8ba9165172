//! Options every environment shares: how a vector env restarts finished episodes.

/// What happens when an episode ends inside a vector env.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum AutoresetMode {
    /// gymnasium 1.x vector default: the step after a done resets that env, ignores its
    /// action and returns reward 0 with `terminated = truncated = false`.
    #[default]
    NextStep,
    /// gymnax: a done env is reset in the same step; its last observation is returned as
    /// the final observation beside the new one.
    SameStep,
    /// No automatic reset: a done env keeps integrating until the caller resets or
    /// overwrites it (used by replay, where each lane stops at its first done).
    Disabled,
}

pub use crate::cartpole::params::{CartPoleConfig, CartPoleParams};
