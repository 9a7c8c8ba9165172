//! `cartfuse reproduce`: the report.

use anyhow::Context;
use cartfuse::fusion::device::{Device, RuntimeKind};
use cartfuse::fusion::dispatch_runtime;
use cartfuse::harness::burn_bench::LaunchProbe;
use cartfuse::harness::plot::write_plots;
use cartfuse::harness::report::write_report;
// A build without a device runtime has no device to reproduce on (an error at run time).
#[cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(unused_imports))]
use cartfuse::harness::reproduce::{Report, ReproduceSettings, reproduce};

use super::args::ReproduceArgs;
#[cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(unused_imports))]
use super::progress;

/// Envs and steps of the burn launch count.
const PROBE_ENVS: usize = 1024;
const PROBE_STEPS: usize = 20;

/// Measures everything, then writes the report, the CSVs and the plots into `--out`.
///
/// The study compares a device with the CPU: the device sections run on `device`'s CubeCL
/// runtime, or on wgpu when `device` is the CPU (the CPU side is measured in every run).
pub fn run(device: Device, args: ReproduceArgs) -> anyhow::Result<()> {
    let kind = match device {
        Device::Cube(kind) => kind,
        Device::Cpu => {
            eprintln!(
                "reproduce: the device sections run on wgpu (the study sets a device against the \
                 CPU); the CPU side runs natively"
            );
            RuntimeKind::Wgpu
        }
    };
    let mut settings = if args.quick {
        ReproduceSettings::quick()
    } else {
        ReproduceSettings::full()
    };
    if let Some(loops) = args.heavy_loops {
        settings.heavy_loops = loops;
    }
    if let Some(envs) = &args.env {
        settings.env_ids = envs.0.clone();
    }
    settings.launch_probe = Some(LaunchProbe {
        program: std::env::current_exe().context("cannot find the cartfuse executable")?,
        args: vec!["burn-probe".into()],
        num_envs: PROBE_ENVS,
        steps: PROBE_STEPS,
    });
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let report: anyhow::Result<Report> = dispatch_runtime!(kind, |opened: R| {
        eprintln!("device: {} ({kind})", opened.description);
        let bar = progress::bar(settings.tasks() as u64, "reproduce");
        let report = reproduce::<R>(
            opened.client,
            opened.description.clone(),
            &settings,
            args.quick,
            |message| {
                tracing::info!("measuring {message}");
                bar.set_message(message.to_string());
                bar.inc(1);
            },
        )?;
        bar.finish_and_clear();
        anyhow::Ok(report)
    });
    let report = report?;
    for failure in &report.launch_probe_failures {
        tracing::warn!("could not count launches of {failure}");
    }
    let plots = write_plots(&report, out)
        .map_err(|error| anyhow::anyhow!("drawing the plots failed: {error}"))?;
    write_report(&report, out, &plots)?;
    println!("wrote {}", out.join("report.md").display());
    Ok(())
}
