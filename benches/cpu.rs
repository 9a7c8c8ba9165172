//! Env-steps per second of CartPole-v1 on the native CPU runtime (`--device cpu`): the
//! numpy-like `eager`, `fused`, `fused-x10` and the native hand-written step, n = 1 to 1M.
//!
//! ```sh
//! cargo bench --bench cpu
//! CARTFUSE_CPU_SIMD=avx2 cargo bench --bench cpu   # a narrower SIMD level
//! ```
//!
//! `cartpole_cpu`: actions stay in a host buffer the runtime reads in place and the outputs
//! in the runtime's buffers (`step_device`); each iteration is one step call, finished when
//! it returns. `cartpole_cpu_into`: host actions in, outputs written into the caller's
//! arrays (`step_into`, what the Python package calls), one-step plans.
//! `cartpole_cpu_threads`: `fused` and `fused-x10` on one thread against two, the runtime's
//! scaling over cores (the host roofline beside it is `cartfuse reproduce`'s CPU section).
#![allow(missing_docs)] // criterion's macros generate undocumented functions.

mod common;

use std::time::Duration;

use cartfuse::fusion::cpu::{Cpu, CpuOptions};
use cartfuse::fusion::plan::Strategy;
use cartfuse::{CartPoleConfig, StepPlan};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const SIZES: [usize; 5] = [1, 256, 4096, 65_536, 1 << 20];

fn cpu_plans(c: &mut Criterion) {
    let mut group = c.benchmark_group("cartpole_cpu");
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    let plans = [
        StepPlan::Graph(Strategy::Eager),
        StepPlan::Graph(Strategy::Fused),
        StepPlan::Graph(Strategy::FusedSteps(10)),
        StepPlan::HandWritten,
    ];
    for plan in plans {
        for n in SIZES {
            let (mut env, actions) =
                common::ready_env(Cpu::default(), n, CartPoleConfig::default(), plan);
            let k = env.steps_per_call() as u64;
            group.throughput(Throughput::Elements(n as u64 * k));
            group.bench_with_input(BenchmarkId::new(plan.to_string(), n), &n, |b, _| {
                b.iter_custom(|iters| common::time_steps(&mut env, &actions, iters))
            });
        }
    }
    group.finish();
}

fn cpu_into_host_arrays(c: &mut Criterion) {
    let mut group = c.benchmark_group("cartpole_cpu_into");
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    for plan in [StepPlan::Graph(Strategy::Fused), StepPlan::HandWritten] {
        for n in SIZES {
            let (mut env, _) =
                common::ready_env(Cpu::default(), n, CartPoleConfig::default(), plan);
            let actions: Vec<u32> = (0..n as u32).map(|i| i % 2).collect();
            let mut out = env.owned_outputs();
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::new(plan.to_string(), n), &n, |b, _| {
                b.iter(|| env.step_into(&actions, &mut out.as_host()).expect("step"))
            });
        }
    }
    group.finish();
}

fn cpu_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("cartpole_cpu_threads");
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    for plan in [Strategy::Fused, Strategy::FusedSteps(10)] {
        for n in [65_536, 1 << 20] {
            for threads in [1, 2] {
                let cpu = Cpu::new(CpuOptions {
                    threads,
                    ..CpuOptions::default()
                })
                .expect("the detected SIMD level");
                let plan = StepPlan::Graph(plan);
                let (mut env, actions) = common::ready_env(cpu, n, CartPoleConfig::default(), plan);
                let k = env.steps_per_call() as u64;
                group.throughput(Throughput::Elements(n as u64 * k));
                let id = BenchmarkId::new(format!("{plan}/{threads}-threads"), n);
                group.bench_with_input(id, &n, |b, _| {
                    b.iter_custom(|iters| common::time_steps(&mut env, &actions, iters))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, cpu_plans, cpu_into_host_arrays, cpu_threads);
criterion_main!(benches);
