//! CartPole env-steps per second under every plan (device-resident path).
//!
//! ```sh
//! cargo bench --bench plans
//! ```
#![allow(missing_docs)] // criterion's macros generate undocumented functions.

mod common;

use std::time::Duration;

use cartfuse::{CartPoleConfig, StepPlan};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn plans(c: &mut Criterion) {
    let mut group = c.benchmark_group("cartpole_plans");
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    for n in [1usize, 4096, 262_144] {
        for plan in StepPlan::all() {
            let (mut env, actions) =
                common::ready_env(common::wgpu(), n, CartPoleConfig::default(), plan);
            group.throughput(Throughput::Elements((n * env.steps_per_call()) as u64));
            group.bench_with_input(BenchmarkId::new(plan.to_string(), n), &n, |b, _| {
                b.iter_custom(|iters| common::time_steps(&mut env, &actions, iters))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, plans);
criterion_main!(benches);
