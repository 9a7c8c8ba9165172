//! `cartfuse reproduce`: the report.

use anyhow::Context;
use cartfuse::fusion::device::{Device, RuntimeKind};
use cartfuse::fusion::dispatch_runtime;
use cartfuse::harness::plot::write_plots;
use cartfuse::harness::report::write_report;
use cartfuse::harness::reproduce::{Report, ReproduceMode, ReproduceSettings, reproduce};
use cartfuse::harness::studies::burn::{BurnBackend, LaunchProbe};
use cartfuse::harness::studies::roofline::DriverCopyMeter;

use super::args::ReproduceArgs;
use super::{device_description, progress};

/// Envs and steps of the burn launch count.
const PROBE_ENVS: usize = 1024;
const PROBE_STEPS: usize = 20;

/// Measures everything, then writes the report, the CSVs and the plots into `--out`; after
/// each section, the report so far (marked partial, without plots) is written there too.
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
    let mode = if args.quick {
        ReproduceMode::Quick
    } else if args.full {
        ReproduceMode::Full
    } else {
        ReproduceMode::Default
    };
    let mut settings = ReproduceSettings::of(mode);
    settings.burn_backends = BurnBackend::on(kind.name());
    if let Some(budget) = args.turns_budget {
        settings.turns.budget_s = budget;
        settings.cpu_turns.budget_s = budget * 2.0 / 3.0;
        settings.env_turns.budget_s = budget / 3.0;
    }
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
        let description = device_description(kind, &opened.description);
        eprintln!("device: {description} ({kind})");
        settings.device_cache_bytes = device_cache_bytes(kind, &description);
        settings.driver_copy = driver_copy(kind);
        let progress = progress::Progress::new(settings.tasks() as u64, "reproduce");
        let backend =
            cartfuse::fusion::cube::Cube::with_client(opened.client, &opened.device, description);
        // After each section the report so far replaces the last one written (without
        // plots): a run cut by a timeout or an error leaves every section it finished.
        let checkpoint = |report: &Report| {
            if report.stopped_at.is_none() {
                return; // written below, with its plots
            }
            if let Err(error) = write_report(report, out, &[]) {
                tracing::warn!("could not write the partial report: {error}");
            }
        };
        let report = reproduce::<R>(
            backend,
            &settings,
            |message| {
                tracing::info!("measuring {message}");
                progress.start(message);
            },
            checkpoint,
        )?;
        progress.finish();
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

/// The last-level cache of the device the report runs on, where it is known: the host's
/// for a wgpu adapter that emulates a GPU on the CPU (Mesa's lavapipe), the L2 for CUDA.
fn device_cache_bytes(kind: RuntimeKind, description: &str) -> Option<u64> {
    match kind {
        RuntimeKind::Wgpu if description.contains("(Cpu, ") => {
            cartfuse::fusion::cpu::cache::last_level_cache_bytes()
        }
        #[cfg(feature = "cuda")]
        RuntimeKind::Cuda => super::cuda_info::l2_cache_bytes(),
        _ => None,
    }
}

/// The driver's own device-to-device copy of `kind`'s runtime, the roofline's reference.
fn driver_copy(kind: RuntimeKind) -> Option<DriverCopyMeter> {
    match kind {
        #[cfg(feature = "wgpu")]
        RuntimeKind::Wgpu => Some(DriverCopyMeter {
            runtime: "wgpu",
            measure: cartfuse::fusion::cube::driver_copy::wgpu_copy,
        }),
        #[cfg(feature = "cuda")]
        RuntimeKind::Cuda => Some(DriverCopyMeter {
            runtime: "cuda",
            measure: cartfuse::fusion::cube::driver_copy::cuda_copy,
        }),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}
