//! The policy inside the rollout, measured: PPO's sample collection with the policy in burn
//! then the env step, against the policy fused into the env's step graph, over env counts
//! and plans on one device, and the time PPO takes to reach its target on that device.
//!
//! Both sources are timed through the learner's own interface
//! ([`cartfuse_train::collect::Collector`]), so each timed call produces what a PPO update
//! consumes: observations, actions, log-probabilities, values and rewards with the
//! truncation bootstrap, in the learner's layout. The weights are the initial weights of
//! the default PPO model (actor and critic `4 -> 64 -> 64 -> out`, tanh).

use std::sync::Arc;
use std::time::Instant;

use burn::backend::NdArray;
use burn::backend::ndarray::NdArrayDevice;
use burn::tensor::backend::Backend;
use cartfuse_env::policy::PolicySpec;
use cartfuse_env::rollout::PolicyRollout;
use cartfuse_env::{
    AutoresetMode, CartPole, EnvBackend, EnvError, EpisodeOptions, GraphEnv, StepPlan, VecEnv,
};
use cartfuse_fusion::exec::LaunchLedger;
use cartfuse_fusion::plan::Strategy;
use cartfuse_fusion::rng;
use cartfuse_train::collect::{BurnPolicy, Collector, FusedCollector, HostCollector};
use cartfuse_train::ppo::NdArrayLearner;
use cartfuse_train::rollout::{EpisodeReturns, Rollout};
use cartfuse_train::{ActorCritic, PpoConfig, TrainError, train_from, train_fused_from};

use crate::error::Skipped;
use crate::studies::population::{PopulationRun, measure_population};

/// The label of the unfused source: burn's forward pass, then one env step.
pub const HOST_SOURCE: &str = "burn policy + env step";

/// What the policy section measures.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySettings {
    /// Env counts.
    pub sizes: Vec<usize>,
    /// Plans of the fused rollout (each beside the host source).
    pub plans: Vec<Strategy>,
    /// Rollout steps per timed collect (PPO's `num_steps`; a multiple of every fused-xK).
    pub steps: usize,
    /// Timed collects per point (the median is kept).
    pub repeats: usize,
    /// PPO runs to the target: `(rollout source, seed)`; `None` is the host source.
    pub training: Vec<(Option<Strategy>, u64)>,
    /// The env-step budget of each PPO run (and of each agent of the population).
    pub training_budget: u64,
    /// Agents of a population trained together with the native learner, if any.
    pub population: Option<usize>,
    /// Agents of a population trained by the device learner on the fused rollout, if any
    /// (on a device only; not run on a CPU-emulated one).
    pub device_population: Option<usize>,
}

impl PolicySettings {
    /// The full section on the native CPU: five sizes, eager to fused-x10, PPO from five
    /// seeds with each source.
    pub fn full_cpu() -> Self {
        Self {
            sizes: vec![8, 64, 512, 4096, 32_768],
            plans: strategies(&["eager", "xla-default", "fused", "fused-x10"]),
            steps: 20,
            repeats: 5,
            training: [None, Some(FUSED_TRAINING_PLAN)]
                .into_iter()
                .flat_map(|source| (1..=5).map(move |seed| (strategy(source), seed)))
                .collect(),
            training_budget: PpoConfig::default().total_env_steps,
            population: Some(64),
            device_population: None,
        }
    }

    /// The full section on the device (one PPO run per source).
    pub fn full_device() -> Self {
        Self {
            sizes: vec![8, 512, 4096],
            plans: strategies(&["fused", "fused-x10"]),
            steps: 20,
            repeats: 3,
            training: vec![(None, 1), (strategy(Some(FUSED_TRAINING_PLAN)), 1)],
            training_budget: PpoConfig::default().total_env_steps,
            population: None,
            device_population: Some(64),
        }
    }

    /// The default report's section on the native CPU: three sizes, eager to fused-x10, one
    /// PPO run per sample source.
    pub fn default_cpu() -> Self {
        Self {
            sizes: vec![8, 512, 4096],
            plans: strategies(&["eager", "fused", "fused-x10"]),
            repeats: 3,
            training: vec![(None, 1), (strategy(Some(FUSED_TRAINING_PLAN)), 1)],
            ..Self::full_cpu()
        }
    }

