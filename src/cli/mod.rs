//! The `cartfuse` commands: [`args`] declares them, one module per command runs one.

pub mod args;
mod bench;
mod burn_probe;
mod compare;
mod crossover;
#[cfg(feature = "cuda")]
mod cuda_info;
mod plan;
mod progress;
mod replay;
mod reproduce;
mod rollout;
mod train;

use args::{Cli, Command};

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let device = || -> anyhow::Result<_> {
        let (device, why) = cartfuse::fusion::device::Device::choose(&cli.device.0)?;
        if let Some(why) = why {
            eprintln!("device: {device} ({why})");
        }
        Ok(device)
    };
    match cli.command {
        Command::BurnProbe(args) => burn_probe::run(args),
        Command::Reproduce(args) => reproduce::run(device()?, args),
        Command::CompareReports(args) => compare::run(args),
        Command::Crossover(args) => crossover::run(device()?, args),
        Command::Plan(args) => plan::run(args),
        Command::Bench(args) => bench::run(device()?, args),
        Command::Rollout(args) => rollout::run(device()?, args),
        Command::Replay(args) => replay::run(device()?, args),
        Command::Train(args) => train::run(device()?, args),
    }
}
