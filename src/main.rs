//! The `cartfuse` command line: rollouts, replays, plans, benchmarks and the reproduction
//! report of batched CartPole-v1. [`cli::args`] declares the commands; each has a module.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::args::Cli::parse();
    init_tracing(cli.verbose);
    #[cfg(feature = "cube")]
    cartfuse::fusion::cube::runtime_dir::ensure();
    let checked = cartfuse::fusion::device::check_environment().map_err(anyhow::Error::from);
    match checked.and_then(|()| cli::run(cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn init_tracing(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