    /// The default report's section on the device: two sizes, fused-x10, PPO once with the
    /// policy fused into the rollout.
    pub fn default_device() -> Self {
        Self {
            sizes: vec![8, 4096],
            plans: strategies(&["fused-x10"]),
            training: vec![(strategy(Some(FUSED_TRAINING_PLAN)), 1)],
            ..Self::full_device()
        }
    }

    /// A quick look on the native CPU: two sizes, fused-x10, one PPO run.
    pub fn quick() -> Self {
        Self {
            sizes: vec![8, 4096],
            plans: strategies(&["fused-x10"]),
            steps: 20,
            repeats: 3,
            training: vec![(None, 1)],
            training_budget: PpoConfig::default().total_env_steps,
            population: Some(4),
            device_population: None,
        }
    }

    /// A quick look on the device: the host source at one size.
    pub fn quick_device() -> Self {
        Self {
            sizes: vec![8],
            plans: Vec::new(),
            steps: 20,
            repeats: 3,
            training: Vec::new(),
            training_budget: PpoConfig::default().total_env_steps,
            population: None,
            device_population: None,
        }
    }
}

/// The fused plan PPO trains with (its K divides PPO's 32 steps per update).
const FUSED_TRAINING_PLAN: &str = "fused-x8";

fn strategy(name: Option<&str>) -> Option<Strategy> {
    name.map(|n| n.parse().expect("a known strategy"))
}

fn strategies(names: &[&str]) -> Vec<Strategy> {
    names.iter().filter_map(|n| strategy(Some(n))).collect()
}

/// One measured rollout point.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RolloutPoint {
    /// [`HOST_SOURCE`] or the fused plan's name.
    pub source: String,
    /// Env count.
    pub num_envs: usize,
    /// Env-steps per second of whole collects (median), or why there is none.
    pub env_steps_per_s: Result<f64, Skipped>,
    /// Kernel launches of the env runtime per rollout step (burn NdArray launches none).
    pub launches_per_step: Option<f64>,
}

/// One PPO run to the target.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrainingRun {
    /// [`HOST_SOURCE`] or the fused plan's name.
    pub source: String,
    /// Seed of the run.
    pub seed: u64,
    /// `(env-steps, seconds)` when the target was reached.
    pub solved: Option<(u64, f64)>,
    /// Env-steps the run used.
    pub env_steps: u64,
    /// Mean return of the last finished episodes at the end.
    pub final_mean_return: Option<f64>,
    /// Wall time of the run.
    pub seconds: f64,
    /// Collection env-steps per second over the run.
    pub rollout_env_steps_per_s: f64,
    /// Why the run failed, if it did.
    pub error: Option<String>,
}

impl TrainingRun {
    fn failed(source: Option<Strategy>, seed: u64, reason: &str) -> Self {
        Self {
            source: source_name(source),
            seed,
            solved: None,
            env_steps: 0,
            final_mean_return: None,
            seconds: 0.0,
            rollout_env_steps_per_s: 0.0,
            error: Some(reason.to_string()),
        }
    }
}

/// The policy section on one device.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PolicyStudy {
    /// The device, in words.
    pub device: String,
    /// Rollout steps per collect.
    pub steps: usize,
    /// Every rollout point.
    pub points: Vec<RolloutPoint>,
    /// Every PPO run.
    pub training: Vec<TrainingRun>,
    /// The population run, if one was measured.
    pub population: Option<PopulationRun>,
    /// The PPO target return.
    pub target_return: f64,
}

impl PolicyStudy {
    /// The point of `source` at `num_envs`.
    pub fn point(&self, source: &str, num_envs: usize) -> Option<&RolloutPoint> {
        self.points
            .iter()
            .find(|p| p.source == source && p.num_envs == num_envs)
    }

