//! PPO on cartfuse's batched environments, learnt with burn.
//!
//! - [`config`]: [`PpoConfig`], every setting of a run.
//! - [`policy`]: [`ActorCritic`], the MLP policy and value network, and the categorical
//!   draw from the counter-based generator.
//! - [`rollout`]: a rollout's samples, GAE, and the record of episode returns.
//! - [`clip`]: gradient clipping by the global norm.
//! - [`collect`]: where samples come from: burn's policy + env steps, or the policy fused
//!   into the env's step graph.
//! - [`device_collect`]: burn's policy and the env step on one CubeCL device, the samples
//!   read back once per update.
//! - [`ppo`]: [`train`], the loop (collect, then clipped-objective epochs with Adam).
//! - [`checkpoint`]: weights saved and loaded as burn records.
//!
//! The learner is generic over burn's autodiff backends (NdArray on the CPU, Wgpu, Cuda
//! with the feature); the env is any discrete-action [`cartfuse_env::VecEnv`].

pub mod checkpoint;
pub mod clip;
pub mod collect;
pub mod config;
pub mod device_collect;
pub mod error;
pub mod learner;
pub mod minibatch;
pub mod policy;
pub mod population;
pub mod ppo;
pub mod rollout;
pub mod streams;

pub use config::PpoConfig;
pub use error::TrainError;
pub use policy::ActorCritic;
pub use ppo::{
    Solved, TrainReport, Trained, UpdateStats, train, train_device_from, train_from,
    train_fused_from,
};
