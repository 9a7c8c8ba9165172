//! `cartfuse train`'s arguments, and the PPO settings and population they give.

use std::path::PathBuf;

use cartfuse::fusion::plan::Strategy;
use cartfuse::train::PpoConfig;
use cartfuse::train::population::{AgentSettings, PopulationConfig};

use super::parse_strategy;

/// `cartfuse train`.
#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    /// Agents trained together, seeded `--seed`, `--seed + 1`, ... (a population: its envs,
    /// rollouts and gradient steps batched over agents; native or device learner).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096), conflicts_with = "seeds")]
    pub agents: Option<usize>,
    /// The agents' seeds, comma-separated (one agent per seed; native or device learner).
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub seeds: Option<Vec<u64>>,
    /// Envs stepped in parallel (per agent).
    #[arg(long, default_value_t = PpoConfig::default().num_envs, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65_536))]
    pub envs: usize,
    /// Steps per env between two updates.
    #[arg(long, default_value_t = PpoConfig::default().num_steps, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65_536))]
    pub num_steps: usize,
    /// Env-steps (per agent) after which training stops if the target was not reached (the
    /// learning rate anneals over them).
    #[arg(long, default_value_t = PpoConfig::default().total_env_steps, value_parser = clap::value_parser!(u64).range(1..))]
    pub total_env_steps: u64,
    /// Stop (an agent) once the mean return of its last 100 finished episodes reaches this.
    #[arg(long, default_value_t = 475.0)]
    pub target: f64,
    /// Run the whole budget, whatever the return.
    #[arg(long)]
    pub no_target: bool,
    /// Adam's initial learning rate (annealed linearly to 0): one value, or one per agent
    /// (comma-separated).
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = [PpoConfig::default().learning_rate])]
    pub learning_rate: Vec<f64>,
    /// Passes over each rollout.
    #[arg(long, default_value_t = PpoConfig::default().update_epochs, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub epochs: usize,
    /// Minibatches per pass (they must divide `envs * num-steps`).
    #[arg(long, default_value_t = PpoConfig::default().num_minibatches, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub minibatches: usize,
    /// Discount, in [0, 1].
    #[arg(long, default_value_t = PpoConfig::default().gamma)]
    pub gamma: f32,
    /// GAE's lambda, in [0, 1].
    #[arg(long, default_value_t = PpoConfig::default().gae_lambda)]
    pub gae_lambda: f32,
    /// Weight of the entropy bonus: one value, or one per agent (comma-separated).
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = [PpoConfig::default().ent_coef])]
    pub ent_coef: Vec<f32>,
    /// PPO's ratio clip: one value, or one per agent (comma-separated).
    #[arg(long, value_delimiter = ',', num_args = 1.., default_values_t = [PpoConfig::default().clip_coef])]
    pub clip_coef: Vec<f32>,
    /// Seed of the weights, resets, action draws and minibatch order (of the first agent).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Start from the weights saved at this path (without the `.mpk` extension).
    #[arg(long)]
    pub load: Option<PathBuf>,
    /// Save the trained weights at this path (`.mpk` is added; a population saves agent `i`
    /// at `PATH-seed<seed>.mpk`).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// What learns: the native batched learner on the CPU, a device learner on `--device`
    /// (hand-written kernels or burn's tensor ops, agents a batch dimension), or a burn
    /// backend (one agent; the envs run on `--device`). `auto`: the device learner on a GPU,
    /// the native one on the CPU runtime and on CPU-emulated devices (lavapipe), where it
    /// measured faster.
    #[arg(long, value_enum, default_value_t = LearnerArg::Auto)]
    pub learner: LearnerArg,
    /// Where the policy runs while collecting: `host` (the learner's forward pass, then the
    /// env step), a plan name (`fused`, `fused-x8`, ...): the policy fused into the env's
    /// step, `num_steps / K` calls per update on `--device` (a population's agents in one
    /// launch), or `device`: burn's policy on the envs' device, with `--learner wgpu
    /// --device wgpu` (or cuda). `auto`: `host` on the CPU runtime, fused (`fused-x8`
    /// when `num_steps` allows) on a device.
    #[arg(long, default_value = "auto", value_parser = parse_rollout)]
    pub rollout: RolloutArg,
    /// Print a progress line every this many updates.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub log_every: u64,
    /// Print the report as one JSON object: a single run's (with its per-update history),
    /// or with `--agents`/`--seeds` the population's summary.
    #[arg(long)]
    pub json: bool,
}