    /// Env-steps/s of `source` over the host source's at `num_envs`.
    pub fn speedup(&self, source: &str, num_envs: usize) -> Option<f64> {
        let rate = |s: &str| {
            self.point(s, num_envs)?
                .env_steps_per_s
                .as_ref()
                .ok()
                .copied()
        };
        Some(rate(source)? / rate(HOST_SOURCE)?)
    }
}

/// Measurements the section takes (for progress bars).
pub fn policy_tasks(settings: &PolicySettings) -> usize {
    settings.sizes.len() * (settings.plans.len() + 1)
        + settings.training.len()
        + usize::from(settings.population.is_some())
        + usize::from(settings.device_population.is_some())
}

/// The source's label.
pub fn source_name(source: Option<Strategy>) -> String {
    source.map_or_else(|| HOST_SOURCE.to_string(), |s| s.to_string())
}

/// Measures every point and run of `settings` with the envs on `backend`.
pub fn measure_policy<B: EnvBackend>(
    backend: &B,
    settings: &PolicySettings,
    mut progress: impl FnMut(&str),
) -> PolicyStudy {
    let mut points = Vec::new();
    for &n in &settings.sizes {
        let sources = std::iter::once(None).chain(settings.plans.iter().copied().map(Some));
        for source in sources {
            let name = source_name(source);
            progress(&format!("policy rollout {name} at n = {n}"));
            let measured = time_collects(backend, source, n, settings).map_err(|e| e.to_string());
            let (env_steps_per_s, launches_per_step) = match measured {
                Ok((rate, launches)) => (Ok(rate), Some(launches)),
                Err(reason) => (Err(Skipped { reason }), None),
            };
            points.push(RolloutPoint {
                source: name,
                num_envs: n,
                env_steps_per_s,
                launches_per_step,
            });
        }
    }
    let config = PpoConfig::default();
    let training = settings
        .training
        .iter()
        .map(|&(source, seed)| {
            progress(&format!(
                "PPO to the target, {} seed {seed}",
                source_name(source)
            ));
            train_once(backend, source, seed, settings.training_budget)
        })
        .collect();
    let population = settings.population.map(|agents| {
        progress(&format!(
            "a population of {agents} PPO agents to the target"
        ));
        measure_population(backend, agents, settings.training_budget)
    });
    PolicyStudy {
        device: backend.description(),
        steps: settings.steps,
        points,
        training,
        population,
        target_return: config.target_return.unwrap_or(f64::NAN),
    }
}

/// CartPole with the `SameStep` autoreset PPO needs.
fn episode() -> EpisodeOptions {
    EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..EpisodeOptions::default_for::<CartPole>()
    }
}

/// The default PPO model of `config` (its initial weights) on burn's CPU backend `B`.
fn model<B: Backend<Device = NdArrayDevice>>(config: &PpoConfig) -> ActorCritic<B> {
    ActorCritic::new(
        CartPole::OBS_DIM,
        2,
        config.hidden,
        config.seed,
        &NdArrayDevice::default(),
    )
}

/// `n` CartPole envs with the default step plan on `backend`: the host source's envs.
fn host_envs<B: EnvBackend>(backend: &B, n: usize) -> Result<VecEnv<CartPole, B>, EnvError> {
    VecEnv::build(
        backend.clone(),
        CartPole::default(),
        n,
        episode(),
        StepPlan::default(),
    )
}

/// `n` CartPole envs acting under `spec` in one step graph planned with `strategy`.
fn fused_rollout<B: EnvBackend>(
    backend: &B,
    spec: PolicySpec,
    strategy: Strategy,
    n: usize,
) -> Result<PolicyRollout<B>, EnvError> {
    PolicyRollout::new(backend, &CartPole::default(), &episode(), spec, strategy, n)
}

