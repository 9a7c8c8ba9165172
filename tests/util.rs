//! Shared helpers: the test device and small builders.

use cartfuse::env::StepOutput;
use cartfuse::fusion::cubecl::prelude::ComputeClient;
use cartfuse::fusion::cubecl::wgpu::WgpuRuntime;
use cartfuse::fusion::device::wgpu_client;
use cartfuse::fusion::plan::Strategy;
use cartfuse::{CartPoleConfig, CartPoleState, CartPoleVecEnv, StepPlan};

/// The runtime every device test runs on.
pub type TestRuntime = WgpuRuntime;

/// A client on the default wgpu adapter; panics with install instructions when none exists.
pub fn client() -> ComputeClient<TestRuntime> {
    match wgpu_client() {
        Ok(opened) => opened.client,
        Err(error) => panic!("this test needs a compute device and found none: {error}"),
    }
}

/// A vector env of `num_envs` envs running the default plan, reset with `seed`.
pub fn env(num_envs: usize, config: CartPoleConfig, seed: u64) -> CartPoleVecEnv<TestRuntime> {
    env_with(num_envs, config, StepPlan::default(), seed)
}

/// A vector env of `num_envs` envs running `plan`, reset with `seed`.
pub fn env_with(
    num_envs: usize,
    config: CartPoleConfig,
    plan: StepPlan,
    seed: u64,
) -> CartPoleVecEnv<TestRuntime> {
    let mut env = CartPoleVecEnv::with_plan(client(), num_envs, config, plan).expect("valid env");
    env.reset(Some(seed)).expect("reset");
    env
}

/// Every plan whose `step` advances one step (all but `fused-xK`).
pub fn single_step_plans() -> Vec<StepPlan> {
    StepPlan::all()
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
