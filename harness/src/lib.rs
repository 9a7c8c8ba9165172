//! Brief overview: cartfuse-harness measures what fusion does. The principal function is
//! [`profile::profile_cartpole`], which times a CartPole plan the way the report does:
//! JIT compile timed on its own, repeats of at least half a second, a device sync before
//! every clock stop, median, min and max.

pub mod ablation;
pub mod burn_bench;
pub mod burn_step;
pub mod cells;
pub mod compare;
pub mod cpu_study;
pub mod crossover;
pub mod dispatch;
pub mod env_study;
pub mod error;
pub mod host_roofline;
pub mod plot;
pub mod policy_study;
pub mod population_study;
pub mod profile;
pub mod report;
pub mod reproduce;
pub mod roofline;
pub mod tail;
pub mod turns;
pub mod work;
pub mod workloads;
