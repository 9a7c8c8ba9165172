//! Planning: partitioning a graph into kernels under a named strategy.
//!
//! A [`Plan`] is an ordered list of [`PlannedKernel`]s, each a set of ops with the buffers
//! it binds, grouped into launches. Every kernel records why it is a kernel of its own, so a
//! plan can explain itself (`cartfuse plan`).
//!
//! A strategy is one [`StrategySpec`] in its own module under [`strategies`], plus its
//! variant in [`Strategy`]; [`Plan::build`] (in `planner`) follows the spec.

pub mod cost;
mod error;
mod explain;
mod kernels;
mod launches;
mod options;
mod partition;
mod planned;
mod planner;
pub mod spec;
pub mod strategies;
mod strategy;
pub mod xla;

pub use error::PlanError;
pub use kernels::{PlannedKernel, PlannedLaunch, Slot};
pub use options::PlanOptions;
pub use planned::{Partition, Plan};
pub use spec::StrategySpec;
pub use strategy::Strategy;

#[cfg(test)]
mod tests;
