//! A population of PPO agents trained in one run: [`train_population`].
//!
//! `K` independent agents (their own seeds, and their own learning rate, entropy
//! coefficient and clip range: [`AgentSettings`]) step through PPO together: every update
//! collects every active agent's samples from a [`PopulationSource`], then a
//! [`PopulationLearner`] runs the update's epochs and minibatches for all of them at once:
//! the native [`Learner`] on the CPU (one pass per layer over each agent's minibatch, `K`
//! Adam states), or [`crate::tensor_learner::TensorLearner`] on a burn device (agents a
//! batch dimension). An agent that reaches the target stops; the run ends when all have,
//! or at the budget.
//!
//! Agent `i` in a population follows the history it follows alone (a population of one):
//! its weights, envs, action draws and minibatch order come from its seed alone
//! ([`crate::streams`]), and the learner never mixes agents.

pub mod banked;
pub mod config;
pub mod learner;
pub mod report;
pub mod run;
pub mod source;

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use crate::config::PpoConfig;
use crate::error::TrainError;
use crate::learner::StepSettings;
use crate::ppo::{Solved, UpdateStats};
use crate::rollout::{EpisodeReturns, Rollout};
use crate::streams;

pub use banked::Banked;
pub use config::{AgentSettings, PopulationConfig};
pub use learner::{LossSums, PopulationLearner, UpdateWork};
pub use report::{AgentRun, PopulationReport, PopulationSummary};
pub use run::{Rollouts, train_population_on};
pub use source::{AgentSamples, PerAgent, PopulationSource};

/// One agent's state between updates.
struct Agent {
    config: PpoConfig,
    shuffle: StdRng,
    order: Vec<usize>,
    run: AgentRun,
}

impl Agent {
    fn new(settings: AgentSettings, config: PpoConfig) -> Self {
        Self {
            shuffle: streams::shuffle_rng(config.seed),
            config,
            order: Vec::new(),
            run: AgentRun {
                settings,
                solved: None,
                env_steps: 0,
                episodes: 0,
                final_mean_return: None,
                history: Vec::new(),
            },
        }
    }

    fn active(&self) -> bool {
        self.run.solved.is_none()
    }

    /// The learning rate of update `update` of `updates` (annealed linearly when asked).
    fn step_settings(&self, update: u64, updates: u64) -> StepSettings {
        let c = &self.config;
        let lr = if c.anneal_lr {
            c.learning_rate * (1.0 - update as f64 / updates as f64)
        } else {
            c.learning_rate
        };
        StepSettings {
            learning_rate: lr as f32,
            clip_coef: c.clip_coef,
            ent_coef: c.ent_coef,
            vf_coef: c.vf_coef,
            max_grad_norm: c.max_grad_norm,
        }
    }

    /// The sample order of each of `epochs` epochs over `samples` samples: one shuffle of
    /// the previous epoch's order each (the first of `0..samples`).
    fn epoch_orders(&mut self, samples: usize, epochs: usize) -> Vec<Vec<usize>> {
        self.order.clear();
        self.order.extend(0..samples);
        (0..epochs)
            .map(|_| {
                self.order.shuffle(&mut self.shuffle);
                self.order.clone()
            })
            .collect()
    }
}

