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
use crate::step_engine::{HandWritten, NoHandWritten};

/// The element type of an environment's actions.
pub trait ActionElement: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The graph's dtype for the `action` input.
    const DTYPE: DType;
    /// A new backend buffer holding `actions`.
    fn upload<B: Backend>(backend: &B, actions: &[Self]) -> B::Buffer;
    /// The actions as the 32-bit words a buffer holds (no copy).
    fn words(actions: &[Self]) -> &[u32];
    /// Whether `action` is one a step in `space` accepts: a discrete action below `n`; a
    /// continuous one finite (the dynamics clip it into the box, as gymnasium's do). An
    /// element of the other kind than the space is never valid.
    fn is_valid(space: &ActionSpace, action: Self) -> bool;
    /// A deterministic action that covers `space` as `index` runs (benchmarks, tests): every
    /// discrete action, or 1.5 times the box in steps of 0.01 (a third of them clipped).
    fn pattern(space: &ActionSpace, index: usize) -> Self;
}

/// The pattern's walk through `points` values: consecutive indices spread over them.
fn pattern_point(index: usize, points: usize, stride: usize, every: usize) -> usize {
    (index * stride + index / every) % points.max(1)
}

impl ActionElement for u32 {
    const DTYPE: DType = DType::U32;
    fn upload<B: Backend>(backend: &B, actions: &[Self]) -> B::Buffer {
        backend.upload_u32(actions)
    }
    fn words(actions: &[Self]) -> &[u32] {
        actions
    }
    fn is_valid(space: &ActionSpace, action: Self) -> bool {
        matches!(space, ActionSpace::Discrete(d) if action < d.n)
    }
    fn pattern(space: &ActionSpace, index: usize) -> Self {
        match space {
            ActionSpace::Discrete(d) => pattern_point(index, d.n as usize, 7, 3) as u32,
            ActionSpace::Box(_) => 0,
        }
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
    fn is_valid(space: &ActionSpace, action: Self) -> bool {
        matches!(space, ActionSpace::Box(_)) && action.is_finite()
    }
    fn pattern(space: &ActionSpace, index: usize) -> Self {
        let ActionSpace::Box(b) = space else {
            return 0.0;
        };
        let (low, high) = (1.5 * b.low[0], 1.5 * b.high[0]);
        let points = ((high - low) * 100.0).round() as usize + 1;
        pattern_point(index, points, 7919, 5) as f32 / 100.0 + low
    }
}

/// The error of a constructor argument `E` does not take.
pub fn unknown_kwarg<E: GraphEnv>(name: &str) -> EnvError {
    EnvError::UnknownKwarg {
        env: E::ID,
        name: name.to_owned(),
        expected: E::KWARGS.iter().map(|k| k.name).collect(),
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
        Err(unknown_kwarg::<Self>(name))
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
    /// Whether `action` lies in the action space (checked on the host before a step),
    /// derived from [`Self::action_space`] ([`ActionElement::is_valid`]); the vector env
    /// checks a batch against the space read once.
    fn action_is_valid(&self, action: Self::Action) -> bool {
        Self::Action::is_valid(&self.action_space(), action)
    }
    /// A deterministic action that covers the space as `index` runs (benchmarks, tests),
    /// derived from [`Self::action_space`] ([`ActionElement::pattern`]).
    fn pattern_action(&self, index: usize) -> Self::Action {
        Self::Action::pattern(&self.action_space(), index)
    }
    /// The hand-written step this environment offers for `episode`, the plan
    /// `hand-written` runs instead of its graph (`None`, the default: it has none).
    fn hand_written(&self, episode: &EpisodeOptions) -> Option<impl HandWritten> {
        let _ = episode;
        None::<NoHandWritten>
    }
    /// The first `n` pattern actions, the space read once.
    fn pattern_actions(&self, n: usize) -> Vec<Self::Action> {
        let space = self.action_space();
        (0..n).map(|i| Self::Action::pattern(&space, i)).collect()
    }

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
