//! PPO on cartfuse's batched environments, for one agent or a population, learnt by the
//! native batched learner or by burn.
//!
//! - [`config`]: [`PpoConfig`], every setting of a run.
//! - [`shape`]: the actor-critic's layer widths and its flat parameter layout, shared by
//!   burn's model and the native learner.
//! - [`policy`]: [`ActorCritic`], the MLP policy and value network, and the categorical
//!   draw from the counter-based generator.
//! - [`rollout`]: a rollout's samples, GAE, and the record of episode returns.
//! - [`clip`]: gradient clipping by the global norm.
//! - [`collect`]: where samples come from: a policy (burn's model or a native agent) on the
//!   host, then env steps, or the policy fused into the env's step graph.
//! - `device_collect` (GPU features): burn's policy and the env step on one CubeCL device,
//!   the samples read back once per update.
//! - `device_population` (GPU features): a population whose samples stay on the device,
//!   the fused rollout's trajectory handed to the tensor learner there.
//! - `kernel_learner` (GPU features): the population's PPO update as hand-written CubeCL
//!   kernels, one launch a minibatch step.
//! - [`ppo`]: [`train`], the loop with burn's learner (collect, then clipped-objective epochs
//!   with Adam).
//! - [`learner`]: the native learner, `K` agents' gradient steps at once on the CPU.
//! - [`tensor_learner`]: the same steps as burn tensor ops for `K` agents at once, agents a
//!   batch dimension, on any burn backend (a CubeCL device: `--learner device`).
//! - [`population`]: [`population::train_population`], `K` agents trained together (each its
//!   own seed, learning rate, entropy coefficient and clip range), one agent being a
//!   population of one.
//! - [`minibatch`]: a minibatch gathered from a rollout, advantages normalised.
//! - [`streams`]: the random streams a run derives from its seed.
//! - [`checkpoint`]: weights saved and loaded as burn records.
//!
//! burn's learner is generic over its autodiff backends (NdArray on the CPU, Wgpu, Cuda with
//! the feature); the env is any discrete-action [`cartfuse_env::VecEnv`].

pub mod checkpoint;
pub mod clip;
pub mod collect;
pub mod config;
#[cfg(feature = "cube")]
pub mod device_collect;
#[cfg(feature = "cube")]
pub mod device_fusion;
#[cfg(feature = "cube")]
pub mod device_population;
pub mod error;
#[cfg(feature = "cube")]
pub mod kernel_learner;
pub mod learner;
pub mod minibatch;
pub mod policy;
pub mod population;
pub mod ppo;
pub mod rollout;
pub mod shape;
pub mod streams;
pub mod tensor_learner;

pub use config::PpoConfig;
pub use error::TrainError;
pub use policy::ActorCritic;
#[cfg(feature = "cube")]
pub use ppo::train_device_from;
pub use ppo::{Solved, TrainReport, Trained, UpdateStats, train, train_from, train_fused_from};