/// Trains the agents of `learner` (one per entry of `config.agents`, in that order) on the
/// samples of `source`, calling `progress(agent, stats)` after each agent's every update.
/// Returns the trained learner and the report.
pub fn train_population<S: PopulationSource, L: PopulationLearner>(
    source: &mut S,
    config: &PopulationConfig,
    mut learner: L,
    mut progress: impl FnMut(usize, &UpdateStats),
) -> Result<(L, PopulationReport), TrainError> {
    config.validate()?;
    let shared = &config.shared;
    let k = config.agents.len();
    let counts = [
        ("agents", source.agents(), k),
        ("agents", learner.host().agents(), k),
        ("num_envs", source.envs_per_agent(), shared.num_envs),
        ("hidden", learner.host().shape().hidden, shared.hidden),
    ];
    if let Some((setting, found, expected)) = counts.into_iter().find(|c| c.1 != c.2) {
        return Err(TrainError::InvalidConfig {
            setting,
            reason: format!("the config says {expected}, the source or learner holds {found}"),
        });
    }
    let start = Instant::now();
    let (n, dim) = (shared.num_envs, learner.host().shape().obs_dim);
    let mut agents: Vec<Agent> = (0..k)
        .map(|i| Agent::new(config.agents[i], config.agent_config(i)))
        .collect();
    let mut samples: Vec<AgentSamples> = (0..k)
        .map(|_| AgentSamples {
            rollout: Rollout::new(n, dim),
            returns: EpisodeReturns::new(n, shared.return_window),
        })
        .collect();
    let (mut rollout_time, mut learn_time) = (Duration::ZERO, Duration::ZERO);
    let updates = shared.num_updates();
    for update in 0..updates {
        let active: Vec<bool> = agents.iter().map(Agent::active).collect();
        if !active.contains(&true) {
            break;
        }
        let collect = Instant::now();
        for (s, _) in samples.iter_mut().zip(&active).filter(|(_, a)| **a) {
            s.rollout.clear();
        }
        source.collect(
            learner.host(),
            &active,
            (shared.num_steps, shared.gamma),
            &mut samples,
        )?;
        rollout_time += collect.elapsed();

        let learn = Instant::now();
        let mut targets = Vec::with_capacity(k);
        for (agent, s) in samples.iter().enumerate() {
            targets.push(active[agent].then(|| {
                let next_values = learner.host().values(agent, source.obs(agent), n);
                s.rollout
                    .advantages(&next_values, shared.gamma, shared.gae_lambda)
            }));
        }
        let settings: Vec<StepSettings> = agents
            .iter()
            .map(|a| a.step_settings(update, updates))
            .collect();
        let orders: Vec<Vec<Vec<usize>>> = agents
            .iter_mut()
            .map(|agent| match agent.active() {
                true => agent.epoch_orders(n * shared.num_steps, shared.update_epochs),
                false => Vec::new(),
            })
            .collect();
        let sums = learner.update(&UpdateWork {
            samples: &samples,
            targets: &targets,
            orders: &orders,
            settings: &settings,
            minibatches: shared.num_minibatches,
        })?;
        learn_time += learn.elapsed();

        let minibatches = (shared.update_epochs * shared.num_minibatches) as f32;
        for (i, agent) in agents.iter_mut().enumerate().filter(|(i, _)| active[*i]) {
            let returns = &samples[i].returns;
            let sums = &sums[i];
            let run = &mut agent.run;
            run.env_steps += (shared.num_steps * n) as u64;
            run.episodes = returns.finished();
            run.final_mean_return = returns.mean();
            let stats = UpdateStats {
                update: update + 1,
                env_steps: run.env_steps,
                mean_return: returns.mean(),
                episodes: returns.finished(),
                policy_loss: sums[0] / minibatches,
                value_loss: sums[1] / minibatches,
                entropy: sums[2] / minibatches,
                seconds: start.elapsed().as_secs_f64(),
            };
            progress(i, &stats);
            if let (Some(target), Some(mean)) = (shared.target_return, returns.mean())
                && returns.full()
                && mean >= target
            {
                run.solved = Some(Solved {
                    env_steps: run.env_steps,
                    seconds: stats.seconds,
                });
            }
            run.history.push(stats);
        }
    }
    let report = PopulationReport {
        config: config.clone(),
        agents: agents.into_iter().map(|a| a.run).collect(),
        seconds: start.elapsed().as_secs_f64(),
        rollout_seconds: rollout_time.as_secs_f64(),
        learn_seconds: learn_time.as_secs_f64(),
    };
    Ok((learner, report))
}
