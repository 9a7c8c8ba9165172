//! What the CartPole benches share: an env ready to step on a backend, and the timing loop
//! (enqueue `iters` steps, sync before the clock stops).

use std::time::{Duration, Instant};

use cartfuse::env::{CartPole, EnvBackend, VecEnv};
use cartfuse::fusion::cube::device::wgpu_client;
use cartfuse::fusion::cubecl::wgpu::WgpuRuntime;
use cartfuse::fusion::{cube::Cube, exec::Backend};
use cartfuse::{CartPoleConfig, DeviceActions, StepPlan};

/// The default wgpu adapter.
#[allow(dead_code)] // each bench binary uses the helpers it needs
pub fn wgpu() -> Cube<WgpuRuntime> {
    let opened = wgpu_client().expect("a compute device (install mesa-vulkan-drivers)");
    Cube::new(&opened)
}

/// A reset env of `n` envs under `config` running `plan` on `backend`, with alternating
/// actions already on the backend.
#[allow(dead_code)] // each bench binary uses the helpers it needs
pub fn ready_env<B: EnvBackend>(
    backend: B,
    n: usize,
    config: CartPoleConfig,
    plan: StepPlan,
) -> (VecEnv<CartPole, B>, DeviceActions<<B as Backend>::Buffer>) {
    let mut env = VecEnv::build(backend, config.params, n, config.episode(), plan).expect("env");
    env.reset(Some(0)).expect("reset");
    let k = env.steps_per_call();
    let actions: Vec<u32> = (0..(n * k) as u32).map(|i| i % 2).collect();
    let actions = env.upload_actions(&actions).expect("actions");
    (env, actions)
}

/// Time of `iters` device-resident step calls, synced before and after.
#[allow(dead_code)] // each bench binary uses the helpers it needs
pub fn time_steps<B: EnvBackend>(
    env: &mut VecEnv<CartPole, B>,
    actions: &DeviceActions<<B as Backend>::Buffer>,
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
