//! The studies: each module measures one question of the report and returns plain data
//! (rows with their units in the field names) that [`crate::report`] and [`crate::plot`]
//! read. The ones that launch CubeCL kernels directly or run burn's fusion backend are
//! built with a device runtime only (the `cube` feature, which `wgpu` and `cuda` turn on).
//!
//! On any backend: [`ablation`] (the study's CartPole ladder), [`cpu`] (the native CPU
//! runtime's plans against its host roofline, `cartfuse_fusion::cpu::roofline`), [`envs`]
//! (every environment under every plan), [`crossover`] (CPU against device over n), [`policy`] and
//! [`population`] (the policy inside the rollout, PPO's time to target), [`workloads`]
//! (elementwise graphs and the transformer tail), [`burn_step`] (the CartPole step
//! in burn's tensor ops).
//!
//! On a CubeCL device: [`roofline`] (copy kernel, the driver's copy, FLOP/s), [`dispatch`]
//! (the cost of a launch), [`tail`] (the transformer tail as 4, 2 and 1 kernels), [`burn`] (burn's backends on the same step).

pub mod ablation;
#[cfg(feature = "cube")]
pub mod burn;
pub mod burn_step;
pub mod cpu;
pub mod crossover;
#[cfg(feature = "cube")]
pub mod dispatch;
pub mod envs;
pub mod policy;
pub mod population;
#[cfg(feature = "cube")]
pub mod roofline;
#[cfg(feature = "cube")]
pub mod tail;
pub mod workloads;
