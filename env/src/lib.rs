//! Brief overview: cartfuse-env is batched CartPole-v1 on CubeCL. The principal type is
//! [`CartPoleVecEnv`], a gymnasium-style vector env whose whole step runs as one kernel.
//!
//! - [`params`]: [`CartPoleParams`] (gymnasium's defaults, validated), [`AutoresetMode`]
//!   and [`CartPoleConfig`].
//! - [`reference`]: the f64 host reference, the oracle of every test.
//! - [`kernel`]: the hand-written `#[cube]` step and reset kernels.
//! - [`vec_env`]: the vectorized env API, host and device-resident.
//! - [`spaces`]: observation and action space descriptions.

pub mod burn_step;
pub mod engine;
pub mod error;
pub mod graph;
pub mod kernel;
pub mod params;
pub mod reference;
pub mod spaces;
pub mod vec_env;

pub use engine::StepPlan;
pub use error::EnvError;
pub use params::{AutoresetMode, CartPoleConfig, CartPoleParams};
pub use reference::CartPoleState;
pub use vec_env::{CartPoleVecEnv, DeviceActions, DeviceStep, StepOutput};