/// Median env-steps/s of `settings.repeats` collects of `settings.steps` steps for `n`
/// envs from `source`, after one untimed collect, and env launches per step.
fn time_collects<B: EnvBackend>(
    backend: &B,
    source: Option<Strategy>,
    n: usize,
    settings: &PolicySettings,
) -> Result<(f64, f64), TrainError> {
    let config = PpoConfig {
        num_envs: n,
        ..PpoConfig::default()
    };
    let policy = model::<NdArray>(&config);
    let key = rng::seed_key(config.seed);
    match source {
        None => {
            let mut env = host_envs(backend, n)?;
            let ledger = env.ledger().clone();
            let mut collector = HostCollector::new(&mut env, config.seed, key)?;
            time_collector(&mut collector, &policy, (n, settings), || {
                ledger.totals().launches
            })
        }
        Some(strategy) => {
            let (spec, _) = policy.rollout_weights()?;
            let mut rollout = fused_rollout(backend, spec, strategy, n)?;
            let ledger = Arc::new(LaunchLedger::new());
            rollout.set_ledger(ledger.clone());
            let mut collector = FusedCollector::new(&mut rollout, config.seed, key)?;
            time_collector(&mut collector, &policy, (n, settings), || {
                ledger.totals().launches
            })
        }
    }
}

fn time_collector<C: Collector<BurnPolicy<NdArray>>>(
    collector: &mut C,
    model: &ActorCritic<NdArray>,
    (n, settings): (usize, &PolicySettings),
    launches: impl Fn() -> u64,
) -> Result<(f64, f64), TrainError> {
    let policy = BurnPolicy {
        model: model.clone(),
        device: NdArrayDevice::default(),
    };
    let config = PpoConfig::default();
    let mut samples = Rollout::new(n, CartPole::OBS_DIM);
    let mut returns = EpisodeReturns::new(n, config.return_window);
    let mut collect = |samples: &mut Rollout| {
        samples.clear();
        collector.collect(
            &policy,
            (settings.steps, config.gamma),
            samples,
            &mut returns,
        )
    };
    collect(&mut samples)?;
    let before = launches();
    let mut seconds = Vec::with_capacity(settings.repeats);
    for _ in 0..settings.repeats.max(1) {
        let start = Instant::now();
        collect(&mut samples)?;
        seconds.push(start.elapsed().as_secs_f64());
    }
    let steps = (settings.steps * seconds.len()) as f64;
    let launches_per_step = (launches() - before) as f64 / steps;
    seconds.sort_by(f64::total_cmp);
    let median = seconds[seconds.len() / 2];
    Ok(((n * settings.steps) as f64 / median, launches_per_step))
}

/// One default PPO run (burn NdArray learner) from `seed` with samples from `source`.
fn train_once<B: EnvBackend>(
    backend: &B,
    source: Option<Strategy>,
    seed: u64,
    budget: u64,
) -> TrainingRun {
    let config = PpoConfig {
        seed,
        total_env_steps: budget,
        ..PpoConfig::default()
    };
    let start = Instant::now();
    let run = || -> Result<_, TrainError> {
        // burn's CPU learner, whose PPO loop the trainer's crate generates (`NDARRAY_LEARN`).
        let model = model::<NdArrayLearner>(&config);
        let device = NdArrayDevice::default();
        let trained = match source {
            None => {
                let mut env = host_envs(backend, config.num_envs)?;
                train_from(&mut env, &config, model, &device, |_| {})?
            }
            Some(strategy) => {
                let (spec, _) = model.rollout_weights()?;
                let mut rollout = fused_rollout(backend, spec, strategy, config.num_envs)?;
                train_fused_from(&mut rollout, &config, model, &device, |_| {})?
            }
        };
        Ok(trained.report)
    };
    match run() {
        Ok(report) => TrainingRun {
            source: source_name(source),
            seed,
            solved: report.solved.map(|s| (s.env_steps, s.seconds)),
            env_steps: report.env_steps,
            final_mean_return: report.final_mean_return,
            seconds: report.seconds,
            rollout_env_steps_per_s: report.rollout_env_steps_per_s,
            error: None,
        },
        Err(error) => TrainingRun {
            seconds: start.elapsed().as_secs_f64(),
            ..TrainingRun::failed(source, seed, &error.to_string())
        },
    }
}

#[cfg(test)]
mod tests;
