//! What a population run reports: each agent's run ([`AgentRun`]), the population's
//! timings ([`PopulationReport`]) and the one-object summary `cartfuse train --agents --json`
//! prints ([`PopulationSummary`]).

use crate::ppo::{Solved, TrainReport, UpdateStats};

use super::config::{AgentSettings, PopulationConfig};

/// One agent's run within a population.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AgentRun {
    /// Its own settings.
    pub settings: AgentSettings,
    /// When its mean return first reached the target (`None`: not within the budget);
    /// the agent stopped learning then.
    pub solved: Option<Solved>,
    /// Env-steps it stepped.
    pub env_steps: u64,
    /// Episodes it finished.
    pub episodes: u64,
    /// Mean return of its last `return_window` finished episodes at the end.
    pub final_mean_return: Option<f64>,
    /// One entry per update it made.
    pub history: Vec<UpdateStats>,
}

/// The outcome of a population run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PopulationReport {
    /// The settings.
    pub config: PopulationConfig,
    /// One entry per agent, in the config's order.
    pub agents: Vec<AgentRun>,
    /// Wall time of the run.
    pub seconds: f64,
    /// Time spent collecting rollouts (policy forward passes and env steps), all agents.
    pub rollout_seconds: f64,
    /// Time spent learning (advantages, gradient steps, Adam), all agents.
    pub learn_seconds: f64,
}

/// The summary `cartfuse train --agents K --json` prints.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PopulationSummary {
    /// Agents trained.
    pub agents: usize,
    /// Agents whose mean return reached the target.
    pub reached_target: usize,
    /// Wall time of the whole run.
    pub seconds_total: f64,
    /// Per agent: wall time from the start to its target (`null`: not reached).
    pub seconds_to_target: Vec<Option<f64>>,
    /// Per agent: its env-steps to its target (`null`: not reached).
    pub env_steps_to_target: Vec<Option<u64>>,
    /// Per agent: its seed.
    pub seeds: Vec<u64>,
    /// Per agent: its learning rate, entropy coefficient and clip range.
    pub settings: Vec<AgentSettings>,
    /// Per agent: the mean return of its last finished episodes at the end.
    pub final_mean_returns: Vec<Option<f64>>,
    /// Env-steps of all agents together.
    pub env_steps: u64,
    /// Time spent collecting, all agents.
    pub rollout_seconds: f64,
    /// Time spent learning, all agents.
    pub learn_seconds: f64,
}

impl PopulationReport {
    /// Agents whose mean return reached the target.
    pub fn reached_target(&self) -> usize {
        self.agents.iter().filter(|a| a.solved.is_some()).count()
    }

    /// Env-steps of all agents together.
    pub fn env_steps(&self) -> u64 {
        self.agents.iter().map(|a| a.env_steps).sum()
    }

    /// The one-object summary.
    pub fn summary(&self) -> PopulationSummary {
        let per = |f: &dyn Fn(&AgentRun) -> Option<f64>| self.agents.iter().map(f).collect();
        PopulationSummary {
            agents: self.agents.len(),
            reached_target: self.reached_target(),
            seconds_total: self.seconds,
            seconds_to_target: per(&|a| a.solved.as_ref().map(|s| s.seconds)),
            env_steps_to_target: self
                .agents
                .iter()
                .map(|a| a.solved.as_ref().map(|s| s.env_steps))
                .collect(),
            seeds: self.agents.iter().map(|a| a.settings.seed).collect(),
            settings: self.agents.iter().map(|a| a.settings).collect(),
            final_mean_returns: per(&|a| a.final_mean_return),
            env_steps: self.env_steps(),
            rollout_seconds: self.rollout_seconds,
            learn_seconds: self.learn_seconds,
        }
    }

    /// Agent `agent`'s run as a single run's report: its settings, its record, and the
    /// population's timings (all of them, for one agent alone).
    pub fn agent_report(&self, agent: usize) -> TrainReport {
        let run = &self.agents[agent];
        let per_s = |seconds: f64| self.env_steps() as f64 / seconds.max(1e-12);
        TrainReport {
            config: self.config.agent_config(agent),
            solved: run.solved.clone(),
            env_steps: run.env_steps,
            episodes: run.episodes,
            final_mean_return: run.final_mean_return,
            seconds: self.seconds,
            rollout_seconds: self.rollout_seconds,
            learn_seconds: self.learn_seconds,
            rollout_env_steps_per_s: per_s(self.rollout_seconds),
            learn_env_steps_per_s: per_s(self.learn_seconds),
            history: run.history.clone(),
        }
    }
}
