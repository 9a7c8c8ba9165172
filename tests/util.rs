//! Shared helpers: the test device and small builders.

use cartfuse::fusion::cubecl::prelude::ComputeClient;
use cartfuse::fusion::cubecl::wgpu::WgpuRuntime;
use cartfuse::fusion::device::wgpu_client;
use cartfuse::fusion::plan::Strategy;
use cartfuse::{CartPoleConfig, CartPoleVecEnv, StepPlan};

/// The runtime every device test runs on.
pub type TestRuntime = WgpuRuntime;

/// A client on the default wgpu adapter; panics with install instructions when none exists.
pub fn client() -> ComputeClient<TestRuntime> {
    match wgpu_client() {
        Ok(opened) => opened.client,
        Err(error) => panic!("this test needs a compute device and found none: {error}"),
    }
}

/// A vector env of `num_envs` envs reset with `seed`.
pub fn env(num_envs: usize, config: CartPoleConfig, seed: u64) -> CartPoleVecEnv<TestRuntime> {
    let mut env = CartPoleVecEnv::with_client(client(), num_envs, config).expect("valid env");
    env.reset(Some(seed)).expect("reset");
    env
}

/// Every plan whose `step` advances one step (all but `fused-xK`).
pub fn single_step_plans() -> Vec<StepPlan> {
    StepPlan::ALL
        .into_iter()
        .filter(|plan| !matches!(plan, StepPlan::Graph(Strategy::FusedSteps(_))))
        .collect()
}
