//! The `cartfuse` command line: rollouts and replays of batched CartPole-v1.

use std::path::PathBuf;

use anyhow::Context;
use cartfuse::fusion::device::RuntimeKind;
use cartfuse::fusion::dispatch_runtime;
use cartfuse::replay::{parse_replay_input, replay};
use cartfuse::rollout::random_rollout;
use cartfuse::{AutoresetMode, CartPoleConfig, CartPoleVecEnv};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

/// Batched CartPole-v1 on CubeCL, under fusion plans you can measure.
#[derive(Debug, Parser)]
#[command(name = "cartfuse", version, about)]
struct Cli {
    /// Compute device to run on.
    #[arg(long, global = true, value_enum, default_value_t = DeviceArg::Wgpu)]
    device: DeviceArg,
    /// More logging on stderr (-v debug, -vv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DeviceArg {
    /// wgpu: Vulkan / Metal (Mesa lavapipe on machines without a GPU).
    Wgpu,
    /// CUDA (needs the `cuda` feature and an NVIDIA driver).
    Cuda,
}

impl From<DeviceArg> for RuntimeKind {
    fn from(device: DeviceArg) -> Self {
        match device {
            DeviceArg::Wgpu => RuntimeKind::Wgpu,
            DeviceArg::Cuda => RuntimeKind::Cuda,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AutoresetArg {
    /// gymnasium 1.x: reset on the step after done (reward 0, action ignored).
    NextStep,
    /// gymnax: reset in the same step, final observation returned beside the new one.
    SameStep,
}

impl From<AutoresetArg> for AutoresetMode {
    fn from(mode: AutoresetArg) -> Self {
        match mode {
            AutoresetArg::NextStep => AutoresetMode::NextStep,
            AutoresetArg::SameStep => AutoresetMode::SameStep,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Step N envs S times under a uniformly random policy and report throughput.
    Rollout {
        /// Number of envs stepped in parallel.
        #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
        envs: u64,
        /// Steps of the whole batch.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
        steps: u64,
        /// Seed of the resets and of the random policy.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// What happens when an episode ends.
        #[arg(long, value_enum, default_value_t = AutoresetArg::NextStep)]
        autoreset: AutoresetArg,
        /// Episodes are truncated after this many steps.
        #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
        max_episode_steps: u32,
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Replay recorded episodes, each in its own lane with autoreset off.
    Replay {
        /// Input JSON file: an `episodes` array of `initial_state` (4 numbers) and `actions` (0s and 1s).
        #[arg(long)]
        input: PathBuf,
        /// Where to write the output JSON (stdout if omitted).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Episodes are truncated after this many steps.
        #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
        max_episode_steps: u32,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.verbose);
    match run(cli) {
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

fn run(cli: Cli) -> anyhow::Result<()> {
    let kind = RuntimeKind::from(cli.device);
    match cli.command {
        Command::Rollout {
            envs,
            steps,
            seed,
            autoreset,
            max_episode_steps,
            json,
        } => {
            let config = CartPoleConfig {
                autoreset: autoreset.into(),
                max_episode_steps,
                ..Default::default()
            };
            let envs = usize::try_from(envs).context("--envs does not fit this machine")?;
            dispatch_runtime!(kind, |opened: R| {
                tracing::info!(device = %opened.description, "opened device");
                let mut env = CartPoleVecEnv::<R>::with_client(opened.client, envs, config)?;
                let bar = progress_bar(steps, "rollout");
                let report = random_rollout(&mut env, steps, seed, |done| bar.set_position(done))?;
                bar.finish_and_clear();
                if json {
                    println!("{}", serde_json::to_string(&report)?);
                } else {
                    println!("device:              {} ({})", kind, opened.description);
                    println!(
                        "envs x steps:        {} x {}",
                        report.num_envs, report.steps
                    );
                    println!(
                        "env-steps/s:         {:.4e} (host actions in, host results out)",
                        report.env_steps_per_s
                    );
                    println!("launches per step:   {}", report.launches_per_step);
                    println!("episodes finished:   {}", report.episodes_finished);
                    match report.mean_episode_length {
                        Some(length) => println!("mean episode length: {length:.2}"),
                        None => println!("mean episode length: n/a (no episode finished)"),
                    }
                }
                anyhow::Ok(())
            })
        }
        Command::Replay {
            input,
            output,
            max_episode_steps,
        } => {
            let text = std::fs::read_to_string(&input)
                .with_context(|| format!("cannot read {}", input.display()))?;
            let episodes =
                parse_replay_input(&text).with_context(|| format!("in {}", input.display()))?;
            let config = CartPoleConfig {
                max_episode_steps,
                ..Default::default()
            };
            let result = dispatch_runtime!(kind, |opened: R| {
                anyhow::Ok(replay::<R>(opened.client, config, &episodes)?)
            })?;
            let text = serde_json::to_string(&result)?;
            match output {
                Some(path) => std::fs::write(&path, text + "\n")
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => println!("{text}"),
            }
            Ok(())
        }
    }
}

fn progress_bar(len: u64, label: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} steps ({per_sec}, eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(label);
    bar
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    #[test]
    fn rejects_zero_envs_and_unknown_modes() {
        assert!(Cli::try_parse_from(["cartfuse", "rollout", "--envs", "0"]).is_err());
        assert!(Cli::try_parse_from(["cartfuse", "rollout", "--autoreset", "never"]).is_err());
        assert!(Cli::try_parse_from(["cartfuse", "--device", "tpu", "rollout"]).is_err());
        let cli = Cli::try_parse_from([
            "cartfuse",
            "rollout",
            "--envs",
            "8",
            "--autoreset",
            "same-step",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            Command::Rollout {
                envs: 8,
                autoreset: AutoresetArg::SameStep,
                ..
            }
        ));
    }
}
