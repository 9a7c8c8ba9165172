//! Env-steps per second of the hand-written CartPole-v1 kernel, device-resident path.
//!
//! ```sh
//! cargo bench --bench step
//! ```
//!
//! Each iteration enqueues one step with actions already on the device; the clock stops
//! after `sync`, so the time covers the kernels themselves plus their dispatch.
#![allow(missing_docs)] // criterion's macros generate undocumented functions.

use std::time::{Duration, Instant};

use cartfuse::fusion::device::wgpu_client;
use cartfuse::{CartPoleConfig, CartPoleVecEnv};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const SIZES: [usize; 5] = [1, 256, 4096, 65_536, 1 << 20];

fn hand_written_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("cartpole_step");
    group.measurement_time(Duration::from_secs(4));
    group.warm_up_time(Duration::from_secs(1));
    for n in SIZES {
        let opened = wgpu_client().expect("a compute device (install mesa-vulkan-drivers)");
        let mut env =
            CartPoleVecEnv::with_client(opened.client, n, CartPoleConfig::default()).expect("env");
        env.reset(Some(0)).expect("reset");
        let actions: Vec<u32> = (0..n as u32).map(|i| i % 2).collect();
        let actions = env.upload_actions(&actions).expect("actions");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("hand-written", n), &n, |b, _| {
            b.iter_custom(|iters| {
                env.sync().expect("sync");
                let start = Instant::now();
                for _ in 0..iters {
                    env.step_device(&actions).expect("step");
                }
                env.sync().expect("sync");
                start.elapsed()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, hand_written_step);
criterion_main!(benches);