impl TrainArgs {
    /// Whether `--agents` or `--seeds` asked for a population (even of one).
    pub fn population(&self) -> bool {
        self.agents.is_some() || self.seeds.is_some()
    }

    /// The agents' seeds.
    pub fn seeds(&self) -> Vec<u64> {
        match (&self.seeds, self.agents) {
            (Some(seeds), _) => seeds.clone(),
            (None, agents) => (0..agents.unwrap_or(1) as u64)
                .map(|i| self.seed.wrapping_add(i))
                .collect(),
        }
    }

    /// The shared PPO settings (the first agent's own ones where a list gives several).
    pub fn ppo_config(&self) -> anyhow::Result<PpoConfig> {
        let config = PpoConfig {
            num_envs: self.envs,
            num_steps: self.num_steps,
            total_env_steps: self.total_env_steps,
            target_return: (!self.no_target).then_some(self.target),
            learning_rate: self.learning_rate[0],
            update_epochs: self.epochs,
            num_minibatches: self.minibatches,
            gamma: self.gamma,
            gae_lambda: self.gae_lambda,
            ent_coef: self.ent_coef[0],
            clip_coef: self.clip_coef[0],
            seed: self.seeds()[0],
            ..PpoConfig::default()
        };
        config.validate()?;
        Ok(config)
    }

    /// The population: one agent per seed, each with its entry of every per-agent list (a
    /// list of one value applies to all).
    pub fn population_config(&self) -> anyhow::Result<PopulationConfig> {
        let seeds = self.seeds();
        let k = seeds.len();
        let per_agent = |flag: &str, len: usize| -> anyhow::Result<()> {
            if len != 1 && len != k {
                anyhow::bail!(
                    "--{flag} takes one value or one per agent ({k} agents), got {len} values"
                );
            }
            Ok(())
        };
        per_agent("learning-rate", self.learning_rate.len())?;
        per_agent("ent-coef", self.ent_coef.len())?;
        per_agent("clip-coef", self.clip_coef.len())?;
        let pick = |i: usize, len: usize| if len == 1 { 0 } else { i };
        let agents = seeds
            .iter()
            .enumerate()
            .map(|(i, &seed)| AgentSettings {
                seed,
                learning_rate: self.learning_rate[pick(i, self.learning_rate.len())],
                ent_coef: self.ent_coef[pick(i, self.ent_coef.len())],
                clip_coef: self.clip_coef[pick(i, self.clip_coef.len())],
            })
            .collect();
        let config = PopulationConfig {
            shared: self.ppo_config()?,
            agents,
        };
        config.validate()?;
        Ok(config)
    }
}

/// `cartfuse train --learner`: what computes the gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LearnerArg {
    /// The device learner on a GPU, the native one elsewhere (resolved before training).
    Auto,
    /// The native batched learner on the CPU (any number of agents).
    Native,
    /// PPO's update on `--device` (wgpu or cuda) as hand-written kernels, one launch a
    /// minibatch step for every agent (any number of agents; hidden layers of at most 256
    /// units).
    #[cfg(feature = "cube")]
    Device,
    /// PPO's update on `--device` as burn tensor ops (burn's fusion over `CubeBackend`), the
    /// agents a batch dimension (any number of agents).
    #[cfg(feature = "cube")]
    DeviceBurn,
    /// burn's NdArray backend on the CPU.
    Ndarray,
    /// burn's Wgpu backend with fusion (any Vulkan/Metal GPU, or lavapipe).
    #[cfg(feature = "wgpu")]
    Wgpu,
    /// burn's Cuda backend with fusion.
    #[cfg(feature = "cuda")]
    Cuda,
}

