//! Elementwise workloads and the transformer tail, eager against fused (bytes per second).
//!
//! ```sh
//! cargo bench --bench workloads
//! ```
#![allow(missing_docs)] // criterion's macros generate undocumented functions.

use std::time::{Duration, Instant};

use cartfuse::fusion::cube::Cube;
use cartfuse::fusion::cube::device::wgpu_client;
use cartfuse::fusion::exec::{Backend, Executor};
use cartfuse::fusion::plan::{Plan, Strategy};
use cartfuse::harness::studies::workloads::{Elementwise, TransformerTail, elementwise_inputs};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn bench_executor<B: Backend>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: BenchmarkId,
    mut exec: Executor<B>,
) {
    exec.run().expect("warm-up run");
    group.bench_function(id, |b| {
        b.iter_custom(|iters| {
            exec.backend().sync().expect("sync");
            let start = Instant::now();
            for _ in 0..iters {
                exec.run().expect("run");
            }
            exec.backend().sync().expect("sync");
            start.elapsed()
        })
    });
}

/// The wgpu device as a backend.
fn wgpu() -> Cube<cartfuse::fusion::cubecl::wgpu::WgpuRuntime> {
    let opened = wgpu_client().expect("a compute device");
    Cube::new(&opened)
}

fn workloads(c: &mut Criterion) {
    let mut group = c.benchmark_group("elementwise");
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    let lanes = 4 << 20;
    for kind in [
        Elementwise::Light,
        Elementwise::Medium,
        Elementwise::Heavy { loops: 8 },
    ] {
        let graph = kind.graph();
        for strategy in [Strategy::Eager, Strategy::Fused] {
            let backend = wgpu();
            let plan = Plan::build(&graph, strategy, &backend.plan_options()).expect("plan");
            let mut exec = Executor::new(backend, graph.clone(), plan, lanes).expect("executor");
            for (name, values) in elementwise_inputs(lanes) {
                exec.set_input(&name, &values).expect("input");
            }
            group.throughput(Throughput::Bytes(8 * lanes as u64));
            bench_executor(&mut group, BenchmarkId::new(kind.name(), strategy), exec);
        }
    }
    group.finish();

    let mut group = c.benchmark_group("transformer_tail");
    group.measurement_time(Duration::from_secs(3));
    let tail = TransformerTail::new(1024);
    let lanes = 512 * 1024;
    let (inputs, params) = TransformerTail::bindings(lanes);
    for (label, groups) in tail.partitions() {
        let plan = Plan::from_partition(&tail.graph, &groups).expect("plan");
        let mut exec = Executor::new(wgpu(), tail.graph.clone(), plan, lanes).expect("executor");
        for (name, values) in &inputs {
            exec.set_input(name, values).expect("input");
        }
        for (name, value) in &params {
            exec.set_param(name, *value).expect("param");
        }
        group.throughput(Throughput::Bytes(12 * lanes as u64));
        bench_executor(&mut group, BenchmarkId::from_parameter(label), exec);
    }
    group.finish();
}

criterion_group!(benches, workloads);
criterion_main!(benches);
