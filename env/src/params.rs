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

/// Checks that every named param is finite, naming the first that is not.
pub fn check_finite(params: &[(&'static str, f64)]) -> Result<(), crate::error::EnvError> {
    match params.iter().find(|(_, value)| !value.is_finite()) {
        Some(&(name, value)) => Err(crate::error::EnvError::InvalidParam {
            name,
            value,
            expected: "a finite number",
        }),
        None => Ok(()),
    }
}

/// Checks that `value` (the param `name`) is above 0.
pub fn check_positive(name: &'static str, value: f64) -> Result<(), crate::error::EnvError> {
    if value > 0.0 {
        return Ok(());
    }
    Err(crate::error::EnvError::InvalidParam {
        name,
        value,
        expected: "a finite number > 0",
    })
}

/// Named params as the graphs read them (`f32`).
pub fn f32_graph_params(
    params: &[(&'static str, f64)],
) -> Vec<(&'static str, cartfuse_fusion::graph::Scalar)> {
    params
        .iter()
        .map(|&(name, value)| (name, cartfuse_fusion::graph::Scalar::F32(value as f32)))
        .collect()
}
