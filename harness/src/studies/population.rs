//! A population of PPO agents trained together, measured for the policy section: how many
//! reach the target, the wall time of the whole population (collecting and learning
//! apart), and the median agent's time and env-steps to the target. The native learner
//! on host rollouts ([`measure_population`]), or any [`PopulationLearner`] on any
//! rollouts ([`measure_population_with`]: the device learner on the fused rollout).

use std::time::Instant;

use cartfuse_env::{AutoresetMode, CartPole, EnvBackend, EpisodeOptions, GraphEnv, StepPlan};
use cartfuse_train::learner::{Learner, NetShape};
use cartfuse_train::population::{
    PopulationConfig, PopulationLearner, PopulationReport, Rollouts, train_population_on,
};
use cartfuse_train::{PpoConfig, TrainError};

/// The label of the population's samples and learner.
pub const POPULATION_SOURCE: &str = "native policy + env step, native learner";

/// The device learner's population: its samples and learner.
pub const DEVICE_POPULATION_SOURCE: &str =
    "policy fused into the step (fused-x8), device learner (hand-written kernels)";

/// One population run to the target.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PopulationRun {
    /// Where the samples came from and what learnt.
    pub source: String,
    /// Agents, seeded `1..=agents`.
    pub agents: usize,
    /// Agents that reached the target.
    pub reached_target: usize,
    /// Wall time of the whole run (to the last agent's target, or the budget).
    pub seconds: f64,
    /// The median agent's wall time to its target (over those that reached it).
    pub median_seconds_to_target: Option<f64>,
    /// The median agent's env-steps to its target.
    pub median_env_steps_to_target: Option<u64>,
    /// The median agent's final mean return.
    pub median_final_mean_return: Option<f64>,
    /// Env-steps of all agents together.
    pub env_steps: u64,
    /// Env-steps per second of the whole run (collection and learning).
    pub env_steps_per_s: f64,
    /// Seconds spent collecting samples.
    pub rollout_seconds: f64,
    /// Seconds spent learning (GAE, the updates).
    pub learn_seconds: f64,
    /// Why the run failed, if it did.
    pub error: Option<String>,
}

/// The median of `values` (the upper one of an even count), `None` when empty.
fn median<T: Copy + PartialOrd>(mut values: Vec<T>) -> Option<T> {
    values.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    values.get(values.len() / 2).copied()
}

/// `agents` default PPO agents seeded `1..=agents`, each with its own 8 envs on `backend`,
/// trained together (host policy, native learner) until each reaches the target or spends
/// `budget` env-steps.
pub fn measure_population<B: EnvBackend>(backend: &B, agents: usize, budget: u64) -> PopulationRun {
    let host = Rollouts::Host(StepPlan::default());
    measure_population_with(backend, agents, budget, (POPULATION_SOURCE, host, |l| l))
}

/// [`measure_population`] with the samples of `rollouts` and the learner `learner` makes of
/// the agents' first weights, labelled `source`.
pub fn measure_population_with<B: EnvBackend, L: PopulationLearner>(
    backend: &B,
    agents: usize,
    budget: u64,
    (source, rollouts, learner): (&str, Rollouts, impl FnOnce(Learner) -> L),
) -> PopulationRun {
    measure_population_by(source, agents, budget, |config, episode, first| {
        let env = CartPole::default();
        let trained = learner(first);
        train_population_on(backend, &env, episode, rollouts, config, trained, |_, _| {})
            .map(|(_, report)| report)
    })
}

/// `agents` default PPO agents seeded `1..=agents` with `budget` env-steps each, trained by
/// `train` (from the config, CartPole's `SameStep` episode settings and the agents' first
/// weights), labelled `source`.
pub fn measure_population_by(
    source: &str,
    agents: usize,
    budget: u64,
    train: impl FnOnce(
        &PopulationConfig,
        &EpisodeOptions,
        Learner,
    ) -> Result<PopulationReport, TrainError>,
) -> PopulationRun {
    let shared = PpoConfig {
        total_env_steps: budget,
        ..PpoConfig::default()
    };
    let config = PopulationConfig::uniform(shared, agents);
    let seeds: Vec<u64> = config.agents.iter().map(|a| a.seed).collect();
    let shape = NetShape::new(CartPole::OBS_DIM, config.shared.hidden, 2);
    let episode = EpisodeOptions {
        autoreset: AutoresetMode::SameStep,
        ..EpisodeOptions::default_for::<CartPole>()
    };
    let start = Instant::now();
    let trained = train(&config, &episode, Learner::from_seeds(shape, &seeds));
    match trained {
        Ok(report) => {
            let solved: Vec<_> = report
                .agents
                .iter()
                .filter_map(|a| a.solved.clone())
                .collect();
            PopulationRun {
                source: source.into(),
                agents,
                reached_target: solved.len(),
                seconds: report.seconds,
                median_seconds_to_target: median(solved.iter().map(|s| s.seconds).collect()),
                median_env_steps_to_target: median(solved.iter().map(|s| s.env_steps).collect()),
                median_final_mean_return: median(
                    report
                        .agents
                        .iter()
                        .filter_map(|a| a.final_mean_return)
                        .collect(),
                ),
                env_steps: report.env_steps(),
                env_steps_per_s: report.env_steps() as f64 / report.seconds.max(1e-12),
                rollout_seconds: report.rollout_seconds,
                learn_seconds: report.learn_seconds,
                error: None,
            }
        }
        Err(error) => PopulationRun {
            seconds: start.elapsed().as_secs_f64(),
            ..PopulationRun::failed(source, agents, error.to_string())
        },
    }
}

impl PopulationRun {
    /// A run of `agents` agents from `source` that did not happen, and why.
    pub fn failed(source: &str, agents: usize, why: String) -> Self {
        Self {
            source: source.into(),
            agents,
            reached_target: 0,
            seconds: 0.0,
            median_seconds_to_target: None,
            median_env_steps_to_target: None,
            median_final_mean_return: None,
            env_steps: 0,
            env_steps_per_s: 0.0,
            rollout_seconds: 0.0,
            learn_seconds: 0.0,
            error: Some(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cartfuse_fusion::cpu::Cpu;

    #[test]
    fn a_small_population_is_measured() {
        // Two agents, 4 updates: no target reached, every env-step counted.
        let run = measure_population(&Cpu::default(), 2, 4 * 256);
        assert_eq!(run.error, None);
        assert_eq!((run.agents, run.reached_target), (2, 0));
        assert_eq!(run.env_steps, 2 * 4 * 256);
        assert!(run.env_steps_per_s > 0.0 && run.median_seconds_to_target.is_none());
        assert!(run.median_final_mean_return.is_some());
        assert_eq!(median(vec![3, 1, 2, 5]), Some(3));
    }
}
