//! CartPole env-steps per second under every plan (device-resident path).
//!
//! ```sh
//! cargo bench --bench plans
//! ```
#![allow(missing_docs)] // criterion's macros generate undocumented functions.

use std::time::{Duration, Instant};

use cartfuse::fusion::device::wgpu_client;
use cartfuse::{CartPoleConfig, CartPoleVecEnv, StepPlan};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn plans(c: &mut Criterion) {
    let mut group = c.benchmark_group("cartpole_plans");
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    for n in [1usize, 4096, 262_144] {
        for plan in StepPlan::ALL {
            let config = CartPoleConfig {
                plan,
                ..Default::default()
            };
            let opened = wgpu_client().expect("a compute device (install mesa-vulkan-drivers)");
            let mut env = CartPoleVecEnv::with_client(opened.client, n, config).expect("env");
            env.reset(Some(0)).expect("reset");
            let k = env.steps_per_call();
            let actions: Vec<u32> = (0..(n * k) as u32).map(|i| i % 2).collect();
            let actions = env.upload_actions(&actions).expect("actions");
            group.throughput(Throughput::Elements((n * k) as u64));
            group.bench_with_input(BenchmarkId::new(plan.to_string(), n), &n, |b, _| {
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
    }
    group.finish();
}

criterion_group!(benches, plans);
criterion_main!(benches);
