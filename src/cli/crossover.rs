//! `cartfuse crossover`: the CPU against the device over n, in turns.
// Without a GPU feature the device dispatch compiles to "not compiled": the measuring parts
// are then unused.
#![cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(unused))]

use std::fmt::Write as _;

use anyhow::Context;
use cartfuse::StepPlan;
use cartfuse::fusion::device::crossovers::{self, KeptCrossover};
use cartfuse::fusion::device::{Device, RuntimeKind};
use cartfuse::fusion::dispatch_runtime;
use cartfuse::harness::studies::crossover::STUDY_CROSSOVER;
use cartfuse::harness::studies::crossover::{Crossover, measure_crossover, sizes};
use cartfuse::harness::turns::{RoundRatio, TurnsSettings};

use super::args::CrossoverArgs;
#[cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(unused_imports))]
use super::{device_description, progress};

/// Measures, prints one line per plan and size and the crossover per plan, and writes
/// `crossover.json` and `crossover.csv` into `--out` when given.
pub fn run(device: Device, args: CrossoverArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.from <= args.to,
        "--from ({}) must not be larger than --to ({})",
        args.from,
        args.to
    );
    let Device::Cube(kind) = device else {
        anyhow::bail!(
            "crossover sets the native CPU against a device: choose one with --device wgpu or \
             --device cuda"
        );
    };
    let settings = TurnsSettings {
        min_rounds: 5,
        repeat_s: 0.02,
        budget_s: args.budget,
        max_rounds: 301,
    };
    let sizes = sizes(args.from as usize, args.to as usize, args.step as usize);
    let crossover: anyhow::Result<(Crossover, String)> = dispatch_runtime!(kind, |opened: R| {
        let adapter = opened.description.clone();
        let description = device_description(kind, &opened.description);
        eprintln!("device: {description} ({kind})");
        let backend =
            cartfuse::fusion::cube::Cube::with_client(opened.client, &opened.device, description);
        let progress =
            progress::Progress::new((args.plans.len() * sizes.len()) as u64, "crossover");
        let measured = measure_crossover(&backend, &args.plans, &sizes, &settings, |m| {
            progress.start(m)
        })?;
        progress.finish();
        anyhow::Ok((measured, adapter))
    });
    let (crossover, adapter) = crossover?;
    let text = render(&crossover);
    print!("{text}");
    keep_for_auto(&crossover, kind, &adapter);
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        let write = |name: &str, body: String| {
            let path = out.join(name);
            std::fs::write(&path, body).with_context(|| format!("cannot write {}", path.display()))
        };
        write("crossover.json", serde_json::to_string_pretty(&crossover)?)?;
        write("crossover.csv", csv(&crossover))?;
    }
    Ok(())
}

/// Keeps the host crossover of the default plan (else the first measured) for the automatic
/// device choice, and says where; a cache that cannot be written is a warning, not an error.
fn keep_for_auto(crossover: &Crossover, kind: RuntimeKind, adapter: &str) {
    let default = StepPlan::default().to_string();
    let Some(plan) = (crossover.points.iter())
        .find(|p| p.plan == default)
        .or(crossover.points.first())
        .map(|p| p.plan.clone())
    else {
        return;
    };
    let kept = KeptCrossover {
        device: crossover.device.clone(),
        host_from: crossover.host_from(&plan),
        largest_measured: crossover.sizes().last().copied().unwrap_or(0),
        plan,
        measured_at_unix_s: (std::time::SystemTime::now())
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let min_envs = kept.min_envs();
    match crossovers::keep(&crossovers::key(kind, adapter), kept) {
        Ok(path) => eprintln!(
            "kept for `--device auto` and Python's device=None: this device from {min_envs} \
             envs on ({})",
            path.display()
        ),
        Err(error) => eprintln!("warning: could not keep the crossover for `auto`: {error}"),
    }
}

/// One line per point, then the crossover of each plan.
fn render(crossover: &Crossover) -> String {
    let mut out = format!(
        "CPU ({}) against {} ({}), each plan and size timed in turns\n",
        crossover.cpu, crossover.device, crossover.runtime
    );
    let mut plans: Vec<&str> = Vec::new();
    for point in &crossover.points {
        if !plans.contains(&point.plan.as_str()) {
            plans.push(&point.plan);
        }
        let rate = |step_s: &[f64]| {
            (!step_s.is_empty()).then(|| {
                point.num_envs as f64 / cartfuse::harness::profile::median(step_s.to_vec())
            })
        };
        let rate = |step_s: &[f64]| rate(step_s).map_or("-".into(), |r| format!("{r:.3e}"));
        let ratio = |r: Option<RoundRatio>| {
            r.map_or_else(|| point.skipped.clone().unwrap_or_default(), |r| r.text())
        };
        let _ = writeln!(
            out,
            "{:>14} n = {:>8}: device-resident: CPU {:>10} env-steps/s, device {:>10}, \
             device / CPU {}",
            point.plan,
            point.num_envs,
            rate(&point.cpu_step_s),
            rate(&point.device_step_s),
            ratio(point.device_speedup()),
        );
        let _ = writeln!(
            out,
            "{:>14}   {:>10}  host steps:      CPU {:>10} env-steps/s, device {:>10}, \
             device / CPU {}; device host / device-resident step {}",
            "",
            "",
            rate(&point.cpu_host_step_s),
            rate(&point.device_host_step_s),
            ratio(point.host_speedup()),
            ratio(point.round_trip()),
        );
    }
    let largest = crossover.sizes().last().copied().unwrap_or(0);
    let wins = |from: Option<usize>| match from {
        Some(n) => format!("the device wins from n = {n} on"),
        None => format!("the device never wins up to n = {largest}"),
    };
    for plan in plans {
        let _ = writeln!(
            out,
            "{plan}: device-resident, {}; host steps, {} (the study: the GPU ahead from \
             about {STUDY_CROSSOVER} simulations)",
            wins(crossover.from(plan)),
            wins(crossover.host_from(plan)),
        );
    }
    out
}

fn csv(crossover: &Crossover) -> String {
    let mut out = String::from(
        "device,runtime,plan,n,rounds,cpu median step (s),device median step (s),device / cpu (median round),slowest round,fastest round,cpu median host step (s),device median host step (s),host device / cpu (median round),device host / resident step (median round),skipped\n",
    );
    for p in &crossover.points {
        let median = |s: &[f64]| {
            (!s.is_empty()).then(|| cartfuse::harness::profile::median(s.to_vec()).to_string())
        };
        let ratio = p.device_speedup();
        let median_of = |r: Option<RoundRatio>| r.map_or(String::new(), |r| r.median.to_string());
        let _ = writeln!(
            out,
            "\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            crossover.device.replace('"', "'"),
            crossover.runtime,
            p.plan,
            p.num_envs,
            p.cpu_step_s.len(),
            median(&p.cpu_step_s).unwrap_or_default(),
            median(&p.device_step_s).unwrap_or_default(),
            ratio.map_or(String::new(), |r| r.median.to_string()),
            ratio.map_or(String::new(), |r| r.slowest_round.to_string()),
            ratio.map_or(String::new(), |r| r.fastest_round.to_string()),
            median(&p.cpu_host_step_s).unwrap_or_default(),
            median(&p.device_host_step_s).unwrap_or_default(),
            median_of(p.host_speedup()),
            median_of(p.round_trip()),
            p.skipped.clone().unwrap_or_default(),
        );
    }
    out
}
