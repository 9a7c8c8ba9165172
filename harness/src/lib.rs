//! cartfuse-harness measures what fusion does and writes it down: the studies of
//! `cartfuse reproduce`, the machinery that times them, and the report that reads them.
//!
//! # Module map
//!
//! Timing, shared by every study:
//! - [`profile`]: one step timed the way every table times it (JIT compile apart, repeats of
//!   at least half a second, a sync before every clock stop, median/min/max); [`work`]
//!   counts the FLOPs of a graph; with a device runtime, [`plan_profile`] times one plan of
//!   any graph the same way.
//! - [`turns`]: plans timed in turns (round-robin, median of per-round ratios), so that
//!   ratios do not depend on the machine's drift; [`cells`] builds the plan tables' cells
//!   from them.
//!
//! What is measured, one study per module under [`studies`]: the CartPole ablation, the
//! CPU runtime, every environment, the policy inside the rollout and PPO populations, the
//! transformer tail and elementwise workloads, the CPU/device crossover, and (with a device
//! runtime: the `wgpu` or `cuda` feature) the device roofline, the dispatch tax and burn's
//! backends on the same step.
//!
//! Reading the results: [`compare`] checks two runs' reports against each other; with a
//! device runtime, [`reproduce`] runs every study into one [`reproduce::Report`], which
//! [`report`] writes as markdown, JSON and CSV and [`plot`] draws.
//!
//! [`error`] holds what a measurement can end in besides a number.

pub mod cells;
pub mod compare;
pub mod error;
#[cfg(feature = "cube")]
pub mod plan_profile;
#[cfg(feature = "cube")]
pub mod plot;
pub mod profile;
#[cfg(feature = "cube")]
pub mod report;
#[cfg(feature = "cube")]
pub mod reproduce;
pub mod studies;
pub mod turns;
pub mod work;
