//! PPO's sample collection on the native CPU: burn's policy + the env step against the
//! policy fused into the step, at the env counts given (default 8 and 4096).
//!
//! `cargo run --release -p cartfuse-harness --example policy_rollout -- 4096 fused-x10`

use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::cpu::CpuOptions;
use cartfuse_fusion::plan::Strategy;
use cartfuse_harness::studies::policy::{HOST_SOURCE, PolicySettings, measure_policy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes = Vec::new();
    let mut plans = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.parse::<usize>() {
            Ok(n) => sizes.push(n),
            Err(_) => plans.push(arg.parse::<Strategy>()?),
        }
    }
    if sizes.is_empty() {
        sizes = vec![8, 4096];
    }
    if plans.is_empty() {
        plans = vec!["fused-x10".parse()?];
    }
    let settings = PolicySettings {
        sizes,
        plans,
        steps: 10,
        repeats: 5,
        training: Vec::new(),
        training_budget: 0,
        population: None,
        device_population: None,
    };
    let backend = Cpu::new(CpuOptions::default())?;
    let study = measure_policy(&backend, &settings, |m| eprintln!("measuring {m}"));
    for point in &study.points {
        let rate = match &point.env_steps_per_s {
            Ok(rate) => format!("{rate:.3e} env-steps/s"),
            Err(skipped) => format!("skipped: {}", skipped.reason),
        };
        let speedup = study
            .speedup(&point.source, point.num_envs)
            .filter(|_| point.source != HOST_SOURCE)
            .map_or(String::new(), |s| format!("  ({s:.2}x the host source)"));
        println!(
            "n = {:6}  {:24} {rate}{speedup}",
            point.num_envs, point.source
        );
    }
    Ok(())
}
