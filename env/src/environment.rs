//! What an environment is: the one trait an environment module implements.
//!
//! An environment gives its validated params, the names of its state components (in the
//! order of gymnasium's `env.unwrapped.state`), its spaces, its dynamics, termination and
//! reward as graph ops, its reset distribution drawn by the graph's counter-based random op,
//! and an f64 reference. Everything else is written once for every environment: the
//! episode logic and the two autoreset modes ([`crate::graph`]), the vector env
//! ([`crate::vec_env`]), every plan and runtime, the CLI and the report.

use cartfuse_fusion::exec::Backend;
use cartfuse_fusion::graph::Scalar;
use cartfuse_fusion::graph::{DType, GraphBuilder, Var};

use crate::error::EnvError;
use crate::gym_args::{Kwarg, ResetOptions};
use crate::spaces::{ActionSpace, BoxSpace};

/// The element type of an environment's actions.
pub trait ActionElement: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The graph's dtype for the `action` input.
    const DTYPE: DType;
    /// A new backend buffer holding `actions`.
    fn upload<B: Backend>(backend: &B, actions: &[Self]) -> B::Buffer;
    /// The actions as the 32-bit words a buffer holds (no copy).
    fn words(actions: &[Self]) -> &[u32];
}

impl ActionElement for u32 {
    const DTYPE: DType = DType::U32;
    fn upload<B: Backend>(backend: &B, actions: &[Self]) -> B::Buffer {
        backend.upload_u32(actions)
    }
    fn words(actions: &[Self]) -> &[u32] {
        actions
    }
}

impl ActionElement for f32 {
    const DTYPE: DType = DType::F32;
    fn upload<B: Backend>(backend: &B, actions: &[Self]) -> B::Buffer {
        backend.upload_f32(actions)
    }
    fn words(actions: &[Self]) -> &[u32] {
        bytemuck::cast_slice(actions)
    }
}

/// One step as the reward sees it: where it started, what was done, where it ended.
#[derive(Clone, Copy)]
pub struct Transition<'a, 'g> {
    /// The state before the step.
    pub state: &'a [Var<'g>],
    /// The action as given (before any clipping the dynamics apply).
    pub action: Var<'g>,
    /// The state after the step.
    pub next: &'a [Var<'g>],
    /// [`GraphEnv::terminated`] of `next`.
    pub terminated: Var<'g>,
}

/// One environment, written once and run under every plan on every runtime.
///
/// The value itself holds the environment's params (gravity, masses, ...): two values of
/// the same type are two parametrisations of one environment.
pub trait GraphEnv: Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// gymnasium's id, e.g. `CartPole-v1`.
    const ID: &'static str;
    /// State components, in the order of gymnasium's `env.unwrapped.state`.
    const STATE: &'static [&'static str];
    /// Length of one observation row.
    const OBS_DIM: usize;
    /// Uniform draws one reset takes.
    const RESET_DRAWS: usize;
    /// gymnasium's registered `max_episode_steps`.
    const MAX_EPISODE_STEPS: u32;
    /// gymnasium's `metadata["render_fps"]` of this id.
    const RENDER_FPS: u32;
    /// The constructor arguments gymnasium's env of this id takes (besides `render_mode`),
    /// set through [`Self::set_kwarg`].
    const KWARGS: &'static [Kwarg] = &[];
    /// The options `reset(options=...)` of gymnasium's env of this id reads.
    const RESET_OPTIONS: ResetOptions = ResetOptions::LowHigh;
    /// What one env's action is (`u32` for discrete actions, `f32` for continuous ones).
    type Action: ActionElement;

    /// Sets constructor argument `name` (one of [`Self::KWARGS`]; a bool as 0 or 1).
    fn set_kwarg(&mut self, name: &str, value: f64) -> Result<(), EnvError> {
        let _ = value;
        Err(crate::gym_args::unknown_kwarg::<Self>(name))
    }
    /// The `(low, high)` each of the [`Self::RESET_DRAWS`] drawn components of a reset is
    /// uniform in, by default (gymnasium's reset without options).
    fn reset_bounds(&self) -> Vec<(f64, f64)>;

    /// Checks every param, naming the first bad one.
    fn validate(&self) -> Result<(), EnvError>;
    /// The observation space of one env, as gymnasium declares it.
    fn observation_space(&self) -> BoxSpace;
    /// The action space of one env, as gymnasium declares it.
    fn action_space(&self) -> ActionSpace;
    /// Whether `action` lies in the action space (checked on the host before a step).
    fn action_is_valid(&self, action: Self::Action) -> bool;
    /// A deterministic action that covers the space as `index` runs (benchmarks, tests).
    fn pattern_action(&self, index: usize) -> Self::Action;

    /// The runtime params the graph ops below read (through [`GraphBuilder::param`]).
    fn graph_params(&self) -> Vec<(&'static str, Scalar)>;
    /// One step of the dynamics from `state` under `action`: the next state.
    fn dynamics<'g>(&self, g: &'g GraphBuilder, state: &[Var<'g>], action: Var<'g>)
    -> Vec<Var<'g>>;
    /// Whether the episode ended in `next` (gymnasium's `terminated`).
    fn terminated<'g>(&self, g: &'g GraphBuilder, next: &[Var<'g>]) -> Var<'g>;
    /// The reward of one step (before autoreset touches it).
    fn reward<'g>(&self, g: &'g GraphBuilder, step: &Transition<'_, 'g>) -> Var<'g>;
    /// The observation of `state`, one value per column.
    fn observe<'g>(&self, g: &'g GraphBuilder, state: &[Var<'g>]) -> Vec<Var<'g>>;
    /// A fresh state from the [`Self::RESET_DRAWS`] drawn components, each already uniform
    /// in its bounds ([`Self::reset_bounds`]): by default the state is those components.
    fn reset_state<'g>(&self, g: &'g GraphBuilder, drawn: &[Var<'g>]) -> Vec<Var<'g>> {
        let _ = g;
        drawn.to_vec()
    }

    /// The f64 reference step: next state, reward, terminated.
    fn reference_step(&self, state: &[f64], action: Self::Action) -> (Vec<f64>, f64, bool);
    /// The f64 reference reset from the same drawn components as [`Self::reset_state`].
    fn reference_reset(&self, drawn: &[f32]) -> Vec<f64> {
        drawn.iter().map(|v| f64::from(*v)).collect()
    }
    /// The observation of a reference state, as the device computes it (`f32`).
    fn reference_observe(&self, state: &[f64]) -> Vec<f32>;
}

/// How a vector env restarts finished episodes, and when an episode is truncated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpisodeOptions {
    /// How finished episodes restart.
    pub autoreset: crate::params::AutoresetMode,
    /// An episode is truncated when it has run this many steps.
    pub max_episode_steps: u32,
}

impl EpisodeOptions {
    /// gymnasium's defaults for `E`: `NextStep` autoreset, the registered episode limit.
    pub fn default_for<E: GraphEnv>() -> Self {
        Self {
            autoreset: crate::params::AutoresetMode::NextStep,
            max_episode_steps: E::MAX_EPISODE_STEPS,
        }
    }

    /// Checks the episode limit.
    pub fn validate(&self) -> Result<(), EnvError> {
        if self.max_episode_steps == 0 {
            return Err(EnvError::InvalidMaxEpisodeSteps);
        }
        Ok(())
    }
}
