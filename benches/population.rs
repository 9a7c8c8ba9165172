//! A population's new weights handed to the fused rollout, then one rollout call: the host
//! round trip (read the learner's `[K, P]` parameters back, reorder each agent's into the
//! rollout's order, write them into the step's params by name, upload at the call) against
//! the gather on the device (`RolloutParams`: one select from the learner's tensor into
//! the buffer the step binds), `K` agents of 8 CartPole envs, the PPO network (64 hidden).
//! The rollout call alone is timed beside them: a handoff costs its time less that.
//!
//! ```sh
//! cargo bench --bench population
//! ```
#![allow(missing_docs)] // criterion's macros generate undocumented functions.

mod common;

use std::time::{Duration, Instant};

use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use cartfuse::env::rollout::PolicyRollout;
use cartfuse::env::{CartPole, EpisodeOptions};
use cartfuse::fusion::cube::Cube;
use cartfuse::fusion::exec::Backend;
use cartfuse::fusion::plan::Strategy;
use cartfuse_train::collect::{AgentPolicy, Policy};
use cartfuse_train::device_population::{DeviceTensorLearner, RolloutParams};
use cartfuse_train::learner::{Learner, NetShape};
use cartfuse_train::population::PopulationLearner;
use cartfuse_train::tensor_learner::TensorLearner;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const ENVS_PER_AGENT: usize = 8;

/// `agents` agents' learner and their fused rollout, reset, on the default adapter.
fn population(
    agents: usize,
) -> (
    DeviceTensorLearner<WgpuRuntime>,
    PolicyRollout<Cube<WgpuRuntime>>,
) {
    let seeds: Vec<u64> = (1..=agents as u64).collect();
    let host = Learner::from_seeds(NetShape::new(4, 64, 2), &seeds);
    let learner = TensorLearner::new(host, &WgpuDevice::default());
    let spec = AgentPolicy {
        learner: learner.host(),
        agent: 0,
    }
    .rollout_weights()
    .expect("the rollout's view of the network")
    .0;
    let episode = EpisodeOptions::default_for::<CartPole>();
    let mut rollout = PolicyRollout::population(
        &common::wgpu(),
        &CartPole::default(),
        &episode,
        spec,
        Strategy::Fused,
        (agents, ENVS_PER_AGENT),
    )
    .expect("a population rollout");
    rollout.reset_each(&seeds).expect("reset");
    (learner, rollout)
}

/// Time of `iters` handoffs, each followed by one rollout call, synced at the end.
fn time_handoffs(
    rollout: &mut PolicyRollout<Cube<WgpuRuntime>>,
    iters: u64,
    mut handoff: impl FnMut(&mut PolicyRollout<Cube<WgpuRuntime>>),
) -> Duration {
    rollout.backend().sync().expect("sync");
    let start = Instant::now();
    for _ in 0..iters {
        handoff(rollout);
        rollout.act().expect("a rollout call");
    }
    rollout.backend().sync().expect("sync");
    start.elapsed()
}

fn weights_to_the_rollout(c: &mut Criterion) {
    let mut group = c.benchmark_group("population_weights_to_rollout");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(4));
    group.warm_up_time(Duration::from_secs(1));
    for agents in [64usize, 512, 2048] {
        let (mut learner, mut rollout) = population(agents);
        let device = learner.device().clone();
        let params =
            RolloutParams::new(&rollout, &learner.host().shape(), &device).expect("the gather");
        group.throughput(Throughput::Elements(agents as u64));
        group.bench_with_input(
            BenchmarkId::new("rollout call alone", agents),
            &agents,
            |b, _| b.iter_custom(|iters| time_handoffs(&mut rollout, iters, |_| {})),
        );
        group.bench_with_input(
            BenchmarkId::new("host round trip", agents),
            &agents,
            |b, _| {
                b.iter_custom(|iters| {
                    time_handoffs(&mut rollout, iters, |rollout| {
                        learner.read_weights().expect("the weights read back");
                        for agent in 0..agents {
                            let policy = AgentPolicy {
                                learner: learner.host(),
                                agent,
                            };
                            let (_, weights) = policy.rollout_weights().expect("weights");
                            rollout.set_agent_weights(agent, &weights).expect("written");
                        }
                    })
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("device gather", agents),
            &agents,
            |b, _| {
                b.iter_custom(|iters| {
                    time_handoffs(&mut rollout, iters, |rollout| {
                        params.load(rollout, learner.params()).expect("gathered")
                    })
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, weights_to_the_rollout);
criterion_main!(benches);
