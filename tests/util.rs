//! Shared helpers of one runtime's suites: the backend under test and small builders.
//!
//! This file is compiled once per runtime (see `tests.rs`): `super::backend()` is that
//! runtime's backend, so every suite that builds its envs and runners here runs on each.

use cartfuse::env::{CartPole, EpisodeOptions, GraphEnv, StepOutput, VecEnv};
use cartfuse::fusion::exec::{Backend, Executor};
use cartfuse::fusion::graph::Graph;
use cartfuse::fusion::plan::{Plan, PlanOptions, Strategy};
use cartfuse::{CartPoleConfig, CartPoleState, StepPlan};

pub use super::{TestBackend, backend};

/// A CartPole vector env on the backend under test.
pub type TestEnv = VecEnv<CartPole, TestBackend>;

/// A vector env of `num_envs` envs running the default plan, reset with `seed`.
pub fn env(num_envs: usize, config: CartPoleConfig, seed: u64) -> TestEnv {
    env_with(num_envs, config, StepPlan::default(), seed)
}

/// A vector env of `num_envs` envs running `plan`, not yet reset.
pub fn build(
    num_envs: usize,
    config: CartPoleConfig,
    plan: StepPlan,
) -> Result<TestEnv, cartfuse::EnvError> {
    VecEnv::build(backend(), config.params, num_envs, config.episode(), plan)
}

/// A vector env of `num_envs` envs running `plan`, reset with `seed`.
pub fn env_with(num_envs: usize, config: CartPoleConfig, plan: StepPlan, seed: u64) -> TestEnv {
    let mut env = build(num_envs, config, plan).expect("valid env");
    env.reset(Some(seed)).expect("reset");
    env
}

/// The planner options of the backend under test.
pub fn plan_options() -> PlanOptions {
    backend().plan_options()
}

/// `plan` of `graph` ready to run over `n` lanes on the backend under test.
pub fn runner(graph: Graph, plan: Plan, n: usize) -> Executor<TestBackend> {
    Executor::new(backend(), graph, plan, n).expect("runner")
}

/// Every plan this runtime offers CartPole (a runtime without a hand-written kernel
/// refuses that plan with an error, tested in `errors.rs`).
pub fn plans() -> Vec<StepPlan> {
    StepPlan::all()
        .into_iter()
        .filter(|plan| build(1, CartPoleConfig::default(), *plan).is_ok())
        .collect()
}

/// Every plan whose `step` advances one step (all but `fused-xK`).
pub fn single_step_plans() -> Vec<StepPlan> {
    plans()
        .into_iter()
        .filter(|plan| !matches!(plan, StepPlan::Graph(Strategy::FusedSteps(_))))
        .collect()
}

/// Observation row `i` of a step's output.
pub fn row(out: &StepOutput, i: usize) -> [f32; 4] {
    out.obs_row(i)
        .try_into()
        .expect("CartPole rows hold 4 values")
}

/// Observation row `i` of `[n, 4]` row-major observations.
pub fn obs_row(obs: &[f32], i: usize) -> [f32; 4] {
    obs[4 * i..4 * i + 4].try_into().expect("4 values")
}

/// The final observation of env `i`, if its episode ended on this step.
pub fn final_row(out: &StepOutput, i: usize) -> Option<[f32; 4]> {
    out.final_obs_row(i)
        .map(|r| r.try_into().expect("CartPole rows hold 4 values"))
}

/// States as the vector env takes them.
pub fn states(states: &[CartPoleState]) -> Vec<Vec<f64>> {
    states.iter().map(|s| s.to_array().to_vec()).collect()
}

/// States as the vector env returns them.
pub fn cartpole_states(states: &[Vec<f64>]) -> Vec<CartPoleState> {
    states
        .iter()
        .map(|s| CartPoleState::from_array([s[0], s[1], s[2], s[3]]))
        .collect()
}

/// A vector env of any environment on the backend under test.
pub fn build_env<E: GraphEnv>(
    env: E,
    num_envs: usize,
    episode: EpisodeOptions,
    plan: StepPlan,
) -> Result<VecEnv<E, TestBackend>, cartfuse::EnvError> {
    VecEnv::build(backend(), env, num_envs, episode, plan)
}

/// Every plan this runtime offers `E` (only CartPole has a hand-written kernel).
pub fn plans_for<E: GraphEnv + Default>() -> Vec<StepPlan> {
    StepPlan::all()
        .into_iter()
        .filter(|plan| build_env(E::default(), 1, EpisodeOptions::default_for::<E>(), *plan).is_ok())
        .collect()
}
