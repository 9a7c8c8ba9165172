//! Throughput probe (ignored by default): env-steps/s of the CartPole graph under `fused`,
//! 1 vs 2 threads, and the host roofline.
//!
//! `cargo test -p cartfuse-fusion --release --lib cpu::tests::speed -- --ignored --nocapture`

use std::time::Instant;

use super::cartpole::{self, Mode};
use super::*;

fn steps_per_second(strategy: Strategy, n: usize, options: CpuOptions) -> f64 {
    let graph = cartpole::graph(Mode::NextStep, false);
    let plan = Plan::build(&graph, strategy, &PlanOptions::default()).unwrap();
    let k = plan.steps_per_launch as usize;
    let inputs = cartpole::inputs(&graph, n, k, 1);
    let mut exec = executor(&graph, plan, n, &inputs, &cartpole::params(), options);
    let budget = 0.3;
    let mut samples = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut runs = 0usize;
        while start.elapsed().as_secs_f64() < budget / 5.0 || runs == 0 {
            exec.run().unwrap();
            runs += 1;
        }
        samples.push((runs * n * k) as f64 / start.elapsed().as_secs_f64());
    }
    samples.sort_by(f64::total_cmp);
    samples[2]
}

#[test]
#[ignore = "timing probe; run with --ignored --nocapture"]
fn fused_cartpole_throughput_and_roofline() {
    let level = SimdLevel::detect();
    for strategy in [Strategy::Fused, Strategy::FusedSteps(10), Strategy::Eager] {
        for n in [1, 4096, 65_536, 1 << 20] {
            for threads in [1, 2] {
                let options = CpuOptions {
                    threads,
                    ..CpuOptions::default()
                };
                let sps = steps_per_second(strategy, n, options);
                println!(
                    "{strategy:>11} {level} n={n:>8} threads={threads}: {sps:>12.4e} env-steps/s ({:.3} us/call)",
                    1e6 * n as f64
                        * if strategy == Strategy::FusedSteps(10) {
                            10.0
                        } else {
                            1.0
                        }
                        / sps
                );
            }
        }
    }
    for chunk in [256, 512, 1024, 2048, 4096] {
        let options = CpuOptions {
            threads: 1,
            chunk,
            ..CpuOptions::default()
        };
        let sps = steps_per_second(Strategy::Fused, 1 << 18, options);
        println!("chunk {chunk:>5}: fused n=262144 1 thread {sps:.4e} env-steps/s");
    }
    for n in [2048, 4096, 8192, 16_384, 32_768] {
        let t1 = steps_per_second(
            Strategy::Fused,
            n,
            CpuOptions {
                threads: 1,
                ..CpuOptions::default()
            },
        );
        let t2 = steps_per_second(
            Strategy::Fused,
            n,
            CpuOptions {
                threads: 2,
                parallel_min_lanes: 0,
                ..CpuOptions::default()
            },
        );
        println!("threshold n={n:>6}: 1 thread {t1:.4e}, 2 threads {t2:.4e}");
    }
    for threads in [1, 2] {
        let r = crate::cpu::roofline::measure_roofline(threads, 256 << 20);
        println!(
            "roofline threads={threads}: copy {:.2} GB/s, peak {:.1} GFLOP/s ({})",
            r.copy_bytes_per_s / 1e9,
            r.flops_per_s / 1e9,
            r.simd
        );
    }
}
