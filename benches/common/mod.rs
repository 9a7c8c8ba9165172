//! What the CartPole benches share: an env ready to step on the device, and the timing
//! loop (enqueue `iters` steps, sync before the clock stops).

use std::time::{Duration, Instant};

use cartfuse::fusion::cubecl::server::Handle;
use cartfuse::fusion::cubecl::wgpu::WgpuRuntime;
use cartfuse::fusion::device::wgpu_client;
use cartfuse::{CartPoleConfig, CartPoleVecEnv, DeviceActions, StepPlan};

/// A reset env of `n` envs under `config` running `plan`, with alternating actions already
/// on the device.
pub fn ready_env(
    n: usize,
    config: CartPoleConfig,
    plan: StepPlan,
) -> (CartPoleVecEnv<WgpuRuntime>, DeviceActions<Handle>) {
    let opened = wgpu_client().expect("a compute device (install mesa-vulkan-drivers)");
    let mut env = CartPoleVecEnv::with_plan(opened.client, n, config, plan).expect("env");
    env.reset(Some(0)).expect("reset");
    let k = env.steps_per_call();
    let actions: Vec<u32> = (0..(n * k) as u32).map(|i| i % 2).collect();
    let actions = env.upload_actions(&actions).expect("actions");
    (env, actions)
}

/// Time of `iters` device-resident step calls, synced before and after.
pub fn time_steps(
    env: &mut CartPoleVecEnv<WgpuRuntime>,
    actions: &DeviceActions<Handle>,
    iters: u64,
) -> Duration {
    env.sync().expect("sync");
    let start = Instant::now();
    for _ in 0..iters {
        env.step_device(actions).expect("step");
    }
    env.sync().expect("sync");
    start.elapsed()
}
