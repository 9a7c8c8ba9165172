//! Brief overview: cartfuse is a runtime for batched reinforcement-learning environments on
//! CubeCL that shows, measures and exploits operator fusion. The principal type is
//! [`CartPoleVecEnv`], a batched CartPole-v1 (exact gymnasium semantics) whose whole step
//! runs as one kernel.
//!
//! This crate re-exports the workspace:
//! - [`fusion`] (`cartfuse-fusion`): launch accounting, the counter-based RNG, devices.
//! - [`env`](mod@env) (`cartfuse-env`): CartPole-v1 params, f64 reference, kernels, vector env.
//! - [`train`] (`cartfuse-train`): PPO with burn on the vector env.
//!
//! and holds the logic of the command line: [`rollout`] and [`replay`].
//!
//! ```no_run
//! use cartfuse::{CartPoleConfig, CartPoleVecEnv};
//! use cartfuse::fusion::cube::device::wgpu_client;
//!
//! let opened = wgpu_client()?;
//! let mut env = CartPoleVecEnv::on_device(&opened, 1024, CartPoleConfig::default())?;
//! let obs = env.reset(Some(42))?;
//! let out = env.step(&vec![1; 1024])?;
//! assert_eq!(out.obs.len(), obs.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod replay;
pub mod rollout;

pub use cartfuse_env as env;
pub use cartfuse_fusion as fusion;
pub use cartfuse_harness as harness;
pub use cartfuse_train as train;

#[cfg(feature = "cube")]
pub use cartfuse_env::CartPoleVecEnv;
pub use cartfuse_env::{
    AutoresetMode, CartPoleConfig, CartPoleParams, CartPoleState, DeviceActions, DeviceStep,
    EnvError, StepOutput, StepPlan,
};
