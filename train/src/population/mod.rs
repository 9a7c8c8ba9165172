//! A population of PPO agents trained in one run: [`train_population`].
//!
//! `K` independent agents (their own seeds, and their own learning rate, entropy
//! coefficient and clip range: [`AgentSettings`]) step through PPO together: every update
//! collects every active agent's samples from a [`PopulationSource`], then a
//! [`PopulationLearner`] runs the update's epochs and minibatches for all of them at once:
//! the native [`Learner`] on the CPU (one pass per layer over each agent's minibatch, `K`
//! Adam states), or [`crate::tensor_learner::TensorLearner`] on a burn device (agents a
//! batch dimension). An agent that reaches the target stops; the run ends when all have,
//! or at the budget. On a CubeCL device, `crate::device_population` (feature `cube`) keeps the samples there: the fused rollout's trajectory goes straight to the
//! tensor learner.
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
use crate::learner::{Learner, StepSettings};
use crate::ppo::{Solved, UpdateStats};
use crate::rollout::{EpisodeReturns, Rollout};
use crate::streams;

pub use banked::Banked;
pub use config::{AgentSettings, PopulationConfig};
pub use learner::{HostSamples, LossSums, PopulationLearner, UpdateWork};
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

/// What [`UpdateWork`] borrows: one update's schedule of every agent.
pub(crate) struct Schedule {
    pub(crate) active: Vec<bool>,
    settings: Vec<StepSettings>,
    orders: Vec<Vec<Vec<usize>>>,
    minibatches: usize,
}

impl Schedule {
    /// The schedule as a learner takes it.
    pub(crate) fn work(&self) -> UpdateWork<'_> {
        UpdateWork {
            active: &self.active,
            orders: &self.orders,
            settings: &self.settings,
            minibatches: self.minibatches,
        }
    }
}

/// A population's agents and clocks through a run: what every update decides for them
/// (who learns, with which settings, in which order) and records of them (their stats,
/// who reached the target), whatever collects and learns.
pub(crate) struct Agents {
    agents: Vec<Agent>,
    start: Instant,
    pub(crate) rollout_time: Duration,
    pub(crate) learn_time: Duration,
}

impl Agents {
    pub(crate) fn new(config: &PopulationConfig) -> Self {
        Self {
            agents: (0..config.agents.len())
                .map(|i| Agent::new(config.agents[i], config.agent_config(i)))
                .collect(),
            start: Instant::now(),
            rollout_time: Duration::ZERO,
            learn_time: Duration::ZERO,
        }
    }

    /// Which agents learn in the next update; `None` once none does.
    pub(crate) fn learning(&self) -> Option<Vec<bool>> {
        let active: Vec<bool> = self.agents.iter().map(Agent::active).collect();
        active.contains(&true).then_some(active)
    }

    /// The schedule of update `update` of `updates` for the `active` agents: each agent's
    /// settings, and each active agent's sample order of every epoch over its samples.
    pub(crate) fn schedule(
        &mut self,
        (update, updates): (u64, u64),
        active: Vec<bool>,
        shared: &PpoConfig,
    ) -> Schedule {
        let samples = shared.num_envs * shared.num_steps;
        let settings = self
            .agents
            .iter()
            .map(|a| a.step_settings(update, updates))
            .collect();
        let orders = self
            .agents
            .iter_mut()
            .map(|agent| match agent.active() {
                true => agent.epoch_orders(samples, shared.update_epochs),
                false => Vec::new(),
            })
            .collect();
        Schedule {
            active,
            settings,
            orders,
            minibatches: shared.num_minibatches,
        }
    }

    /// Records update `update` of every agent `active` says learnt in it (its episodes in
    /// `returns`, its loss sums in `sums`), calling `progress`; an agent at the target stops.
    pub(crate) fn record(
        &mut self,
        update: u64,
        (active, returns, sums): (&[bool], &[&EpisodeReturns], &[LossSums]),
        shared: &PpoConfig,
        progress: &mut impl FnMut(usize, &UpdateStats),
    ) {
        let minibatches = (shared.update_epochs * shared.num_minibatches) as f32;
        let agents = self.agents.iter_mut().enumerate();
        for (i, agent) in agents.filter(|(i, _)| active[*i]) {
            let returns = returns[i];
            let sums = &sums[i];
            let run = &mut agent.run;
            run.env_steps += (shared.num_steps * shared.num_envs) as u64;
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
                seconds: self.start.elapsed().as_secs_f64(),
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

    pub(crate) fn report(self, config: &PopulationConfig) -> PopulationReport {
        PopulationReport {
            config: config.clone(),
            agents: self.agents.into_iter().map(|a| a.run).collect(),
            seconds: self.start.elapsed().as_secs_f64(),
            rollout_seconds: self.rollout_time.as_secs_f64(),
            learn_seconds: self.learn_time.as_secs_f64(),
        }
    }
}

/// Checks that `source` and `learner` hold `config`'s agents, envs and hidden width.
pub(crate) fn check_counts(
    config: &PopulationConfig,
    (agents, envs): (usize, usize),
    learner: &Learner,
) -> Result<(), TrainError> {
    let shared = &config.shared;
    let k = config.agents.len();
    let counts = [
        ("agents", agents, k),
        ("agents", learner.agents(), k),
        ("num_envs", envs, shared.num_envs),
        ("hidden", learner.shape().hidden, shared.hidden),
    ];
    if let Some((setting, found, expected)) = counts.into_iter().find(|c| c.1 != c.2) {
        return Err(TrainError::InvalidConfig {
            setting,
            reason: format!("the config says {expected}, the source or learner holds {found}"),
        });
    }
    Ok(())
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
    check_counts(
        config,
        (source.agents(), source.envs_per_agent()),
        learner.host(),
    )?;
    let (n, dim) = (shared.num_envs, learner.host().shape().obs_dim);
    let mut agents = Agents::new(config);
    let mut samples: Vec<AgentSamples> = (0..k)
        .map(|_| AgentSamples {
            rollout: Rollout::new(n, dim),
            returns: EpisodeReturns::new(n, shared.return_window),
        })
        .collect();
    let updates = shared.num_updates();
    for update in 0..updates {
        let Some(active) = agents.learning() else {
            break;
        };
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
        agents.rollout_time += collect.elapsed();

        let learn = Instant::now();
        let mut targets = Vec::with_capacity(k);
        for (agent, s) in samples.iter().enumerate() {
            targets.push(active[agent].then(|| {
                let next_values = learner.host().values(agent, source.obs(agent), n);
                s.rollout
                    .advantages(&next_values, shared.gamma, shared.gae_lambda)
            }));
        }
        let schedule = agents.schedule((update, updates), active, shared);
        let host = HostSamples {
            samples: &samples,
            targets: &targets,
        };
        let sums = learner.update(host, &schedule.work())?;
        agents.learn_time += learn.elapsed();
        let returns: Vec<&EpisodeReturns> = samples.iter().map(|s| &s.returns).collect();
        agents.record(
            update,
            (&schedule.active, &returns, &sums),
            shared,
            &mut progress,
        );
    }
    Ok((learner, agents.report(config)))
}
