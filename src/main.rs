//! The `cartfuse` command line: rollouts and replays of batched CartPole-v1.

use std::path::PathBuf;

use anyhow::Context;
use cartfuse::env::cartpole::cartpole_step_graph;
use cartfuse::env::engine::layout_for;
use cartfuse::env::graph::StateLayout;
use cartfuse::fusion::device::RuntimeKind;
use cartfuse::fusion::dispatch_runtime;
use cartfuse::fusion::plan::{Plan, PlanOptions, Strategy};
use cartfuse::harness::burn_bench::{BurnBackend, launches_per_step_from_log};
use cartfuse::harness::plot::write_plots;
use cartfuse::harness::profile::{ProfileSettings, profile_cartpole};
use cartfuse::harness::report::write_report;
use cartfuse::harness::reproduce::{ReproduceSettings, reproduce};
use cartfuse::replay::{parse_replay_input, replay};
use cartfuse::rollout::random_rollout;
use cartfuse::{AutoresetMode, CartPoleConfig, CartPoleVecEnv, StepPlan};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GraphArg {
    /// The CartPole-v1 step, in the state layout the strategy runs on.
    Cartpole,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LayoutArg {
    /// One buffer per state component.
    Soa,
    /// One packed [n, 4] state array (the study's baseline).
    Packed,
}

fn parse_plan(name: &str) -> Result<StepPlan, String> {
    name.parse()
        .map_err(|error: cartfuse::fusion::plan::PlanError| error.to_string())
}

/// `--strategy` help: the names the planner knows.
fn strategy_help() -> String {
    format!("{}.", Strategy::expected())
}

/// `--plan` help: the strategies and the hand-written kernel.
fn plan_help() -> String {
    format!("{} or hand-written.", Strategy::names().join(", "))
}

fn parse_strategy(name: &str) -> Result<Strategy, String> {
    name.parse()
        .map_err(|error: cartfuse::fusion::plan::PlanError| error.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BurnBackendArg {
    /// burn's wgpu backend with fusion.
    WgpuFusion,
    /// burn's CubeCL wgpu backend without fusion.
    WgpuUnfused,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Count the kernel launches per step of a burn backend from CubeCL's execution log
    /// (used by `reproduce`; needs a `cubecl.toml` that logs executions to `--log`).
    #[command(hide = true)]
    BurnProbe {
        /// The backend.
        #[arg(long, value_enum)]
        backend: BurnBackendArg,
        /// Envs.
        #[arg(long, default_value_t = 1024)]
        envs: usize,
        /// Steps counted after warm-up.
        #[arg(long, default_value_t = 20)]
        steps: usize,
        /// The execution log cubecl writes.
        #[arg(long)]
        log: PathBuf,
    },
    /// The main job: replay the XLA fusion study's CartPole ablation, the roofline
    /// workloads, the dispatch tax and the compile break-even, and write the report.
    Reproduce {
        /// Small sizes and short timings (under 2 minutes on a 2-core lavapipe machine).
        #[arg(long)]
        quick: bool,
        /// Directory for report.md, report.json, the CSVs and the plots.
        #[arg(long, default_value = "cartfuse-report")]
        out: PathBuf,
        /// Rounds of the heavy workload's per-element loop.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
        heavy_loops: Option<u32>,
    },
    /// Print how a strategy partitions a graph: kernels, ops, buffers, bytes, boundaries.
    Plan {
        /// The graph to plan.
        #[arg(long, value_enum, default_value_t = GraphArg::Cartpole)]
        graph: GraphArg,
        #[arg(long, value_parser = parse_strategy, help = strategy_help(), long_help = Strategy::help())]
        strategy: Strategy,
        /// Autoreset mode of the CartPole graph.
        #[arg(long, value_enum, default_value_t = AutoresetArg::NextStep)]
        autoreset: AutoresetArg,
        /// State layout (default: packed for xla-default, soa otherwise).
        #[arg(long, value_enum)]
        layout: Option<LayoutArg>,
        /// Print the graph in Graphviz DOT instead.
        #[arg(long)]
        dot: bool,
    },
    /// Measure one plan: env-steps/s (median of repeats), launches and bytes per step, JIT time.
    Bench {
        #[arg(long, value_parser = parse_plan, help = plan_help(), long_help = format!("{}\nhand-written: the hand-written step kernel", Strategy::help()))]
        plan: StepPlan,
        /// Number of envs stepped in parallel.
        #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
        envs: u64,
        /// Env steps per timed repeat (default: enough for 0.5 s).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        steps: Option<u64>,
        /// Timed repeats (the median is reported).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..1000))]
        repeats: u64,
        /// Autoreset mode.
        #[arg(long, value_enum, default_value_t = AutoresetArg::NextStep)]
        autoreset: AutoresetArg,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Count the launches in this CubeCL execution log (written when `cubecl.toml` sets
        /// `[profiling] logger = { level = "minimal", file = ... }`) and report them as
        /// `runtime_launches`, after waiting for CubeCL's asynchronous logger to catch up.
        #[arg(long, hide = true)]
        cubecl_log: Option<PathBuf>,
    },
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
        Command::BurnProbe {
            backend,
            envs,
            steps,
            log,
        } => {
            let backend = match backend {
                BurnBackendArg::WgpuFusion => BurnBackend::WgpuFusion,
                BurnBackendArg::WgpuUnfused => BurnBackend::WgpuUnfused,
            };
            println!("{}", launches_per_step_from_log(backend, envs, steps, &log));
            Ok(())
        }
        Command::Reproduce {
            quick,
            out,
            heavy_loops,
        } => {
            let mut settings = if quick {
                ReproduceSettings::quick()
            } else {
                ReproduceSettings::full()
            };
            if let Some(loops) = heavy_loops {
                settings.heavy_loops = loops;
            }
            std::fs::create_dir_all(&out)
                .with_context(|| format!("cannot create {}", out.display()))?;
            let report = dispatch_runtime!(kind, |opened: R| {
                eprintln!("device: {} ({kind})", opened.description);
                let bar = progress_bar(settings.tasks() as u64, "reproduce");
                let report = reproduce::<R>(
                    opened.client,
                    opened.description.clone(),
                    &settings,
                    quick,
                    |message| {
                        tracing::info!("measuring {message}");
                        bar.set_message(message.to_string());
                        bar.inc(1);
                    },
                )?;
                bar.finish_and_clear();
                anyhow::Ok(report)
            })?;
            let mut report = report;
            for (backend, arg) in [
                (BurnBackend::WgpuFusion, "wgpu-fusion"),
                (BurnBackend::WgpuUnfused, "wgpu-unfused"),
            ] {
                let launches = probe_burn_launches(arg);
                if let Err(reason) = &launches {
                    tracing::warn!("could not count {} launches: {reason}", backend.name());
                }
                for profile in report
                    .burn
                    .iter_mut()
                    .filter(|p| p.backend == backend.name())
                {
                    profile.launches_per_step = launches.as_ref().ok().copied();
                }
            }
            let plots = write_plots(&report, &out)
                .map_err(|error| anyhow::anyhow!("drawing the plots failed: {error}"))?;
            write_report(&report, &out, &plots)?;
            println!("wrote {}", out.join("report.md").display());
            Ok(())
        }
        Command::Plan {
            graph: GraphArg::Cartpole,
            strategy,
            autoreset,
            layout,
            dot,
        } => {
            let layout = match layout {
                Some(LayoutArg::Soa) => StateLayout::StructOfArrays,
                Some(LayoutArg::Packed) => StateLayout::Packed,
                None => layout_for(strategy),
            };
            let graph = cartpole_step_graph(autoreset.into(), layout);
            if dot {
                print!("{}", graph.to_dot());
            } else {
                let plan = Plan::build(&graph, strategy, &PlanOptions::default())?;
                println!(
                    "graph: CartPole-v1 step ({:?} autoreset, {layout:?} state), {} nodes, {} ops",
                    AutoresetMode::from(autoreset),
                    graph.nodes().len(),
                    graph.computing_ops()
                );
                print!("{}", plan.explain(&graph));
            }
            Ok(())
        }
        Command::Bench {
            plan,
            envs,
            steps,
            repeats,
            autoreset,
            json,
            cubecl_log,
        } => {
            let envs = usize::try_from(envs).context("--envs does not fit this machine")?;
            let config = CartPoleConfig {
                autoreset: autoreset.into(),
                ..Default::default()
            };
            let k = u64::from(plan.steps_per_call());
            let settings = ProfileSettings {
                repeats: repeats as usize,
                calls_per_repeat: steps.map(|s| s.div_ceil(k)),
                ..ProfileSettings::default()
            };
            dispatch_runtime!(kind, |opened: R| {
                let bar = progress_bar(settings.repeats as u64, "bench");
                let profile = profile_cartpole::<R>(
                    opened.client,
                    config,
                    plan,
                    envs,
                    &settings,
                    |done, _| bar.set_position(done as u64),
                )?;
                bar.finish_and_clear();
                if json {
                    let mut value = serde_json::to_value(&profile)?;
                    if let Some(log) = &cubecl_log {
                        value["runtime_launches"] =
                            runtime_launches(log, profile.launches_total).into();
                    }
                    println!("{value}");
                } else {
                    println!(
                        "plan:               {} on {} ({})",
                        profile.plan, kind, opened.description
                    );
                    println!("envs:               {}", profile.num_envs);
                    println!(
                        "env-steps/s:        {:.4e} (median of {} repeats of {} calls)",
                        profile.env_steps_per_s, settings.repeats, profile.calls_per_repeat
                    );
                    println!(
                        "time per step:      {:.3} us (min {:.3}, max {:.3})",
                        profile.step_s_median * 1e6,
                        profile.step_s_min * 1e6,
                        profile.step_s_max * 1e6
                    );
                    println!("launches per step:  {}", profile.launches_per_step);
                    println!("bytes per env-step: {}", profile.bytes_per_env_step);
                    println!("JIT compile:        {:.1} ms", profile.compile_s * 1e3);
                }
                anyhow::Ok(())
            })
        }
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

/// Kernel executions recorded in CubeCL's log `path`, waiting (up to 10 s) until the
/// runtime's asynchronous logger has written at least `expected` of them.
fn runtime_launches(path: &std::path::Path, expected: u64) -> u64 {
    let count = || {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.starts_with("Executing "))
            .count() as u64
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = count();
    while seen < expected && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        seen = count();
    }
    seen
}

/// Runs `cartfuse burn-probe` in a scratch directory whose `cubecl.toml` logs every kernel
/// execution, and returns the launches per step it counted (at n = 1024).
fn probe_burn_launches(backend: &str) -> Result<f64, String> {
    let dir = std::env::temp_dir().join(format!(
        "cartfuse-burn-probe-{}-{backend}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(
        dir.join("cubecl.toml"),
        "[profiling]\nlogger = { level = \"minimal\", file = \"executions.log\", append = false }\n",
    )
    .map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let output = std::process::Command::new(exe)
        .args([
            "burn-probe",
            "--backend",
            backend,
            "--log",
            "executions.log",
        ])
        .current_dir(&dir)
        .output()
        .map_err(|e| e.to_string())?;
    std::fs::remove_dir_all(&dir).ok();
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .map_err(|e| format!("{e}"))
}

fn progress_bar(len: u64, label: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("[{bar:40}] {pos}/{len} {elapsed}/{eta} {msg}")
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