impl LearnerArg {
    /// Whether it learns populations (the native and the device learner), as opposed to
    /// one of burn's single-agent learners.
    pub fn learns_populations(self) -> bool {
        match self {
            LearnerArg::Native => true,
            #[cfg(feature = "cube")]
            LearnerArg::Device | LearnerArg::DeviceBurn => true,
            _ => false,
        }
    }

    /// Whether it is one of the device learners (their fused rollouts keep the samples on
    /// the device).
    #[cfg(feature = "cube")]
    pub fn learns_on_the_device(self) -> bool {
        matches!(self, LearnerArg::Device | LearnerArg::DeviceBurn)
    }
}

/// `cartfuse train --rollout`: where the policy runs while collecting samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RolloutArg {
    /// `host` on the CPU runtime, the policy fused into the step on a device (resolved
    /// before training).
    Auto,
    /// The learner's forward pass on the host observations, then one env step per rollout
    /// step.
    Host,
    /// The policy fused into the env's step graph under this plan.
    InGraph(Strategy),
    /// burn's policy on the envs' device (`--learner wgpu --device wgpu`, or cuda): actions
    /// and observations stay there, the samples are read back once per update.
    Device,
}

fn parse_rollout(name: &str) -> Result<RolloutArg, String> {
    match name {
        "auto" => Ok(RolloutArg::Auto),
        "host" => Ok(RolloutArg::Host),
        "device" => Ok(RolloutArg::Device),
        plan => parse_strategy(plan)
            .map(RolloutArg::InGraph)
            .map_err(|error| {
                format!(
                    "{error}; or host (the learner's policy, then the env step), device \
                     (burn's policy on the envs' device) or auto"
                )
            }),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::args::{Cli, Command};

    fn train(extra: &[&str]) -> super::TrainArgs {
        let cli = Cli::try_parse_from([&["cartfuse", "train"], extra].concat()).unwrap();
        match cli.command {
            Command::Train(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn agents_and_per_agent_lists_make_the_population() {
        let args = train(&[
            "--agents",
            "3",
            "--seed",
            "10",
            "--learning-rate",
            "1e-3,2e-3,3e-3",
        ]);
        let config = args.population_config().unwrap();
        let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
        assert_eq!(seeds, [10, 11, 12]);
        assert_eq!(config.agents[2].learning_rate, 3e-3);
        assert_eq!(config.agents[2].clip_coef, 0.2);
        let listed = train(&["--seeds", "4,9", "--ent-coef", "0.01"]);
        let config = listed.population_config().unwrap();
        assert!(listed.population());
        assert_eq!(
            config.agents.iter().map(|a| a.seed).collect::<Vec<_>>(),
            [4, 9]
        );
        assert!(config.agents.iter().all(|a| a.ent_coef == 0.01));
        let single = train(&[]);
        assert!(!single.population());
        assert_eq!(single.population_config().unwrap().agents.len(), 1);

        let wrong = train(&["--agents", "3", "--clip-coef", "0.1,0.2"]);
        let err = wrong.population_config().unwrap_err().to_string();
        assert!(
            err.contains("--clip-coef") && err.contains("3 agents"),
            "{err}"
        );
        let negative = train(&["--agents", "2", "--learning-rate", "1e-3,-1"]);
        let err = negative.population_config().unwrap_err().to_string();
        assert!(
            err.contains("learning_rate") && err.contains("agent 1"),
            "{err}"
        );
        let both = ["cartfuse", "train", "--agents", "2", "--seeds", "1,2"];
        assert!(Cli::try_parse_from(both).is_err());
        assert!(Cli::try_parse_from(["cartfuse", "train", "--agents", "0"]).is_err());
    }
}
