//! The command line's arguments (clap derive); each command's module runs its variant.

use std::path::PathBuf;

use cartfuse::fusion::device::Device;
use cartfuse::fusion::plan::{PlanError, Strategy};
use cartfuse::{AutoresetMode, StepPlan};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};

pub mod train;

/// Batched RL environments under fusion plans you can measure, on the CPU and CubeCL devices.
#[derive(Debug, Parser)]
#[command(name = "cartfuse", version, about)]
pub struct Cli {
    /// Compute device to run on (`auto`: a real GPU when one is found, else the CPU).
    #[arg(long, global = true, default_value = "auto", value_parser = choice::<DeviceName>(&Device::CHOICES))]
    pub device: DeviceName,
    /// More logging on stderr (-v debug, -vv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// `--device`: a name of [`Device::CHOICES`], opened when a command needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceName(pub String);

impl std::str::FromStr for DeviceName {
    type Err = std::convert::Infallible;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(Self(name.to_owned()))
    }
}

/// A value parser offering `choices` (name and help, one definition in the library) and
/// parsing the name chosen.
fn choice<T>(choices: &'static [(&'static str, &'static str)]) -> impl TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Debug,
{
    let values = (choices.iter()).map(|(name, help)| PossibleValue::new(*name).help(*help));
    PossibleValuesParser::new(values).map(|name| name.parse::<T>().expect("a listed name"))
}

/// `--layout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// One buffer per state component.
    Soa,
    /// One packed [n, 4] state array (the study's baseline).
    Packed,
}

/// `--random` of `plan`: where the step's random numbers come from (the study's rungs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RandomArg {
    /// An opaque op of its own, XLA's threefry custom call (`xla-default`'s baseline).
    Opaque,
    /// Fused like any other op.
    Fused,
    /// Drawn ahead by a launch of their own and read as inputs ("random precomputed").
    DrawnAhead,
}

/// `--concat-rule` of `plan`: XLA's rule against fusing a concatenate with several users.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConcatRuleArg {
    /// The rule as XLA has it (the study's baseline).
    Xla,
    /// The study's patched compiler: the concatenate may fuse into each of its users.
    Patched,
}

/// The burn backends whose launches `burn-probe` counts (names as in
/// `BurnBackend::probe_arg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BurnBackendArg {
    /// burn's wgpu backend with fusion.
    WgpuFusion,
    /// burn's CubeCL wgpu backend without fusion.
    WgpuUnfused,
    /// burn's CUDA backend with fusion.
    CudaFusion,
}

fn parse_plan(name: &str) -> Result<StepPlan, String> {
    name.parse().map_err(|error: PlanError| error.to_string())
}

/// `--strategy` help: the names the planner knows.
pub(super) fn strategy_help() -> String {
    format!("{}.", Strategy::expected())
}

/// `--plan` help: the strategies and the hand-written kernel.
fn plan_help() -> String {
    format!("{} or hand-written.", Strategy::names().join(", "))
}

pub(super) fn parse_strategy(name: &str) -> Result<Strategy, String> {
    name.parse().map_err(|error: PlanError| error.to_string())
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count the kernel launches per step of a burn backend from CubeCL's execution log
    /// (used by `reproduce`; needs a `cubecl.toml` that logs executions to `--log`).
    #[command(hide = true)]
    BurnProbe(BurnProbeArgs),
    /// The main job: replay the XLA fusion study's CartPole ablation, the roofline
    /// workloads, the dispatch tax and the compile break-even, and write the report.
    Reproduce(ReproduceArgs),
    /// Check two `report.json` files of runs on one machine against each other: every
    /// factor's median in each must lie within the other's rounds (exit status 1 when a
    /// ladder factor does not).
    CompareReports(CompareReportsArgs),
    /// Time the same CartPole plans on the native CPU and on `--device` in turns from 1 to
    /// 1M envs, and print the size from which the device wins (the study: about 70).
    Crossover(CrossoverArgs),
    /// Print how a strategy partitions a graph: kernels, ops, buffers, bytes, boundaries.
    Plan(PlanArgs),
    /// Measure one plan: env-steps/s (median of repeats), launches and bytes per step, JIT time.
    Bench(BenchArgs),
    /// Step N envs S times under a uniformly random policy and report throughput.
    Rollout(RolloutArgs),
    /// Replay recorded episodes, each in its own lane with autoreset off.
    Replay(ReplayArgs),
    /// Train PPO on CartPole-v1, one agent or a population, until the mean return of the
    /// last 100 episodes reaches the target.
    Train(train::TrainArgs),
}

