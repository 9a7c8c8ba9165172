//! The `cartfuse` commands: [`args`] declares them, one module per command runs one.

pub mod args;
mod bench;
mod burn_probe;
mod plan;
mod progress;
mod replay;
mod reproduce;
mod rollout;
pub mod runtime_dir;

use cartfuse::fusion::device::RuntimeKind;

use args::{Cli, Command};

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let kind = RuntimeKind::from(cli.device);
    match cli.command {
        Command::BurnProbe(args) => burn_probe::run(args),
        Command::Reproduce(args) => reproduce::run(kind, args),
        Command::Plan(args) => plan::run(args),
        Command::Bench(args) => bench::run(kind, args),
        Command::Rollout(args) => rollout::run(kind, args),
        Command::Replay(args) => replay::run(kind, args),
    }
}
