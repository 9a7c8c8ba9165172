//! The `cartfuse` commands: [`args`] declares them, one module per command runs one.

pub mod args;
mod bench;
#[cfg(feature = "cube")]
mod burn_probe;
mod compare;
mod crossover;
#[cfg(feature = "cuda")]
mod cuda_info;
mod plan;
mod progress;
mod replay;
#[cfg(feature = "cube")]
mod reproduce;
mod rollout;
mod train;

use args::{Cli, Command};
use cartfuse::fusion::device::RuntimeKind;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    // `auto` weighs the batch a command steps against the device's crossover.
    let device = |num_envs: Option<u64>| -> anyhow::Result<_> {
        let num_envs = num_envs.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let (device, why) = cartfuse::fusion::device::Device::choose(&cli.device.0, num_envs)?;
        if let Some(why) = why {
            eprintln!("device: {device} ({why})");
        }
        Ok(device)
    };
    match cli.command {
        #[cfg(feature = "cube")]
        Command::BurnProbe(args) => burn_probe::run(args),
        #[cfg(feature = "cube")]
        Command::Reproduce(args) => reproduce::run(device(None)?, args),
        #[cfg(not(feature = "cube"))]
        Command::BurnProbe(_) | Command::Reproduce(_) => anyhow::bail!(
            "this command measures a device against the CPU, and this build has no device \
             runtime: build cartfuse with the `wgpu` (the default) or `cuda` feature"
        ),
        Command::CompareReports(args) => compare::run(args),
        Command::Crossover(args) => crossover::run(device(None)?, args),
        Command::Plan(args) => plan::run(args),
        Command::Bench(args) => bench::run(device(Some(args.envs))?, args),
        Command::Rollout(args) => rollout::run(device(Some(args.envs))?, args),
        Command::Replay(args) => replay::run(device(None)?, args),
        Command::Train(args) => {
            let agents = args
                .agents
                .or(args.seeds.as_ref().map(Vec::len))
                .unwrap_or(1);
            let envs = (args.envs * agents) as u64;
            train::run(device(Some(envs))?, args)
        }
    }
}

/// The device's description for the report: the adapter's for wgpu (name, type, driver),
/// the driver's for CUDA (name, driver API and kernel module versions).
#[cfg_attr(not(feature = "cube"), allow(dead_code))]
fn device_description(kind: RuntimeKind, opened: &str) -> String {
    match kind {
        #[cfg(feature = "cuda")]
        RuntimeKind::Cuda => cuda_info::description(0),
        _ => opened.to_string(),
    }
}