/// `--env`: which registered environment a command runs.
#[derive(Debug, Clone, clap::Args)]
pub struct EnvArg {
    /// The environment, by gymnasium id.
    #[arg(long = "env", default_value = "CartPole-v1", value_parser = clap::builder::PossibleValuesParser::new(cartfuse::env::registry::ENV_IDS))]
    pub id: String,
}

/// `cartfuse burn-probe`.
#[derive(Debug, clap::Args)]
pub struct BurnProbeArgs {
    /// The backend.
    #[arg(long, value_enum)]
    pub backend: BurnBackendArg,
    /// Envs.
    #[arg(long, default_value_t = 1024)]
    pub envs: usize,
    /// Steps counted after warm-up.
    #[arg(long, default_value_t = 20)]
    pub steps: usize,
    /// The execution log cubecl writes.
    #[arg(long)]
    pub log: PathBuf,
}

/// `cartfuse reproduce`.
#[derive(Debug, clap::Args)]
pub struct ReproduceArgs {
    /// Small sizes and three rounds: the report's structure in about a minute.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// Every size of the study's sweep and more rounds in turns (about 16 minutes on a
    /// 2-core machine; the default run covers every section in under 10).
    #[arg(long)]
    pub full: bool,
    /// Directory for report.md, report.json, the CSVs and the plots.
    #[arg(long, default_value = "cartfuse-report")]
    pub out: PathBuf,
    /// Seconds of rounds in turns per size on the device (the CPU's plans get two thirds of
    /// it); default 15 (`--full`: 45).
    #[arg(long, value_parser = parse_seconds)]
    pub turns_budget: Option<f64>,
    /// Rounds of the heavy workload's per-element loop.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub heavy_loops: Option<u32>,
    /// Add a section with every plan of this environment beside CartPole-v1, or of every
    /// environment (`all`), on the CPU and the device at n = 4096 and 1M.
    #[arg(long, value_parser = parse_study_envs)]
    pub env: Option<StudyEnvs>,
}

/// `cartfuse crossover`.
#[derive(Debug, clap::Args)]
pub struct CrossoverArgs {
    /// Plans, each on both sides (comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = parse_plan, default_value = "fused,hand-written")]
    pub plans: Vec<StepPlan>,
    /// The smallest size.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub from: u64,
    /// The largest size.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub to: u64,
    /// Sizes go up by this factor.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(2..))]
    pub step: u64,
    /// Seconds of rounds in turns per plan and size (at least 5 rounds).
    #[arg(long, default_value_t = 2.0, value_parser = parse_seconds)]
    pub budget: f64,
    /// Also write crossover.json and crossover.csv into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `cartfuse compare-reports`.
#[derive(Debug, clap::Args)]
pub struct CompareReportsArgs {
    /// The first run's `report.json`.
    pub first: PathBuf,
    /// The second run's `report.json`.
    pub second: PathBuf,
    /// Print every factor, not only those that disagree.
    #[arg(long)]
    pub all: bool,
}

/// A positive number of seconds, at most an hour.
fn parse_seconds(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 3600.0 => Ok(s),
        _ => Err(format!(
            "expected seconds between 0 and 3600, got `{value}`"
        )),
    }
}

/// The environments `reproduce --env` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StudyEnvs(pub Vec<&'static str>);

/// `--env` of `reproduce`: a gymnasium id or `all`.
fn parse_study_envs(value: &str) -> Result<StudyEnvs, String> {
    cartfuse::harness::studies::envs::study_envs(value).map(StudyEnvs)
}

