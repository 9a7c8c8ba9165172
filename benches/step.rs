//! Env-steps per second of the hand-written CartPole-v1 kernel, device-resident path.
//!
//! ```sh
//! cargo bench --bench step
//! ```
//!
//! Each iteration enqueues one step with actions already on the device; the clock stops
//! after `sync`, so the time covers the kernels themselves plus their dispatch.
#![allow(missing_docs)] // criterion's macros generate undocumented functions.

mod common;

use std::time::Duration;

use cartfuse::{CartPoleConfig, StepPlan};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const SIZES: [usize; 5] = [1, 256, 4096, 65_536, 1 << 20];

fn hand_written_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("cartpole_step");
    group.measurement_time(Duration::from_secs(4));
    group.warm_up_time(Duration::from_secs(1));
    for n in SIZES {
        let (mut env, actions) = common::ready_env(
            common::wgpu(),
            n,
            CartPoleConfig::default(),
            StepPlan::HandWritten,
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("hand-written", n), &n, |b, _| {
            b.iter_custom(|iters| common::time_steps(&mut env, &actions, iters))
        });
    }
    group.finish();
}

criterion_group!(benches, hand_written_step);
criterion_main!(benches);
