//! Brief overview: cartfuse-env is batched reinforcement-learning environments whose step is
//! written once, as a graph, and runs under every fusion plan on every backend. The
//! principal types are [`GraphEnv`] (what an environment implements) and [`VecEnv`] (a
//! gymnasium-style vector env of any environment on any backend).
//!
//! - [`environment`]: the [`GraphEnv`] trait and [`EpisodeOptions`].
//! - [`graph`]: step and reset graphs of any environment; the episode logic written once.
//! - [`gym_args`]: gymnasium's constructor arguments and reset options of an environment.
//! - [`step_engine`]: the [`StepEngine`](step_engine::StepEngine) trait every engine
//!   implements, and the hand-written step an environment may offer.
//! - [`engine`]: the planned engine and [`StepPlan`].
//! - [`runtime`]: what a backend adds to host a vector env ([`EnvBackend`]).
//! - [`vec_env`]: the vectorized env API, host and device-resident.
//! - [`host_outputs`]: [`HostOutputs`], caller-owned memory a step writes its outputs into.
//! - [`memory`]: a batch's buffers checked against the memory available before allocation.
//! - [`spaces`]: observation and action spaces.
//! - [`params`]: the shared [`AutoresetMode`].
//! - [`registry`]: every environment by gymnasium id, for the CLI and bindings.
//! - [`conformance`]: the checks every environment passes (plans against its reference).
//! - [`nn`]: a small MLP as graph ops, and an action drawn from its logits.
//! - [`policy`]: the actor-critic a rollout step runs inside the graph.
//! - [`rollout`]: a policy inside the step, T steps of policy + env in T / K launches.
//! - [`cartpole`]: CartPole-v1 (params, graph ops, f64 reference, hand-written kernels).
//! - [`mountain_car`]: MountainCar-v0 (params, graph ops, f64 reference).

pub mod acrobot;
pub mod cartpole;
pub mod conformance;
pub mod engine;
pub mod environment;
pub mod error;
pub mod graph;
pub mod gym_args;
pub mod host_outputs;
pub mod memory;
pub mod mountain_car;
pub mod mountain_car_continuous;
pub mod nn;
pub mod params;
pub mod pendulum;
pub mod policy;
pub mod registry;
pub mod rollout;
pub mod runtime;
pub mod spaces;
pub mod step_engine;
pub mod vec_env;

#[cfg(feature = "cube")]
pub use cartpole::CartPoleVecEnv;
pub use cartpole::{CartPole, CartPoleConfig, CartPoleParams, CartPoleState, reference};
pub use engine::StepPlan;
pub use environment::{EpisodeOptions, GraphEnv, Transition};
pub use error::EnvError;
pub use host_outputs::{HostOutputs, OwnedOutputs};
pub use params::AutoresetMode;
pub use runtime::EnvBackend;
pub use vec_env::{DeviceActions, DeviceStep, StepOutput, VecEnv};
