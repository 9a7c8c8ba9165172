//! One module per strategy, each holding its [`StrategySpec`](super::spec::StrategySpec).
//! A new strategy is a new module here plus its variant in [`Strategy`](super::Strategy).

pub mod eager;
pub mod fused;
pub mod fused_steps;
pub mod horizontal;
pub mod partition;
pub mod vertical;
pub mod xla_default;