/// `cartfuse plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub env: EnvArg,
    #[arg(long, value_parser = parse_strategy, help = strategy_help(), long_help = Strategy::help())]
    pub strategy: Strategy,
    /// Autoreset mode of the step graph.
    #[arg(long, default_value = "next-step", value_parser = choice::<AutoresetMode>(&AutoresetMode::CHOICES))]
    pub autoreset: AutoresetMode,
    /// State layout (default: packed for xla-default, soa otherwise).
    #[arg(long, value_enum)]
    pub layout: Option<LayoutArg>,
    /// Where the step's random numbers come from; `opaque` matters to `xla-default` only,
    /// which keeps the threefry op out of every fusion (the study's rungs: `opaque`, then
    /// `drawn-ahead`).
    #[arg(long, value_enum, default_value_t = RandomArg::Opaque)]
    pub random: RandomArg,
    /// XLA's concatenate rule (`xla-default` only; `patched` is the study's third rung).
    #[arg(long, value_enum, default_value_t = ConcatRuleArg::Xla)]
    pub concat_rule: ConcatRuleArg,
    /// Print the graph in Graphviz DOT instead.
    #[arg(long)]
    pub dot: bool,
}

/// `cartfuse bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub env: EnvArg,
    #[arg(long, value_parser = parse_plan, help = plan_help(), long_help = format!("{}\nhand-written: the hand-written step kernel", Strategy::help()))]
    pub plan: StepPlan,
    /// Number of envs stepped in parallel.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    pub envs: u64,
    /// Env steps per timed repeat (default: enough for 0.5 s).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: Option<u64>,
    /// Timed repeats (the median is reported); with `--against`, rounds of one repeat each.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..1000))]
    pub repeats: u64,
    /// Time `--plan` against this plan in turns (one repeat of each, back to back, every
    /// round) and report the median round's speed ratio: the way to compare two plans on a
    /// machine whose speed drifts.
    #[arg(long, value_parser = parse_plan, conflicts_with_all = ["steps", "cubecl_log"])]
    pub against: Option<StepPlan>,
    /// Autoreset mode.
    #[arg(long, default_value = "next-step", value_parser = choice::<AutoresetMode>(&AutoresetMode::CHOICES))]
    pub autoreset: AutoresetMode,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Count the launches in this CubeCL execution log (written when `cubecl.toml` sets
    /// `[profiling] logger = { level = "minimal", file = ... }`) and report them as
    /// `runtime_launches`, after waiting for CubeCL's asynchronous logger to catch up.
    #[arg(long, hide = true)]
    pub cubecl_log: Option<PathBuf>,
}

/// `cartfuse rollout`.
#[derive(Debug, clap::Args)]
pub struct RolloutArgs {
    #[command(flatten)]
    pub env: EnvArg,
    /// Number of envs stepped in parallel.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    pub envs: u64,
    /// Steps of the whole batch.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: u64,
    /// Seed of the resets and of the random policy.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// What happens when an episode ends.
    #[arg(long, default_value = "next-step", value_parser = choice::<AutoresetMode>(&AutoresetMode::CHOICES))]
    pub autoreset: AutoresetMode,
    /// Episodes are truncated after this many steps (default: the environment's
    /// registered limit, 500 for CartPole-v1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_episode_steps: Option<u32>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `cartfuse replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub env: EnvArg,
    /// Input JSON file: an `episodes` array of `initial_state` (the environment's internal
    /// state, in the order of gymnasium's `env.unwrapped.state`; 4 numbers for CartPole) and
    /// `actions` (of the environment's action type: 0s and 1s for CartPole).
    #[arg(long)]
    pub input: PathBuf,
    /// Where to write the output JSON (stdout if omitted).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Episodes are truncated after this many steps (default: the environment's
    /// registered limit).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_episode_steps: Option<u32>,
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
            Command::Rollout(RolloutArgs {
                envs: 8,
                autoreset: AutoresetMode::SameStep,
                ..
            })
        ));
    }
}
